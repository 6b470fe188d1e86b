package fetch_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	nethttp "net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver/socks5"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

var modTime = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

// newClient returns a client that reads no netrc file and uses no proxy
// from the environment.
func newClient() *fetch.Client {
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	return c
}

// recorder remembers the request URIs a server saw.
type recorder struct {
	mu   sync.Mutex
	uris []string
	auth []string
}

func (r *recorder) add(req *nethttp.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.uris = append(r.uris, req.RequestURI)
	r.auth = append(r.auth, req.Header.Get("Authorization"))
}

func (r *recorder) last() (string, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.uris) == 0 {
		return "", ""
	}
	return r.uris[len(r.uris)-1], r.auth[len(r.auth)-1]
}

func newServer(t *testing.T, rec *recorder) *httptest.Server {
	t.Helper()
	content := []byte("0123456789abcdefghij")
	mux := nethttp.NewServeMux()
	mux.HandleFunc("/", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		rec.add(r)
		nethttp.ServeContent(w, r, "data.txt", modTime, bytes.NewReader(content))
	})
	mux.HandleFunc("/missing", func(w nethttp.ResponseWriter, r *nethttp.Request) { nethttp.NotFound(w, r) })
	mux.HandleFunc("/forbidden", func(w nethttp.ResponseWriter, r *nethttp.Request) { w.WriteHeader(403) })
	mux.HandleFunc("/auth", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		rec.add(r)
		if u, p, ok := r.BasicAuth(); !ok || u != "joe" || p != "s3cret" {
			w.WriteHeader(401)
			return
		}
		io.WriteString(w, "welcome")
	})
	mux.HandleFunc("/busy", func(w nethttp.ResponseWriter, r *nethttp.Request) { w.WriteHeader(503) })
	mux.HandleFunc("/redirect/", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		var n int
		fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/redirect/"), "%d", &n)
		if n == 0 {
			io.WriteString(w, "arrived")
			return
		}
		nethttp.Redirect(w, r, fmt.Sprintf("/redirect/%d", n-1), nethttp.StatusFound)
	})
	mux.HandleFunc("/loop", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		nethttp.Redirect(w, r, "/loop2", nethttp.StatusMovedPermanently)
	})
	mux.HandleFunc("/loop2", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		nethttp.Redirect(w, r, "/loop", nethttp.StatusMovedPermanently)
	})
	mux.HandleFunc("/to", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Location", r.URL.Query().Get("u"))
		w.WriteHeader(302)
	})
	mux.HandleFunc("/short", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		conn, bw, _ := w.(nethttp.Hijacker).Hijack()
		bw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
		bw.WriteString(strings.Repeat("x", 100))
		bw.Flush()
		conn.Close()
	})
	mux.HandleFunc("/stall", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write([]byte(strings.Repeat("x", 10)))
		w.(nethttp.Flusher).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("/big", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Content-Length", "1048576")
		w.Write(make([]byte, 1<<20))
	})
	mux.HandleFunc("/bigchunked", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.(nethttp.Flusher).Flush() // chunked: no length announced
		w.Write(make([]byte, 1<<20))
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func TestHTTPGet(t *testing.T) {
	rec := &recorder{}
	s := newServer(t, rec)
	c := newClient()
	resp, err := c.Get(context.Background(), s.URL+"/dir/data.txt?q=1#frag")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || string(body) != "0123456789abcdefghij" {
		t.Fatalf("body %q, %v", body, err)
	}
	if err := resp.Body.Close(); err != nil {
		t.Fatal(err)
	}
	if resp.Size != 20 || resp.MediaType != "text/plain" || !resp.ModTime.Equal(modTime) || resp.Name != "data.txt" || resp.Kind != fetch.KindFile {
		t.Errorf("metadata: %+v", resp)
	}
	if uri, _ := rec.last(); uri != "/dir/data.txt?q=1" {
		t.Errorf("server saw %q; the path and search are sent, the fragment never", uri)
	}
	// %2F stays encoded on the wire.
	resp, err = c.Get(context.Background(), s.URL+"/a%2Fb")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if uri, _ := rec.last(); uri != "/a%2Fb" {
		t.Errorf("server saw %q, want /a%%2Fb", uri)
	}
}

func TestHTTPStatusErrors(t *testing.T) {
	s := newServer(t, &recorder{})
	c := newClient()
	tests := []struct {
		path string
		want error
		code int
	}{
		{"/missing", fetch.ErrNotFound, 4},
		{"/forbidden", fetch.ErrPermission, 5},
		{"/auth", fetch.ErrAuth, 5},
		{"/busy", fetch.ErrTemporary, 6},
	}
	for _, tt := range tests {
		_, err := c.Get(context.Background(), s.URL+tt.path)
		if !errors.Is(err, tt.want) || fetch.ExitCode(err) != tt.code {
			t.Errorf("%s: %v (exit %d), want %v (exit %d)", tt.path, err, fetch.ExitCode(err), tt.want, tt.code)
		}
		var fe *fetch.Error
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), s.URL+tt.path) {
			t.Errorf("%s: error does not name the URL: %v", tt.path, err)
		}
	}
}

