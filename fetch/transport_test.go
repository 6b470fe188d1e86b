package fetch_test

import (
	"errors"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver/faults"
	"github.com/urlderef/deref/internal/testserver/ftpd"
	"github.com/urlderef/deref/internal/testserver/gopherd"
	"github.com/urlderef/deref/internal/testserver/nntpd"
	"github.com/urlderef/deref/internal/testserver/telnetd"
	"github.com/urlderef/deref/internal/testserver/waisd"
)

// startOrFail starts a test server and stops it when the test ends.
func startOrFail(t *testing.T, start func() error, stop func() error) {
	t.Helper()
	if err := start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop() })
}

// serveFTP serves root through ftpd until the test ends.
func serveFTP(t testing.TB, root string) *ftpd.Server {
	t.Helper()
	s, err := ftpd.Start(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// httpClient is net/http's own client, with deref's transport registered
// for the schemes net/http does not speak.
func httpClient(c *fetch.Client) *nethttp.Client {
	t := &nethttp.Transport{}
	rt := fetch.NewTransport(c)
	for _, s := range []string{"ftp", "gopher", "news", "nntp", "wais", "file", "telnet"} {
		t.RegisterProtocol(s, rt)
	}
	return &nethttp.Client{Transport: t}
}

type exchange struct {
	method, url, rangeHeader string
	status                   int
	body                     string // the whole body; "~x" for a body holding x
	header                   map[string]string
}

// TestTransport runs net/http's client against every scheme's
// in-process server through NewTransport.
func TestTransport(t *testing.T) {
	when := time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, "pub"), 0o755)
	os.WriteFile(filepath.Join(root, "pub", "hello.txt"), []byte("hello, world\n"), 0o644)
	os.WriteFile(filepath.Join(root, "pub", "data.bin"), []byte("0123456789"), 0o644)
	for _, n := range []string{"hello.txt", "data.bin"} {
		os.Chtimes(filepath.Join(root, "pub", n), when, when)
	}

	fs := serveFTP(t, root)
	gs := &gopherd.Server{Root: root}
	startOrFail(t, gs.Start, gs.Close)
	ns := nntpd.New()
	ns.AddGroup("local.test", "")
	ns.Post("local.test", "<a1@test>", []string{"From: A <a@test>", "Subject: first"}, "Hello.\n")
	startOrFail(t, ns.Start, ns.Close)
	ws := waisd.New()
	startOrFail(t, ws.Start, ws.Close)
	ts := &telnetd.Server{}
	startOrFail(t, ts.Start, ts.Close)
	hs := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.URL.Path != "/here" {
			nethttp.NotFound(w, r)
			return
		}
		nethttp.ServeContent(w, r, "here.txt", when, strings.NewReader("over HTTP\n"))
	}))
	t.Cleanup(hs.Close)

	c := newClient()
	c.NNTP.Server = ns.Addr()
	hc := httpClient(c)
	fileURL := "file://" + filepath.ToSlash(root)
	if !strings.HasPrefix(fileURL, "file:///") {
		fileURL = "file:///" + strings.TrimPrefix(fileURL, "file://") // C:/...
	}
	lm := when.Format(nethttp.TimeFormat)
	for _, x := range []exchange{
		{"GET", fileURL + "/pub/hello.txt", "", 200, "hello, world\n", map[string]string{"Content-Length": "13", "Last-Modified": lm, "Content-Type": "text/plain"}},
		{"GET", fileURL + "/pub/data.bin", "bytes=4-", 206, "456789", map[string]string{"Content-Range": "bytes 4-9/10", "Content-Length": "6"}},
		{"GET", fileURL + "/pub/data.bin", "bytes=10-", 416, "~past the end", map[string]string{"Content-Range": "bytes */10"}},
		{"GET", fileURL + "/pub/data.bin", "bytes=2-5", 206, "2345", map[string]string{"Content-Range": "bytes 2-5/10", "Content-Length": "4"}},
		{"GET", fileURL + "/pub/data.bin", "bytes=-3", 206, "789", map[string]string{"Content-Range": "bytes 7-9/10", "Content-Length": "3"}},
		{"GET", fileURL + "/pub/data.bin", "bytes=0-1,4-5", 200, "0123456789", nil}, // several ranges: the whole object
		{"GET", fileURL + "/pub/none.txt", "", 404, "~none.txt", nil},
		{"GET", fileURL + "/pub/", "", 200, "~file\t10\t2021-03-04T05:06:07Z\tdata.bin\t", map[string]string{"Content-Type": "text/tab-separated-values; charset=utf-8"}},
		{"HEAD", fileURL + "/pub/hello.txt", "", 200, "", map[string]string{"Content-Length": "13"}},
		{"POST", fileURL + "/pub/hello.txt", "", 405, "~only GET and HEAD", map[string]string{"Allow": "GET, HEAD"}},

		{"GET", fs.URL() + "pub/hello.txt", "", 200, "hello, world\n", map[string]string{"Last-Modified": lm}}, // text: sent in ASCII mode, whose size is not known
		{"GET", fs.URL() + "pub/data.bin", "", 200, "0123456789", map[string]string{"Content-Length": "10", "Last-Modified": lm}},
		{"GET", fs.URL() + "pub/data.bin", "bytes=7-", 206, "789", map[string]string{"Content-Range": "bytes 7-9/10"}},
		{"GET", fs.URL() + "pub/data.bin", "bytes=1-2", 206, "12", map[string]string{"Content-Range": "bytes 1-2/10", "Content-Length": "2"}},
		{"GET", fs.URL() + "pub/data.bin", "bytes=-4", 206, "6789", map[string]string{"Content-Range": "bytes 6-9/10"}},
		{"GET", fs.URL() + "pub/missing.bin", "", 404, "~missing.bin", nil},
		{"GET", fs.URL() + "pub/", "", 200, "~file\t13\t2021-03-04T05:06:07Z\thello.txt\t" + fs.URL() + "pub/hello.txt", map[string]string{"Content-Type": "text/tab-separated-values; charset=utf-8"}},
		{"HEAD", fs.URL() + "pub/data.bin", "", 200, "", map[string]string{"Content-Length": "10"}},

		{"GET", "gopher://" + gs.Addr() + "/0/pub/hello.txt", "", 200, "hello, world\n", nil},
		// Gopher cannot resume, nor does it give a length: the bytes
		// before the range are skipped, and the range read ahead.
		{"GET", "gopher://" + gs.Addr() + "/9/pub/data.bin", "bytes=4-", 206, "456789", map[string]string{"Content-Range": "bytes 4-9/10", "Content-Length": "6"}},
		{"GET", "gopher://" + gs.Addr() + "/9/pub/data.bin", "bytes=1-2", 206, "12", map[string]string{"Content-Range": "bytes 1-2/*", "Content-Length": "2"}},
		{"GET", "gopher://" + gs.Addr() + "/9/pub/data.bin", "bytes=5-100", 206, "56789", map[string]string{"Content-Range": "bytes 5-9/10"}},
		{"GET", "gopher://" + gs.Addr() + "/9/pub/data.bin", "bytes=-3", 206, "789", map[string]string{"Content-Range": "bytes 7-9/10"}},
		{"GET", "gopher://" + gs.Addr() + "/9/pub/data.bin", "bytes=10-", 416, "~past the end", map[string]string{"Content-Range": "bytes */10"}},
		{"GET", "gopher://" + gs.Addr() + "/9/pub/data.bin", "bytes=0-", 200, "0123456789", nil},
		{"GET", "gopher://" + gs.Addr() + "/0/pub/none.txt", "", 404, "~does not exist", nil},
		{"GET", "gopher://" + gs.Addr() + "/1/pub", "", 200, "~file\t-\t-\thello.txt\tgopher://" + gs.Addr() + "/0/pub/hello.txt", nil},

		{"GET", "nntp://" + ns.Addr() + "/local.test/1", "", 200, "~\r\n\r\nHello.\r\n", map[string]string{"Content-Type": "message/rfc822"}},
		{"GET", "news:a1@test", "", 200, "~Subject: first", nil},
		{"GET", "news:none@test", "", 404, "~none@test", nil},
		{"GET", "news:local.test", "", 200, "~\tfirst\tnews:a1@test\n", nil},

		{"GET", "wais://" + ws.Addr() + alphaPath, "", 200, waisd.Alpha, nil},
		{"GET", "wais://" + ws.Addr() + "/test?gophers", "", 200, "~file\t", nil},

		{"GET", "telnet://" + ts.Addr() + "/", "", 501, "~an interactive session, not an object", nil},

		{"GET", hs.URL + "/here", "", 200, "over HTTP\n", map[string]string{"Last-Modified": lm}},
		{"GET", hs.URL + "/here", "bytes=5-", 206, "HTTP\n", map[string]string{"Content-Range": "bytes 5-9/10"}},
		{"GET", hs.URL + "/here", "bytes=1-3", 206, "ver", map[string]string{"Content-Range": "bytes 1-3/10", "Content-Length": "3"}},
		{"GET", hs.URL + "/here", "bytes=-2", 206, "P\n", map[string]string{"Content-Range": "bytes 8-9/10"}},
		{"GET", hs.URL + "/gone", "", 404, "~404 Not Found", nil},
	} {
		name := x.method + " " + x.url + " " + x.rangeHeader
		req, err := nethttp.NewRequest(x.method, x.url, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if x.rangeHeader != "" {
			req.Header.Set("Range", x.rangeHeader)
		}
		do := hc.Do
		if strings.HasPrefix(x.url, "http:") {
			do = (&nethttp.Client{Transport: fetch.NewTransport(c)}).Do
		}
		resp, err := do(req)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Errorf("%s: body: %v", name, err)
		}
		if resp.StatusCode != x.status {
			t.Errorf("%s: status %d, want %d (%q)", name, resp.StatusCode, x.status, b)
		}
		if want, ok := strings.CutPrefix(x.body, "~"); ok {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s: body %q lacks %q", name, b, want)
			}
		} else if string(b) != x.body {
			t.Errorf("%s: body %q, want %q", name, b, x.body)
		}
		for k, v := range x.header {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("%s: %s: %q, want %q", name, k, got, v)
			}
		}
	}
}

