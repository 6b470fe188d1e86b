package fetch

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Temporary says whether err is worth another attempt: a temporary reply
// (FTP 4xx, HTTP 429 and 5xx), a time-out, a network failure or an object
// that ended early. A cancelled context and a local write error are not.
func Temporary(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, ErrWrite) {
		return false
	}
	return errors.Is(err, ErrTemporary) || errors.Is(err, ErrTimeout) ||
		errors.Is(err, ErrNetwork) || errors.Is(err, ErrShortBody)
}

// Retry is the policy for trying a retrieval again after a temporary
// failure: up to Attempts more times, waiting Wait at first (one second
// when 0) and twice as long each time after, up to a minute, each wait
// drawn between half and all of that (jitter), or longer when the server
// asked for it (Retry-After); no attempt starts after MaxTime from the
// first (0: no bound).
type Retry struct {
	Attempts int
	Wait     time.Duration
	MaxTime  time.Duration
}

// Do runs op, and again while it fails with a temporary error and the
// policy allows; before each new attempt it calls before (when set) with
// the error and the wait. It returns op's last error.
func (r Retry) Do(ctx context.Context, op func() error, before func(err error, wait time.Duration)) error {
	wait := r.Wait
	if wait <= 0 {
		wait = time.Second
	}
	start := time.Now()
	for attempt := 0; ; attempt++ {
		err := op()
		if err == nil || attempt >= r.Attempts || !Temporary(err) || ctx.Err() != nil {
			return err
		}
		d := wait/2 + rand.N(wait/2+1)
		var ra interface{ RetryAfter() time.Duration }
		if errors.As(err, &ra) && ra.RetryAfter() > d {
			d = ra.RetryAfter()
		}
		if r.MaxTime > 0 && time.Since(start)+d > r.MaxTime {
			return err
		}
		if before != nil {
			before(err, d)
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		wait = min(wait*2, time.Minute)
	}
}