func TestHTTPCredentials(t *testing.T) {
	rec := &recorder{}
	s := newServer(t, rec)
	c := newClient()
	var trace bytes.Buffer
	c.Trace = func(u *url.URL, ev fetch.TraceEvent) { fmt.Fprintln(&trace, ev.Text) }
	u := strings.Replace(s.URL, "http://", "http://joe:s3cret@", 1) + "/auth"
	resp, err := c.Get(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "welcome" {
		t.Errorf("body %q", b)
	}
	if strings.Contains(trace.String(), "s3cret") || !strings.Contains(trace.String(), "Authorization: xxxxx") {
		t.Errorf("trace leaks or lacks the redacted credentials:\n%s", trace.String())
	}
	// A wrong password names the URL with the password hidden.
	_, err = c.Get(context.Background(), strings.Replace(u, "s3cret", "wrong", 1))
	if !errors.Is(err, fetch.ErrAuth) || strings.Contains(err.Error(), "wrong") {
		t.Errorf("wrong password: %v", err)
	}

	// Credentials from a netrc file.
	dir := t.TempDir()
	rc := filepath.Join(dir, "netrc")
	os.WriteFile(rc, []byte("machine 127.0.0.1 login joe password s3cret\n"), 0o600)
	c.NetrcFile = rc
	resp, err = c.Get(context.Background(), s.URL+"/auth")
	if err != nil {
		t.Fatalf("netrc: %v", err)
	}
	resp.Body.Close()
	// A netrc file that others can read is refused.
	os.Chmod(rc, 0o644)
	if _, err = c.Get(context.Background(), s.URL+"/auth"); !errors.Is(err, fetch.ErrAuth) || !strings.Contains(err.Error(), "others can read") {
		t.Errorf("readable netrc: %v", err)
	}
	// The file is read again when it changes.
	os.Chmod(rc, 0o600)
	os.WriteFile(rc, []byte("machine 127.0.0.1 login joe password wrong\n"), 0o600)
	if _, err = c.Get(context.Background(), s.URL+"/auth"); !errors.Is(err, fetch.ErrAuth) {
		t.Errorf("changed netrc: %v", err)
	}
}

func TestRedirects(t *testing.T) {
	s := newServer(t, &recorder{})
	c := newClient()
	var hops []string
	resp, err := c.FetchWith(context.Background(), url.MustParse(s.URL+"/redirect/10"), fetch.FetchOptions{Redirect: func(from, to *url.URL) {
		hops = append(hops, from.Path+">"+to.Path)
	}})
	if err != nil {
		t.Fatalf("10 redirects are followed: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "arrived" {
		t.Errorf("body %q", b)
	}
	if len(hops) != 10 || hops[0] != "/redirect/10>/redirect/9" || hops[9] != "/redirect/1>/redirect/0" {
		t.Errorf("FetchOptions.Redirect was given %q", hops)
	}
	for _, tt := range []struct{ path, want string }{
		{"/redirect/11", "more than 10 redirects"},
		{"/loop", "loop"},
		{"/to?u=file:///etc/passwd", "never leads to file:"},
		{"/to?u=gopher://127.0.0.1/1", "to scheme gopher"},
		{"/to?u=http://h/%25zz", "bad Location"},
	} {
		_, err := c.Get(context.Background(), s.URL+tt.path)
		if !errors.Is(err, fetch.ErrProtocol) || !strings.Contains(err.Error(), tt.want) || fetch.ExitCode(err) != 7 {
			t.Errorf("%s: %v, want a protocol error saying %q", tt.path, err, tt.want)
		}
	}
	// An opt-in scheme is followed to its fetcher.
	c.RedirectSchemes = []string{"gopher"}
	_, err = c.Get(context.Background(), s.URL+"/to?u=gopher://127.0.0.1/1")
	if errors.Is(err, fetch.ErrRedirect) || !errors.Is(err, fetch.ErrNetwork) {
		t.Errorf("an allowed gopher redirect reaches the gopher fetcher (and finds no server): %v", err)
	}
}

// TestRedirectHeaders: Header's Authorization and Cookie go to the site
// asked for and to a redirect within it, never to another site (a
// redirect to another port), as curl has it since CVE-2022-27776; other
// fields go everywhere.
func TestRedirectHeaders(t *testing.T) {
	var mu sync.Mutex
	got := map[string]nethttp.Header{}
	record := func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		got[r.Host+r.URL.Path] = r.Header.Clone()
		mu.Unlock()
	}
	other := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		record(w, r)
		io.WriteString(w, "elsewhere")
	}))
	t.Cleanup(other.Close)
	site := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		record(w, r)
		switch r.URL.Path {
		case "/within":
			nethttp.Redirect(w, r, "/here", nethttp.StatusFound)
		case "/away":
			nethttp.Redirect(w, r, other.URL+"/there", nethttp.StatusFound)
		default:
			io.WriteString(w, "here")
		}
	}))
	t.Cleanup(site.Close)
	c := newClient()
	c.Header = [][2]string{{"Authorization", "Bearer tok"}, {"cookie", "sid=1"}, {"X-Other", "kept"}}
	for _, path := range []string{"/within", "/away"} {
		resp, err := c.Get(context.Background(), site.URL+path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	host := func(raw string) string { return strings.TrimPrefix(raw, "http://") }
	for at, want := range map[string]bool{host(site.URL) + "/within": true, host(site.URL) + "/here": true, host(site.URL) + "/away": true, host(other.URL) + "/there": false} {
		h := got[at]
		if h == nil {
			t.Fatalf("%s was not asked", at)
		}
		if (h.Get("Authorization") == "Bearer tok") != want || (h.Get("Cookie") == "sid=1") != want || h.Get("X-Other") != "kept" {
			t.Errorf("%s got %v; credentials wanted: %t", at, h, want)
		}
	}
	if len(c.Header) != 3 {
		t.Errorf("Client.Header changed: %q", c.Header)
	}
}

func TestRedirectDowngrade(t *testing.T) {
	plain := newServer(t, &recorder{})
	tlsSrv := httptest.NewTLSServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		nethttp.Redirect(w, r, plain.URL+"/x", nethttp.StatusFound)
	}))
	defer tlsSrv.Close()
	c := newClient()
	// Verified by default: the test server's certificate is not trusted.
	if _, err := c.Get(context.Background(), tlsSrv.URL); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted certificate accepted: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(tlsSrv.Certificate())
	c.TLSConfig = &tls.Config{RootCAs: pool}
	if _, err := c.Get(context.Background(), tlsSrv.URL); !errors.Is(err, fetch.ErrRedirect) || !strings.Contains(err.Error(), "https to http") {
		t.Errorf("https to http: %v", err)
	}
	c.AllowDowngrade = true
	resp, err := c.Get(context.Background(), tlsSrv.URL)
	if err != nil {
		t.Fatalf("allowed downgrade: %v", err)
	}
	resp.Body.Close()
}

