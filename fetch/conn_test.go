package fetch_test

import (
	"context"
	"errors"
	"io"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
)

// countingServer starts an HTTP server that counts the connections made
// to it.
func countingServer(t *testing.T, h nethttp.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	conns := new(atomic.Int32)
	s := httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(c net.Conn, st nethttp.ConnState) {
		if st == nethttp.StateNew {
			conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s, conns
}

// TestKeepAlive checks that consecutive plain-http requests share one
// connection, and that a kept connection the server has closed is
// replaced without an error.
func TestKeepAlive(t *testing.T) {
	s, conns := countingServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		io.WriteString(w, "ok")
	})
	c := newClient()
	get := func() {
		t.Helper()
		resp, err := c.Get(context.Background(), s.URL+"/x")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != "ok" {
			t.Fatalf("body %q, %v", b, err)
		}
	}
	for range 3 {
		get()
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("3 requests used %d connections, want 1", n)
	}
	s.CloseClientConnections()
	time.Sleep(50 * time.Millisecond)
	get()
	if n := conns.Load(); n != 2 {
		t.Errorf("after the server closed the idle connection: %d connections, want 2", n)
	}
}

// TestKeepAliveAfterLargeBody checks that a connection that carried a
// large body (read with a raised receive low-water mark) serves the next
// request, and that a trickling large body is read as it comes rather
// than held back until the idle time-out.
func TestKeepAliveAfterLargeBody(t *testing.T) {
	large := strings.Repeat("0123456789abcdef", 5<<20/16)
	s, conns := countingServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		switch r.URL.Path {
		case "/large":
			w.Header().Set("Content-Length", strconv.Itoa(len(large)))
			io.WriteString(w, large)
		case "/trickle":
			w.Header().Set("Content-Length", strconv.Itoa(len(large)+2048))
			io.WriteString(w, large[:4<<20])
			w.(nethttp.Flusher).Flush()
			for i := range 8 { // 2 KiB over 0.8 s
				time.Sleep(100 * time.Millisecond)
				io.WriteString(w, large[i*256:(i+1)*256])
				w.(nethttp.Flusher).Flush()
			}
			io.WriteString(w, large[4<<20:])
		default:
			io.WriteString(w, "small")
		}
	})
	c := newClient()
	c.IdleTimeout = 500 * time.Millisecond
	get := func(path string) string {
		t.Helper()
		b, err := body(t, c, s.URL+path) // Read: the raised mark's path
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return b
	}
	if got := get("/large"); got != large {
		t.Fatalf("/large: %d bytes, want %d", len(got), len(large))
	}
	if got := get("/small"); got != "small" {
		t.Fatalf("/small after /large: %q", got)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("2 requests used %d connections, want 1", n)
	}
	if got := get("/trickle"); len(got) != len(large)+2048 || got[:4<<20] != large[:4<<20] || got[4<<20+2048:] != large[4<<20:] {
		t.Fatalf("/trickle: %d bytes, want %d", len(got), len(large)+2048)
	}
}

// TestKeptConnectionStall: on a kept-alive connection, a server slow to
// send the response head ends the request at the idle time-out, not at
// the connect time-out plus it.
func TestKeptConnectionStall(t *testing.T) {
	s, conns := countingServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
			}
		}
		io.WriteString(w, "ok")
	})
	c := newClient()
	c.IdleTimeout = 300 * time.Millisecond
	resp, err := c.Get(context.Background(), s.URL+"/fast")
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	began := time.Now()
	_, err = c.Get(context.Background(), s.URL+"/slow")
	if !errors.Is(err, fetch.ErrTimeout) {
		t.Errorf("slow head on the kept connection: %v", err)
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("ended after %v", d)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want the kept one", n)
	}
}

func TestChunkedBody(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		for i := range 3 {
			io.WriteString(w, strings.Repeat(string(rune('a'+i)), 5000))
			w.(nethttp.Flusher).Flush()
		}
	}))
	defer s.Close()
	dir := t.TempDir()
	p, err := newClient().Download(context.Background(), s.URL+"/chunked", dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != strings.Repeat("a", 5000)+strings.Repeat("b", 5000)+strings.Repeat("c", 5000) {
		t.Errorf("chunked body of %d bytes is wrong", len(b))
	}
}

// TestDownloadStall checks the spliced path: a server that stops sending
// ends the download with a time-out, and nothing lands under the name.
func TestDownloadStall(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Content-Length", "10000000")
		w.Write(make([]byte, 100000))
		w.(nethttp.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer s.Close()
	c := newClient()
	c.IdleTimeout = 300 * time.Millisecond
	dir := t.TempDir()
	_, err := c.Download(context.Background(), s.URL+"/stall.bin", dir)
	if !errors.Is(err, fetch.ErrTimeout) {
		t.Errorf("stalled download: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "stall.bin")); !os.IsNotExist(err) {
		t.Errorf("stalled download left the final name: %v", err)
	}
	// Cancelling ends a spliced download promptly too.
	c.IdleTimeout = -1
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	done := make(chan error, 1)
	go func() { _, err := c.Download(ctx, s.URL+"/stall.bin", dir); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled download: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelling did not end the download")
	}
}

// TestLowSpeed: a server trickling a byte now and then, which the idle
// time-out never ends, is ended by LowSpeedLimit after LowSpeedTime, by
// Get and by Download; a transfer at speed is not.
func TestLowSpeed(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.URL.Path == "/fast.bin" {
			w.Write(make([]byte, 1<<20))
			return
		}
		w.Header().Set("Content-Length", "1000")
		for range 1000 {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(nethttp.Flusher).Flush()
			select {
			case <-time.After(100 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
	}))
	defer s.Close()
	c := newClient()
	c.IdleTimeout = 10 * time.Second
	c.LowSpeedLimit, c.LowSpeedTime = 1000, time.Second
	resp, err := c.Get(context.Background(), s.URL+"/trickle.bin")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, fetch.ErrTimeout) || !strings.Contains(err.Error(), "fewer than 1000 bytes a second for 1s") {
		t.Errorf("Get of a trickle: %v", err)
	}
	dir := t.TempDir()
	if _, err := c.Download(context.Background(), s.URL+"/trickle.bin", dir); !errors.Is(err, fetch.ErrTimeout) {
		t.Errorf("Download of a trickle: %v", err)
	}
	if _, err := c.Download(context.Background(), s.URL+"/fast.bin", dir); err != nil {
		t.Errorf("a transfer at speed: %v", err)
	}
}
