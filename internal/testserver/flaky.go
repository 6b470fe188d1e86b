package testserver

import (
	nethttp "net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Flaky is an HTTP handler that fails as a busy server does: its first
// Unavailable requests get 503 with Retry-After: 0, the next one half of
// Body before the connection drops, and the rest Body (ranges honoured).
// It records each request's Range header.
type Flaky struct {
	Unavailable int
	Body        string

	mu     sync.Mutex
	n      int
	ranges []string
}

// ServeHTTP answers one request.
func (f *Flaky) ServeHTTP(w nethttp.ResponseWriter, r *nethttp.Request) {
	f.mu.Lock()
	f.n++
	n := f.n
	f.ranges = append(f.ranges, r.Header.Get("Range"))
	f.mu.Unlock()
	switch {
	case n <= f.Unavailable:
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(nethttp.StatusServiceUnavailable)
	case n == f.Unavailable+1:
		w.Header().Set("Content-Length", strconv.Itoa(len(f.Body)))
		w.Write([]byte(f.Body[:len(f.Body)/2]))
		w.(nethttp.Flusher).Flush()
		conn, _, _ := w.(nethttp.Hijacker).Hijack()
		conn.Close()
	default:
		nethttp.ServeContent(w, r, "o", time.Time{}, strings.NewReader(f.Body))
	}
}

// Ranges returns the Range header of each request so far.
func (f *Flaky) Ranges() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ranges...)
}