func TestResume(t *testing.T) {
	s := newServer(t, &recorder{})
	c := newClient()
	u := url.MustParse(s.URL + "/data.txt")
	resp, err := c.Fetch(context.Background(), u, 15)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "fghij" || resp.Offset != 15 || resp.Size != 5 {
		t.Errorf("resume: %q offset %d size %d", b, resp.Offset, resp.Size)
	}
	// At the end: nothing to fetch, no error.
	resp, err = c.Fetch(context.Background(), u, 20)
	if err != nil {
		t.Fatalf("resume at the end: %v", err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(b) != 0 {
		t.Errorf("resume at the end gave %q", b)
	}
	if _, err = c.Fetch(context.Background(), u, 25); !errors.Is(err, fetch.ErrRangeNotSatisfied) {
		t.Errorf("resume beyond the end: %v", err)
	}
}

// TestByteRange: FetchOptions.Length ends the body (and Size) after
// Length bytes from Offset: over HTTP with a Range that names its last
// byte, over file: by reading no further.
func TestByteRange(t *testing.T) {
	s := newServer(t, &recorder{})
	c := newClient()
	dir := t.TempDir()
	name := filepath.Join(dir, "data.txt")
	os.WriteFile(name, []byte("0123456789abcdefghij"), 0o644) // as the server's
	for _, raw := range []string{s.URL + "/data.txt", fileURL(name)} {
		for _, tt := range []struct {
			offset, length, size int64
			want                 string
		}{{0, 3, 3, "012"}, {4, 2, 2, "45"}, {15, 100, 5, "fghij"}} {
			resp, err := c.FetchWith(context.Background(), url.MustParse(raw), fetch.FetchOptions{Offset: tt.offset, Length: tt.length})
			if err != nil {
				t.Fatalf("%s %d+%d: %v", raw, tt.offset, tt.length, err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || string(b) != tt.want || resp.Size != tt.size || resp.Offset != tt.offset {
				t.Errorf("%s %d+%d: %q %v, size %d, offset %d", raw, tt.offset, tt.length, b, err, resp.Size, resp.Offset)
			}
		}
	}
}

// TestNetwork: Client.Network keeps to one IP version (-4, -6): an
// IPv4 server is reached with tcp4 and refused with tcp6 before any
// connection, and a Dial of the caller's is given the network;
// Client.Resolve sends a host's connections elsewhere.
func TestNetwork(t *testing.T) {
	s := newServer(t, &recorder{}) // on 127.0.0.1
	c := newClient()
	c.Network = "tcp4"
	get := func() error {
		resp, err := c.Get(context.Background(), s.URL+"/data.txt")
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(); err != nil {
		t.Errorf("tcp4: %v", err)
	}
	c.Network = "tcp6"
	if err := get(); !errors.Is(err, fetch.ErrNetwork) {
		t.Errorf("tcp6 to an IPv4 address: %v", err)
	}
	var asked []string
	c.Network = "tcp4"
	c.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		asked = append(asked, network)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	if err := get(); err != nil || len(asked) != 1 || asked[0] != "tcp4" {
		t.Errorf("Dial given %q: %v", asked, err)
	}
	// Resolve sends a host's connections to the address given.
	c.Dial, c.Network = nil, ""
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.URL, "http://"))
	c.Resolve = map[string]string{"nowhere.invalid:" + port: "127.0.0.1:" + port}
	resp, err := c.Get(context.Background(), "http://NOWHERE.invalid:"+port+"/data.txt")
	if err != nil {
		t.Errorf("Resolve: %v", err)
	} else {
		resp.Body.Close()
	}
	c.Resolve = nil
	c.Network = "udp"
	if err := get(); err == nil || !strings.Contains(err.Error(), "Client.Network") {
		t.Errorf("Network udp: %v", err)
	}
}

func TestShortBodyIdleCancelLimit(t *testing.T) {
	s := newServer(t, &recorder{})
	c := newClient()
	resp, err := c.Get(context.Background(), s.URL+"/short")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, fetch.ErrShortBody) || fetch.ExitCode(err) != 7 {
		t.Errorf("short body: %v", err)
	}

	c.IdleTimeout = 200 * time.Millisecond
	resp, err = c.Get(context.Background(), s.URL+"/stall")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, fetch.ErrTimeout) || fetch.ExitCode(err) != 6 {
		t.Errorf("stalled server: %v", err)
	}

	c.IdleTimeout = -1
	ctx, cancel := context.WithCancel(context.Background())
	resp, err = c.Get(ctx, s.URL+"/stall")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := io.ReadAll(resp.Body); done <- err }()
	cancel()
	select {
	case err = <-done:
		if !errors.Is(err, context.Canceled) || fetch.ExitCode(err) != 130 {
			t.Errorf("cancelled: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelling the context did not end the read")
	}
	resp.Body.Close()

	// An object whose announced size passes MaxBytes is refused before
	// its body; one of unannounced size ends at MaxBytes.
	c.MaxBytes = 1000
	if _, err := c.Get(context.Background(), s.URL+"/big"); !errors.Is(err, fetch.ErrTooLarge) || fetch.ExitCode(err) != 7 {
		t.Errorf("limit, size announced: %v (exit %d)", err, fetch.ExitCode(err))
	}
	resp, err = c.Get(context.Background(), s.URL+"/bigchunked")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if !errors.Is(err, fetch.ErrTooLarge) || n != 1000 {
		t.Errorf("limit, size unknown: %d bytes, %v", n, err)
	}
}

func TestDownload(t *testing.T) {
	s := newServer(t, &recorder{})
	c := newClient()
	dir := t.TempDir()
	path, err := c.Download(context.Background(), s.URL+"/sub/data.txt", dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	st, _ := os.Stat(path)
	if path != filepath.Join(dir, "data.txt") || string(b) != "0123456789abcdefghij" || !st.ModTime().Equal(modTime) {
		t.Errorf("download: %s %q %v", path, b, st.ModTime())
	}
	if _, err := os.Stat(path + fetch.PartSuffix); !os.IsNotExist(err) {
		t.Errorf("partial file left behind: %v", err)
	}
	// A body that ends early never lands under the final name.
	_, err = c.Download(context.Background(), s.URL+"/short", dir)
	if !errors.Is(err, fetch.ErrShortBody) {
		t.Errorf("short download: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "short")); !os.IsNotExist(err) {
		t.Errorf("a short object sits under its final name: %v", err)
	}
	// Resume continues the partial file.
	os.WriteFile(filepath.Join(dir, "r.txt.part"), []byte("0123456789"), 0o644)
	path, err = c.DownloadWith(context.Background(), s.URL+"/r.txt", dir, fetch.DownloadOptions{Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "0123456789abcdefghij" {
		t.Errorf("resumed file %q", b)
	}
	// A name with a slash is refused; the URL's name is made safe.
	if _, err := c.DownloadWith(context.Background(), s.URL+"/x", dir, fetch.DownloadOptions{Name: "../x"}); !errors.Is(err, fetch.ErrWrite) {
		t.Errorf("name with ..: %v", err)
	}
	path, err = c.Download(context.Background(), s.URL+"/a/..%2F..%2Fescape", dir)
	if err != nil || filepath.Dir(path) != dir {
		t.Errorf("escaping name: %s %v", path, err)
	}
	// A URL already parsed is downloaded as its text is.
	path, err = c.DownloadURL(context.Background(), url.MustParse(s.URL+"/sub/data.txt"), dir, fetch.DownloadOptions{Name: "parsed.txt"})
	if b, _ := os.ReadFile(path); err != nil || path != filepath.Join(dir, "parsed.txt") || string(b) != "0123456789abcdefghij" {
		t.Errorf("DownloadURL: %s %q %v", path, b, err)
	}
}

// forwardProxy is an HTTP proxy: it answers absolute-form requests by
// fetching them itself for http, and by naming the URL for other schemes
// (a gateway).
func forwardProxy(t *testing.T, rec *recorder) *httptest.Server {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		rec.add(r)
		if r.URL.Scheme != "http" {
			fmt.Fprintf(w, "gateway fetched %s", r.RequestURI)
			return
		}
		resp, err := nethttp.DefaultTransport.RoundTrip(r.Clone(context.Background()))
		if err != nil {
			w.WriteHeader(502)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(s.Close)
	return s
}

func TestProxyAndGateways(t *testing.T) {
	origin := newServer(t, &recorder{})
	prec := &recorder{}
	p := forwardProxy(t, prec)
	c := newClient()
	pu := url.MustParse(p.URL)
	c.Proxy = func(*url.URL) (*url.URL, error) { return pu, nil }
	var sent []string
	c.Trace = func(_ *url.URL, ev fetch.TraceEvent) {
		if ev.Dir == protocols.TraceSend {
			sent = append(sent, ev.Text)
		}
	}
	resp, err := c.Get(context.Background(), origin.URL+"/via")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if uri, _ := prec.last(); string(b) != "0123456789abcdefghij" || uri != origin.URL+"/via" {
		t.Errorf("via proxy: %q, proxy saw %q", b, uri)
	}
	// The trace shows the request line as the proxy got it.
	if len(sent) == 0 || sent[0] != "GET "+origin.URL+"/via HTTP/1.1" {
		t.Errorf("via proxy: traced %q", sent)
	}
	c.Trace = nil
	// Any scheme through an HTTP proxy (RFC 1738 §4): the absolute URL.
	resp, err = c.Get(context.Background(), "gopher://gopher.example/0/about%09x")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "gateway fetched gopher://gopher.example/0/about%09x" {
		t.Errorf("gopher via proxy: %q", b)
	}
	// A per-scheme gateway with a %s template.
	c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	c.Gateways = map[string]string{"wais": origin.URL + "/gw?u=%s"}
	rec := &recorder{}
	gw := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		rec.add(r)
		io.WriteString(w, r.URL.Query().Get("u"))
	}))
	defer gw.Close()
	c.Gateways["wais"] = gw.URL + "/gw?u=%s"
	resp, err = c.Get(context.Background(), "wais://w.example/db?gopher+protocol")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "wais://w.example/db?gopher+protocol" {
		t.Errorf("gateway template got %q", b)
	}
}

func TestSOCKS5Proxy(t *testing.T) {
	origin := newServer(t, &recorder{})
	sp, err := socks5.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	c := newClient()
	pu := url.MustParse("socks5://" + sp.Addr())
	c.Proxy = func(*url.URL) (*url.URL, error) { return pu, nil }
	var sent []string
	c.Trace = func(_ *url.URL, ev fetch.TraceEvent) {
		if ev.Dir == protocols.TraceSend {
			sent = append(sent, ev.Text)
		}
	}
	resp, err := c.Get(context.Background(), origin.URL+"/s")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	host := strings.TrimPrefix(origin.URL, "http://")
	if tg := sp.Targets(); len(tg) == 0 || tg[0] != host {
		t.Errorf("SOCKS server saw %v, want %s", tg, host)
	}
	// Through the tunnel the server gets the path, and the trace says so.
	if len(sent) == 0 || sent[0] != "GET /s HTTP/1.1" {
		t.Errorf("via SOCKS: traced %q", sent)
	}
}

func TestProxyFromEnvironment(t *testing.T) {
	t.Setenv("gopher_proxy", "gw.example:8001")
	t.Setenv("ALL_PROXY", "socks5://s.example:1080")
	t.Setenv("NO_PROXY", "internal.example,.corp")
	t.Setenv("no_proxy", "")
	t.Setenv("HTTP_PROXY", "http://cgi-injected:1")
	t.Setenv("http_proxy", "")
	for in, want := range map[string]string{
		"gopher://h/":             "http://gw.example:8001",
		"ftp://h/":                "socks5://s.example:1080",
		"http://h/":               "socks5://s.example:1080",
		"ftp://internal.example/": "",
		"ftp://a.b.corp/":         "",
		"file:///etc/motd":        "",
	} {
		p, err := fetch.ProxyFromEnvironment(url.MustParse(in))
		got := ""
		if p != nil {
			got = p.String()
		}
		if err != nil || got != want {
			t.Errorf("proxy for %s = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestRefusals(t *testing.T) {
	c := newClient()
	for _, tt := range []struct {
		in   string
		want error
		code int
	}{
		{"gopher://127.0.0.1:25/0x", fetch.ErrUnsafePort, 2},
		{"http://127.0.0.1:110/", fetch.ErrUnsafePort, 2},
		{"ftp://h/%zz", fetch.ErrBadURL, 2},
		{"x-private:thing", fetch.ErrUnsupportedScheme, 3},
		{"urn:/iana/dns/ch/cern", fetch.ErrUnsupportedScheme, 3},
		{"mailto:joe@example.com", fetch.ErrNotRetrievable, 3},
	} {
		_, err := c.Get(context.Background(), tt.in)
		if !errors.Is(err, tt.want) || fetch.ExitCode(err) != tt.code {
			t.Errorf("%s: %v (exit %d), want %v (exit %d)", tt.in, err, fetch.ExitCode(err), tt.want, tt.code)
		}
		// The hint names what to type: the flag with the port.
		if tt.want == fetch.ErrUnsafePort {
			u, _ := url.Parse(tt.in)
			if want := fmt.Sprintf("--allow-port %s", u.Port); !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v does not name %q", tt.in, err, want)
			}
		}
	}
	// An explicitly allowed port goes ahead (and here finds nobody).
	c.AllowPorts = []int{25}
	c.ConnectTimeout = 2 * time.Second
	_, err := c.Get(context.Background(), "http://127.0.0.1:25/")
	if errors.Is(err, fetch.ErrUnsafePort) {
		t.Errorf("allowed port refused: %v", err)
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("registering a scheme twice did not panic")
		}
	}()
	c := fetch.NewClient()
	c.Register(fetch.Scheme{Name: "HTTP", Fetcher: fakeFetcher{}})
}

// Registering a built-in scheme again, to name a news server, say, is
// refused with a pointer to the field that configures it.
func TestRegisterBuiltinNamesField(t *testing.T) {
	defer func() {
		if msg := fmt.Sprint(recover()); !strings.Contains(msg, "configure Client.NNTP") {
			t.Errorf("panic %q", msg)
		}
	}()
	fetch.NewClient().Register(fetch.Scheme{Name: "nntp", Fetcher: fakeFetcher{}})
}

type fakeFetcher struct{}

func (fakeFetcher) Fetch(context.Context, *fetch.Request) (*fetch.Response, error) { return nil, nil }

// TestDownloadIfModifiedSince: DownloadOptions.IfModifiedSince skips an
// object no newer than it (ErrNotModified, no file) and downloads a newer
// one.
func TestDownloadIfModifiedSince(t *testing.T) {
	s := newServer(t, &recorder{})
	c := newClient()
	dir := t.TempDir()
	_, err := c.DownloadWith(context.Background(), s.URL+"/data.txt", dir, fetch.DownloadOptions{IfModifiedSince: modTime.Add(time.Hour)})
	if !errors.Is(err, fetch.ErrNotModified) {
		t.Errorf("an older object: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files written: %v", entries)
	}
	p, err := c.DownloadWith(context.Background(), s.URL+"/data.txt", dir, fetch.DownloadOptions{IfModifiedSince: modTime.Add(-time.Hour)})
	if b, _ := os.ReadFile(p); err != nil || string(b) != "0123456789abcdefghij" {
		t.Errorf("a newer object: %q %v", b, err)
	}
}

// TestEntityTags: Response.ETag is the server's, as sent; IfNoneMatch
// with it is an error wrapping ErrNotModified (no file written), and
// with another tag the object comes; DownloadOptions.Received sees the
// response's metadata.
func TestEntityTags(t *testing.T) {
	const tag = `"v1-abc"`
	var asked atomic.Value
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		asked.Store(r.Header.Get("If-None-Match"))
		w.Header().Set("ETag", tag)
		nethttp.ServeContent(w, r, "o.txt", modTime, strings.NewReader("object"))
	}))
	t.Cleanup(s.Close)
	c := newClient()
	ctx := context.Background()
	resp, err := c.FetchWith(ctx, url.MustParse(s.URL+"/o.txt"), fetch.FetchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ETag != tag || asked.Load() != "" {
		t.Errorf("ETag %q, If-None-Match sent %q", resp.ETag, asked.Load())
	}
	_, err = c.FetchWith(ctx, url.MustParse(s.URL+"/o.txt"), fetch.FetchOptions{IfNoneMatch: tag})
	if !errors.Is(err, fetch.ErrNotModified) || asked.Load() != tag {
		t.Errorf("the same tag: %v, sent %q", err, asked.Load())
	}
	dir := t.TempDir()
	_, err = c.DownloadWith(ctx, s.URL+"/o.txt", dir, fetch.DownloadOptions{IfNoneMatch: tag, Received: func(*fetch.Response) { t.Error("Received called on a 304") }})
	if entries, _ := os.ReadDir(dir); !errors.Is(err, fetch.ErrNotModified) || len(entries) != 0 {
		t.Errorf("download with the same tag: %v, files %v", err, entries)
	}
	var got string
	p, err := c.DownloadWith(ctx, s.URL+"/o.txt", dir, fetch.DownloadOptions{IfNoneMatch: `"v0"`, Received: func(r *fetch.Response) { got = r.ETag }})
	if b, _ := os.ReadFile(p); err != nil || string(b) != "object" || got != tag {
		t.Errorf("another tag: %v, %q, Received saw %q", err, b, got)
	}
}

// TestNoProxy: Client.NoProxy reaches its hosts directly, whatever Proxy
// or the environment names (here a proxy that refuses every connection).
func TestNoProxy(t *testing.T) {
	s := newServer(t, &recorder{}) // on 127.0.0.1
	dead := url.MustParse("http://127.0.0.1:1/")
	for _, env := range []bool{false, true} {
		c := newClient()
		if env {
			t.Setenv("http_proxy", dead.String())
			t.Setenv("no_proxy", "")
			t.Setenv("NO_PROXY", "")
			c.Proxy = nil // the environment's
		} else {
			c.Proxy = func(*url.URL) (*url.URL, error) { return dead, nil }
		}
		for list, direct := range map[string]bool{"127.0.0.1": true, "example.org, 127.0.0.1:80": true, "*": true, "example.org": false, "": false} {
			c.NoProxy = list
			resp, err := c.Get(context.Background(), s.URL+"/data.txt")
			if err == nil {
				resp.Body.Close()
			}
			if (err == nil) != direct {
				t.Errorf("environment %t, NoProxy %q: %v", env, list, err)
			}
		}
	}
}

// TestCookieJar: with a Jar, a cookie set on the way (a login that
// redirects) goes with the requests that follow to its site, beside a
// Cookie field of Client.Header, and not to another site.
func TestCookieJar(t *testing.T) {
	var mu sync.Mutex
	got := map[string]string{}
	other := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		got["other"] = r.Header.Get("Cookie")
		mu.Unlock()
		io.WriteString(w, "elsewhere")
	}))
	t.Cleanup(other.Close)
	_, otherPort, _ := strings.Cut(strings.TrimPrefix(other.URL, "http://"), ":")
	site := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		got[r.URL.Path] = r.Header.Get("Cookie")
		mu.Unlock()
		switch r.URL.Path {
		case "/login":
			nethttp.SetCookie(w, &nethttp.Cookie{Name: "sid", Value: "abc", Path: "/"})
			nethttp.Redirect(w, r, "/home", nethttp.StatusFound)
		case "/home":
			if c, err := r.Cookie("sid"); err != nil || c.Value != "abc" {
				nethttp.Error(w, "log in first", nethttp.StatusForbidden)
				return
			}
			io.WriteString(w, "welcome")
		case "/away": // another host: localhost, not 127.0.0.1
			nethttp.Redirect(w, r, "http://localhost:"+otherPort+"/there", nethttp.StatusFound)
		}
	}))
	t.Cleanup(site.Close)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := newClient()
	c.Jar = jar
	c.Header = [][2]string{{"Cookie", "pref=1"}}
	resp, err := c.Get(context.Background(), site.URL+"/login")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "welcome" {
		t.Errorf("after the login: %q, want welcome", body)
	}
	if resp, err = c.Get(context.Background(), site.URL+"/away"); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for at, want := range map[string]string{"/login": "pref=1", "/home": "pref=1; sid=abc", "/away": "pref=1; sid=abc", "other": ""} {
		if got[at] != want {
			t.Errorf("%s got Cookie %q, want %q", at, got[at], want)
		}
	}
	// Without a Jar, the login's cookie is not kept.
	c.Jar = nil
	if _, err := c.Get(context.Background(), site.URL+"/login"); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("without a jar: %v, want the 403", err)
	}
}

