package fetch

import (
	"context"
	"time"

	"github.com/urlderef/deref/url"
)

// ModTimesPass is an exchange of Client.ModTimes for one folder that runs
// beside the folder's transfers (NewModTimesPass, then Run), so that they
// need not wait for it before they start.
type ModTimesPass struct {
	c     *Client
	u     *url.URL
	names []string
	done  chan struct{}
	times map[string]time.Time // set before done is closed; nil when the exchange failed
}

// NewModTimesPass prepares the exchange of ModTimes(ctx, u, names); Run
// carries it out.
func (c *Client) NewModTimesPass(u *url.URL, names []string) *ModTimesPass {
	return &ModTimesPass{c: c, u: u, names: names, done: make(chan struct{})}
}

// Run carries out the exchange, on a connection of its own, and ends it.
// It is called once.
func (p *ModTimesPass) Run(ctx context.Context) {
	defer close(p.done)
	if times, err := p.c.ModTimes(ctx, p.u, p.names); err == nil {
		p.times = times
	}
}

// Done is closed when the exchange has ended.
func (p *ModTimesPass) Done() <-chan struct{} { return p.done }

// Known gives name's time without waiting: ended is false while the
// exchange runs, and ok says whether it gave name a time.
func (p *ModTimesPass) Known(name string) (t time.Time, ok, ended bool) {
	select {
	case <-p.done:
		t, ok = p.times[name]
		return t, ok, true
	default:
		return time.Time{}, false, false
	}
}

// Wait waits for the exchange and gives name's time; ok is false where
// the server has none. Where the exchange failed as a whole (a dropped
// connection, say), name's time is asked for on its own. The error is
// ctx's, when it ends first.
func (p *ModTimesPass) Wait(ctx context.Context, name string) (t time.Time, ok bool, err error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return time.Time{}, false, ctx.Err()
	}
	if p.times != nil {
		t, ok = p.times[name]
		return t, ok, nil
	}
	one, err := p.c.ModTimes(ctx, p.u, []string{name})
	if err != nil {
		return time.Time{}, false, ctx.Err()
	}
	t, ok = one[name]
	return t, ok, nil
}
