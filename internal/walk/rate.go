package walk

import (
	"context"
	"io"

	"golang.org/x/time/rate"
)

// NewLimiter caps the bytes per second of all the transfers whose bodies
// RateReader wraps with it together; nil for a rate of 0 or less (no
// cap). Its burst is an eighth of a second's bytes, at most 64 KiB.
func NewLimiter(bytesPerSecond float64) *rate.Limiter {
	if bytesPerSecond <= 0 {
		return nil
	}
	burst := int(min(max(bytesPerSecond/8, 1), 64<<10))
	return rate.NewLimiter(rate.Limit(bytesPerSecond), burst)
}

// RateReader reads r no faster than l allows: each read is at most a
// burst and waits for its tokens (ctx ends the wait). A nil l is r.
func RateReader(ctx context.Context, r io.Reader, l *rate.Limiter) io.Reader {
	if l == nil {
		return r
	}
	return &rateReader{ctx: ctx, r: r, l: l}
}

type rateReader struct {
	ctx context.Context
	r   io.Reader
	l   *rate.Limiter
}

func (r *rateReader) Read(p []byte) (int, error) {
	if b := r.l.Burst(); len(p) > b {
		p = p[:b]
	}
	n, err := r.r.Read(p)
	if n > 0 {
		if werr := r.l.WaitN(r.ctx, n); werr != nil && err == nil {
			err = werr
		}
	}
	return n, err
}