// TestOnlySchemes: OnlySchemes refuses any other scheme, asked for or
// redirected to, before connecting; RedirectOnly narrows redirects alone.
func TestOnlySchemes(t *testing.T) {
	var asked atomic.Int32
	site := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		asked.Add(1)
		switch r.URL.Path {
		case "/away":
			nethttp.Redirect(w, r, "/here", nethttp.StatusFound)
		case "/toftp":
			nethttp.Redirect(w, r, "ftp://127.0.0.1:1/x", nethttp.StatusFound)
		default:
			io.WriteString(w, "here")
		}
	}))
	t.Cleanup(site.Close)
	c := newClient()
	c.OnlySchemes = []string{"https"}
	_, err := c.Get(context.Background(), site.URL+"/")
	if !errors.Is(err, fetch.ErrUnsupportedScheme) || !strings.Contains(err.Error(), "http: not among the schemes allowed (https)") || asked.Load() != 0 {
		t.Errorf("http with https only: %v, %d requests", err, asked.Load())
	}
	c.OnlySchemes = []string{"http", "https"}
	if resp, err := c.Get(context.Background(), site.URL+"/away"); err != nil {
		t.Errorf("http allowed: %v", err)
	} else {
		resp.Body.Close()
	}
	// A redirect to ftp, which redirects may lead to, is refused by
	// OnlySchemes before connecting (port 1 would refuse the connection).
	c.OnlySchemes = []string{"http"}
	if _, err := c.Get(context.Background(), site.URL+"/toftp"); !errors.Is(err, fetch.ErrUnsupportedScheme) {
		t.Errorf("a redirect to ftp with http only: %v", err)
	}
	c.OnlySchemes, c.RedirectOnly = nil, []string{"https"}
	n := asked.Load()
	if _, err := c.Get(context.Background(), site.URL+"/away"); !errors.Is(err, fetch.ErrRedirect) || asked.Load() != n+1 {
		t.Errorf("a redirect to http with RedirectOnly https: %v, %d requests", err, asked.Load()-n)
	}
}

