package fetch_test

import (
	"context"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver"
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
