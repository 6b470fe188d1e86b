package gateway

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// init sets up what Options ask of every request, past their defaults.
func (g *gateway) init() {
	if g.o.MaxUpstream <= 0 {
		g.o.MaxUpstream = 256
	}
	g.upstream = make(chan struct{}, g.o.MaxUpstream)
	if g.o.Rate > 0 {
		g.rate = &buckets{rate: g.o.Rate, burst: float64(max(g.o.Burst, int(g.o.Rate), 1)), m: map[string]*bucket{}}
	}
}

// clientOf is the address a request came from, without its port.
func clientOf(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// buckets are the token buckets of the client addresses: each fills at
// rate tokens a second up to burst, and a request takes one.
type buckets struct {
	rate, burst float64
	mu          sync.Mutex
	m           map[string]*bucket
	swept       time.Time
}

type bucket struct {
	tokens float64
	at     time.Time
}

// take takes a token of client's bucket at now; when there is none, it
// says how long until there is one. A nil *buckets takes every request.
func (b *buckets) take(client string, now time.Time) (time.Duration, bool) {
	if b == nil {
		return 0, true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sweep(now)
	k := b.m[client]
	if k == nil {
		k = &bucket{tokens: b.burst, at: now}
		b.m[client] = k
	}
	k.tokens = min(b.burst, k.tokens+now.Sub(k.at).Seconds()*b.rate)
	k.at = now
	if k.tokens < 1 {
		return time.Duration((1 - k.tokens) / b.rate * float64(time.Second)), false
	}
	k.tokens--
	return 0, true
}

// sweep drops, at most once a minute, the buckets that have filled up
// again: a client gone leaves nothing behind.
func (b *buckets) sweep(now time.Time) {
	if now.Sub(b.swept) < time.Minute {
		return
	}
	b.swept = now
	for c, k := range b.m {
		if k.tokens+now.Sub(k.at).Seconds()*b.rate >= b.burst {
			delete(b.m, c)
		}
	}
}