// When no server answers, RoundTrip returns the *fetch.Error, which
// errors.As finds through http.Client's *url.Error.
func TestTransportNoAnswer(t *testing.T) {
	hc := httpClient(newClient())
	for _, u := range []string{
		"ftp://127.0.0.1:1/pub/x",     // refused
		"gopher://127.0.0.1:1/0/x",    // refused
		"ftp://bad%0Aname@127.0.0.1/", // a decoded LF in the user
	} {
		_, err := hc.Get(u)
		var fe *fetch.Error
		var ue *neturl.Error
		if !errors.As(err, &ue) || !errors.As(err, &fe) {
			t.Errorf("%s: %T %v, want a *fetch.Error inside a *url.Error", u, err, err)
		}
	}
}

// Closing a body early ends the transfer at once, even when the server
// has gone silent in the middle of it (with an idle time-out far away):
// the connection is released, not read to its end.
func TestTransportCloseEarly(t *testing.T) {
	srv, err := faults.FTP.Start(faults.StallMidBody)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c := newClient()
	c.IdleTimeout = time.Minute
	resp, err := httpClient(c).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 3)); err != nil { // of the 5 it sends before going silent
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() { resp.Body.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for a stalled transfer")
	}
}

// TestTransportIfRange: a range goes only with an If-Range that is the
// object's Last-Modified exactly (or its strong entity tag); any other,
// or an object without a date, gets the whole object with 200.
func TestTransportIfRange(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "data.bin")
	os.WriteFile(p, []byte("0123456789"), 0o644)
	when := time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)
	os.Chtimes(p, when, when)
	c := fetch.NewClient()
	c.NetrcFile = ""
	hc := httpClient(c)
	fileURL := "file://" + filepath.ToSlash(p)
	if !strings.HasPrefix(fileURL, "file:///") {
		fileURL = "file:///" + strings.TrimPrefix(fileURL, "file://")
	}
	for _, tc := range []struct {
		ifRange string
		status  int
		body    string
	}{
		{when.Format(nethttp.TimeFormat), 206, "456789"},
		{when.Add(time.Second).Format(nethttp.TimeFormat), 200, "0123456789"},
		{when.Add(-time.Hour).Format(nethttp.TimeFormat), 200, "0123456789"},
		{`"some-tag"`, 200, "0123456789"},
	} {
		req, _ := nethttp.NewRequest("GET", fileURL, nil)
		req.Header.Set("Range", "bytes=4-")
		req.Header.Set("If-Range", tc.ifRange)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || string(b) != tc.body {
			t.Errorf("If-Range %q: %d %q, want %d %q", tc.ifRange, resp.StatusCode, b, tc.status, tc.body)
		}
	}
}
