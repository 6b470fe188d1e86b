package fetch_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// TestTracePerCall: FetchOptions.Trace receives one retrieval's
// conversation, and Client.Trace still gets it too.
func TestTracePerCall(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) { w.Write([]byte("ok")) }))
	defer s.Close()
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	var all, own []string
	c.Trace = func(u *url.URL, ev fetch.TraceEvent) { all = append(all, ev.Text) }
	u, _ := url.Parse(s.URL + "/x")
	resp, err := c.FetchWith(context.Background(), u, fetch.FetchOptions{Trace: func(ev fetch.TraceEvent) { own = append(own, ev.Text) }})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(own) == 0 || strings.Join(own, "\n") != strings.Join(all, "\n") || !strings.Contains(strings.Join(own, "\n"), "GET /x HTTP/1.1") {
		t.Errorf("own trace %q, client's %q", own, all)
	}
}

// TestClientRetry: with Client.Retry, a retrieval that fails for a while
// (503 twice) succeeds, and a download dropped mid-body continues its part
// with a range instead of starting over.
func TestClientRetry(t *testing.T) {
	flaky := &testserver.Flaky{Unavailable: 2, Body: "0123456789"}
	s := httptest.NewServer(flaky)
	defer s.Close()
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	c.Retry = &fetch.Retry{Attempts: 3, Wait: time.Millisecond}
	dir := t.TempDir()
	path, err := c.DownloadWith(context.Background(), s.URL+"/o", dir, fetch.DownloadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "0123456789" {
		t.Errorf("file %q", b)
	}
	if ranges := flaky.Ranges(); len(ranges) != 4 || ranges[3] != "bytes=5-" {
		t.Errorf("requests' ranges %q: want the last to continue from byte 5", ranges)
	}
}

// TestRetryRefused: a connection refused is not tried again, as curl and
// wget have it, unless Retry.Refused says so (their --retry-connrefused);
// either way the error is a network failure that Refused recognises.
func TestRetryRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	for _, refused := range []bool{false, true} {
		c := fetch.NewClient()
		c.NetrcFile = ""
		c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
		c.Retry = &fetch.Retry{Attempts: 2, Wait: time.Millisecond, Refused: refused}
		dials := 0
		c.Trace = func(u *url.URL, ev fetch.TraceEvent) {
			if strings.HasPrefix(ev.Text, "connecting to") {
				dials++
			}
		}
		u, _ := url.Parse("http://" + addr + "/x")
		_, err := c.Fetch(context.Background(), u, 0)
		if !fetch.Refused(err) || !errors.Is(err, fetch.ErrNetwork) || fetch.Temporary(err) {
			t.Errorf("Refused %t: error %v: want a refused connection, a network failure, not temporary", refused, err)
		}
		if want := map[bool]int{false: 1, true: 3}[refused]; dials != want {
			t.Errorf("Refused %t: %d connections tried, want %d", refused, dials, want)
		}
	}
}

// TestTemporaryDNS: a host name the DNS says does not exist is not worth
// another attempt; a DNS server that does not answer in time is.
func TestTemporaryDNS(t *testing.T) {
	dial := func(de *net.DNSError) error {
		return protocols.NetError(&net.OpError{Op: "dial", Net: "tcp", Err: de})
	}
	if err := dial(&net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}); fetch.Temporary(err) {
		t.Errorf("%v: temporary, want not", err)
	}
	if err := dial(&net.DNSError{Err: "i/o timeout", Name: "x.example", IsTimeout: true, IsTemporary: true}); !fetch.Temporary(err) {
		t.Errorf("%v: not temporary, want temporary", err)
	}
	if err := dial(&net.DNSError{Err: "server misbehaving", Name: "x.example", IsTemporary: true}); !fetch.Temporary(err) {
		t.Errorf("%v: not temporary, want temporary", err)
	}
}

// TestDownloadsToOneFile: two downloads at once to one file name (deref
// --parallel 2 -O a/x b/x) leave one of the two objects whole under the
// name, not a mix, and neither fails; they wrote one NAME.part at once.
// The same holds when one names the folder through a link to it.
func TestDownloadsToOneFile(t *testing.T) {
	for _, linked := range []bool{false, true} {
		downloadsToOneFile(t, linked)
	}
}

func downloadsToOneFile(t *testing.T, linked bool) {
	objects := map[string][]byte{"/a/x": bytes.Repeat([]byte("a"), 1<<20), "/b/x": bytes.Repeat([]byte("b"), 1<<20)}
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		body := objects[r.URL.Path]
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		for len(body) > 0 { // in pieces, so that the two interleave
			n := min(len(body), 64<<10)
			w.Write(body[:n])
			w.(nethttp.Flusher).Flush()
			body = body[n:]
			time.Sleep(time.Millisecond)
		}
	}))
	defer s.Close()
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	dir := t.TempDir()
	dirs := map[string]string{"/a/x": dir, "/b/x": dir}
	if linked {
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(dir, link); err != nil {
			t.Skipf("no link to a folder here: %v", err)
		}
		dirs["/b/x"] = link
	}
	errs := make(chan error, 2)
	for _, p := range []string{"/a/x", "/b/x"} {
		go func() {
			_, err := c.DownloadWith(context.Background(), s.URL+p, dirs[p], fetch.DownloadOptions{})
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, "x"))
	if err != nil || !bytes.Equal(got, objects["/a/x"]) && !bytes.Equal(got, objects["/b/x"]) {
		t.Errorf("linked %v: x: %d bytes, neither object whole (%v)", linked, len(got), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.part")); err == nil {
		t.Error("x.part left behind")
	}
}

// TestRetryAllErrors: Retry.AllErrors tries again after a 404 (a site
// being deployed) until it is found, and never after a write error or a
// bad URL; without it a 404 is final.
func TestRetryAllErrors(t *testing.T) {
	var asked atomic.Int32
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if asked.Add(1) < 3 {
			nethttp.NotFound(w, r)
			return
		}
		io.WriteString(w, "deployed")
	}))
	t.Cleanup(s.Close)
	c := newClient()
	get := func() error {
		resp, err := c.Get(context.Background(), s.URL+"/x")
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := (fetch.Retry{Attempts: 3, Wait: time.Millisecond}).Do(context.Background(), get, nil); !errors.Is(err, fetch.ErrNotFound) || asked.Load() != 1 {
		t.Errorf("without AllErrors: %v, %d asked", err, asked.Load())
	}
	asked.Store(0)
	if err := (fetch.Retry{Attempts: 3, Wait: time.Millisecond, AllErrors: true}).Do(context.Background(), get, nil); err != nil || asked.Load() != 3 {
		t.Errorf("AllErrors: %v, %d asked", err, asked.Load())
	}
	for _, final := range []error{fetch.WriteError(errors.New("disk full")), fmt.Errorf("%w: no host", fetch.ErrBadURL)} {
		n := 0
		err := (fetch.Retry{Attempts: 3, Wait: time.Millisecond, AllErrors: true}).Do(context.Background(), func() error { n++; return final }, nil)
		if err != final || n != 1 {
			t.Errorf("%v: tried %d times", final, n)
		}
	}
}