// TestErrorBody: with ErrorBody, a 404's page is the Body (and, for a
// download, the file) and Failure the not-found error; without it, no
// body and no file.
func TestErrorBody(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		w.WriteHeader(nethttp.StatusNotFound)
		io.WriteString(w, "no such page")
	}))
	t.Cleanup(s.Close)
	c := newClient()
	u, _ := url.Parse(s.URL + "/gone.txt")
	resp, err := c.FetchWith(context.Background(), u, fetch.FetchOptions{ErrorBody: true, IfModifiedSince: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "no such page" || !errors.Is(resp.Failure, fetch.ErrNotFound) {
		t.Errorf("body %q, failure %v", b, resp.Failure)
	}
	dir := t.TempDir()
	if _, err := c.DownloadWith(context.Background(), s.URL+"/gone.txt", dir, fetch.DownloadOptions{ErrorBody: true}); !errors.Is(err, fetch.ErrNotFound) {
		t.Errorf("download with ErrorBody: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "gone.txt")); err != nil || string(b) != "no such page" {
		t.Errorf("the error page as the file: %q %v", b, err)
	}
	// OnlyNewer keeps the copy there: the page does not replace it.
	os.WriteFile(filepath.Join(dir, "kept.txt"), []byte("the object"), 0o644)
	if _, err := c.DownloadWith(context.Background(), s.URL+"/kept.txt", dir, fetch.DownloadOptions{ErrorBody: true, OnlyNewer: true}); !errors.Is(err, fetch.ErrNotFound) {
		t.Errorf("download with ErrorBody and OnlyNewer: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "kept.txt")); string(b) != "the object" {
		t.Errorf("with OnlyNewer, the copy became %q", b)
	}
	other := t.TempDir()
	if _, err := c.DownloadWith(context.Background(), s.URL+"/gone.txt", other, fetch.DownloadOptions{}); !errors.Is(err, fetch.ErrNotFound) {
		t.Errorf("download: %v", err)
	}
	if entries, _ := os.ReadDir(other); len(entries) != 0 {
		t.Errorf("without ErrorBody, files: %v", entries)
	}
}

// TestResumeProgress: the progress of a resumed transfer says where it
// began, so that a bar can show the whole object.
func TestResumeProgress(t *testing.T) {
	s := newServer(t, &recorder{})
	c := newClient()
	var last fetch.Progress
	resp, err := c.FetchWith(context.Background(), url.MustParse(s.URL+"/data.txt"), fetch.FetchOptions{Offset: 15, Progress: func(p fetch.Progress) { last = p }})
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	if !last.Done || last.Offset != 15 || last.Bytes != 5 || last.Total != 5 {
		t.Errorf("the last progress of a resumed transfer: %+v", last)
	}
}

// TestNetHTTPProxy: a proxy function written for net/http chooses the
// proxy, seeing the URL as net/url parses it, for any scheme.
func TestNetHTTPProxy(t *testing.T) {
	origin := newServer(t, &recorder{})
	prec := &recorder{}
	p := forwardProxy(t, prec)
	pu, _ := neturl.Parse(p.URL)
	c := newClient()
	var asked []string
	c.Proxy = fetch.NetHTTPProxy(func(r *nethttp.Request) (*neturl.URL, error) {
		asked = append(asked, r.URL.Scheme+" "+r.URL.Host+" "+r.URL.Path)
		return nethttp.ProxyURL(pu)(r)
	})
	for _, u := range []string{origin.URL + "/via", "gopher://gopher.example/0/about"} {
		resp, err := c.Get(context.Background(), u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if uri, _ := prec.last(); uri != u {
			t.Errorf("%s: the proxy saw %q", u, uri)
		}
	}
	if len(asked) != 2 || asked[1] != "gopher gopher.example /0/about" {
		t.Errorf("the function was asked %q", asked)
	}
	c.Proxy = fetch.NetHTTPProxy(func(*nethttp.Request) (*neturl.URL, error) { return nil, nil })
	resp, err := c.Get(context.Background(), origin.URL+"/direct")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// TestBodyErrorNamesURL: an error reading a body is a *fetch.Error of
// its URL that still says its kind; an Error of an Error of the same URL
// names it once.
func TestBodyErrorNamesURL(t *testing.T) {
	s := newServer(t, &recorder{})
	c := newClient()
	resp, err := c.Get(context.Background(), s.URL+"/short")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	var fe *fetch.Error
	if !errors.As(err, &fe) || fe.Op != "read" || fe.URL != s.URL+"/short" || !errors.Is(err, fetch.ErrShortBody) {
		t.Errorf("a short body: %#v", err)
	}
	u := "ftp://h.example/x"
	outer := &fetch.Error{Op: "mirror", URL: u, Err: &fetch.Error{Op: "get", URL: u, Err: fetch.ErrNetwork}}
	if got := outer.Error(); got != "mirror "+u+": "+fetch.ErrNetwork.Error() || !errors.Is(outer, fetch.ErrNetwork) {
		t.Errorf("nested: %q", got)
	}
	if got := fetch.Cause(outer); got != fetch.ErrNetwork {
		t.Errorf("Cause: %v", got)
	}
	other := &fetch.Error{Op: "mirror", URL: u, Err: &fetch.Error{Op: "get", URL: u + "/y", Err: fetch.ErrNetwork}}
	if got := other.Error(); !strings.Contains(got, "get "+u+"/y") {
		t.Errorf("nested, another URL: %q", got)
	}
}
