package fetch

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"slices"
	"time"

	"github.com/urlderef/deref/protocols/http"
)

// HTTPStatus returns the status code of an HTTP reply err reports (a 404,
// a 503), or 0 when err is not one.
func HTTPStatus(err error) int {
	var se *http.StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// Temporary says whether err is worth another attempt: a temporary reply
// (FTP 4xx, HTTP 429 and 5xx), a time-out, a network failure or an object
// that ended early. A cancelled context and a local write error are not,
// nor, as curl and wget have it, a host name the DNS says does not exist
// or a connection refused (nothing listens there: see [Refused] and
// Retry.Refused).
func Temporary(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, ErrWrite) || Refused(err) || unknownHost(err) {
		return false
	}
	return errors.Is(err, ErrTemporary) || errors.Is(err, ErrTimeout) ||
		errors.Is(err, ErrNetwork) || errors.Is(err, ErrShortBody)
}

// Refused says whether err is a connection the host refused: no server
// listened on the port (ECONNREFUSED).
func Refused(err error) bool {
	return errors.Is(err, errConnRefused)
}

// unknownHost says whether err is a host name the DNS answered does not
// exist, which another attempt would not change; a DNS time-out or a
// failing server is a network failure that may pass.
func unknownHost(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de) && de.IsNotFound
}

// Retry is the policy for trying a retrieval again after a temporary
// failure: up to Attempts more times, waiting Wait at first and twice as
// long each time after, up to a minute, or longer when the server asked
// for it (Retry-After). A Wait given is waited exactly, as curl's
// --retry-delay is; with Wait 0 the first wait is one second and each is
// drawn between all and a quarter more of its length (jitter, so that
// clients that failed together do not come back together), never less; no attempt starts after MaxTime from the
// first (0: no bound). Refused makes a refused connection worth another
// attempt too (curl's and wget's --retry-connrefused): a server being
// restarted refuses for a moment. AllErrors makes every failure worth
// another attempt (curl's --retry-all-errors: a 404 while a site is
// being deployed), but a cancelled context, a local write error, a bad
// URL and an object no newer than asked for.
type Retry struct {
	Attempts  int
	Wait      time.Duration
	MaxTime   time.Duration
	Refused   bool
	AllErrors bool
	// Statuses are HTTP status codes tried again as temporary failures
	// are, besides 408, 429 and 5xx (wget's --retry-on-http-error): a 404
	// of a file that is still being published, say.
	Statuses []int
}

// worthAgain says whether the policy tries again after err.
func (r Retry) worthAgain(err error) bool {
	switch {
	case Temporary(err), r.Refused && Refused(err):
		return true
	case len(r.Statuses) > 0 && slices.Contains(r.Statuses, HTTPStatus(err)):
		return true
	case !r.AllErrors, errors.Is(err, context.Canceled), errors.Is(err, ErrWrite), errors.Is(err, ErrBadURL), errors.Is(err, ErrNotModified), errors.Is(err, ErrExists):
		return false
	}
	return true
}

// Do runs op, and again while it fails with a temporary error and the
// policy allows; before each new attempt it calls before (when set) with
// the error and the wait. It returns op's last error.
func (r Retry) Do(ctx context.Context, op func() error, before func(err error, wait time.Duration)) error {
	wait, jitter := r.Wait, false
	if wait <= 0 {
		wait, jitter = time.Second, true
	}
	start := time.Now()
	for attempt := 0; ; attempt++ {
		err := op()
		if err == nil || attempt >= r.Attempts || !r.worthAgain(err) || ctx.Err() != nil {
			return err
		}
		d := wait
		if jitter {
			d += rand.N(wait/4 + 1)
		}
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
