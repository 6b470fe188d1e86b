package gemini

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver/geminid"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

func serve(t *testing.T, s *geminid.Server) *geminid.Server {
	t.Helper()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func fetcher(t *testing.T) *Fetcher {
	return &Fetcher{KnownHosts: filepath.Join(t.TempDir(), "known_hosts"), HeaderTimeout: 2 * time.Second}
}

func get(t *testing.T, f *Fetcher, raw string, edit ...func(*protocols.Request)) (*protocols.Response, string, error) {
	t.Helper()
	req := &protocols.Request{URL: url.MustParse(raw)}
	for _, e := range edit {
		e(req)
	}
	resp, err := f.Fetch(context.Background(), req)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b), err
}

const page = "# A capsule\n\nSome text.\n=> /docs/ The docs\n=>sub/page.gmi\n=> gemini://elsewhere.example/ Elsewhere\n=> https://www.example.org/ The web\n* an item\n> a quote\n```alt\n=> not a link\n```\n"

func TestPagesAndFiles(t *testing.T) {
	s := serve(t, &geminid.Server{Pages: map[string]string{
		"/":          "20 text/gemini\r\n" + page,
		"/hello.txt": "20 text/plain; charset=utf-8\r\nHello.\n",
		"/latin.txt": "20 text/plain; charset=iso-8859-1\r\ncaf\xe9\n",
		"/bare":      "20\r\n=> a A\n",
	}})
	f := fetcher(t)
	base := "gemini://" + s.Addr()
	resp, body, err := get(t, f, base+"/")
	if err != nil || resp.Kind != protocols.KindDirectory || body != page || resp.MediaType != "text/gemini" {
		t.Fatalf("%v %+v %q", err, resp, body)
	}
	var got []string
	for _, e := range resp.Entries {
		got = append(got, fmt.Sprintf("%s %s %s", e.Kind, e.Name, e.URL))
	}
	want := []string{"directory The docs " + base + "/docs/", "directory sub/page.gmi " + base + "/sub/page.gmi",
		"directory Elsewhere gemini://elsewhere.example/", "file The web https://www.example.org/"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("entries:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if resp, body, err := get(t, f, base+"/hello.txt"); err != nil || resp.Kind != protocols.KindFile || resp.MediaType != "text/plain" || body != "Hello.\n" || resp.Name != "hello.txt" {
		t.Errorf("%v %+v %q", err, resp, body)
	}
	if resp, _, err := get(t, f, base+"/latin.txt"); err != nil || resp.MediaType != "text/plain" || resp.Charset != "iso-8859-1" {
		t.Errorf("the charset: %v %+v", err, resp)
	}
	if resp, _, err := get(t, f, base+"/bare"); err != nil || resp.Kind != protocols.KindDirectory || len(resp.Entries) != 1 {
		t.Errorf("a header with no META is gemtext: %v %+v", err, resp)
	}
	if reqs := s.Requests(); reqs[0] != base+"/" {
		t.Errorf("request line %q", reqs[0])
	}
}

func TestStatuses(t *testing.T) {
	s := serve(t, &geminid.Server{Handler: func(c *geminid.Conn, line string) {
		u, _ := url.Parse(line)
		code := strings.TrimPrefix(u.Path, "/")
		meta := map[string]string{"10": "What is your name?", "11": "Password", "30": "/elsewhere", "31": "gemini://h.example/moved", "44": "3"}[code]
		if meta == "" {
			meta = "meta of " + code
		}
		fmt.Fprintf(c, "%s %s\r\n", code, meta)
	}})
	f := fetcher(t)
	base := "gemini://" + s.Addr() + "/"
	for code, want := range map[string]error{
		"40": protocols.ErrTemporary, "41": protocols.ErrTemporary, "42": protocols.ErrTemporary, "43": protocols.ErrTemporary, "44": protocols.ErrTemporary,
		"50": protocols.ErrProtocol, "51": protocols.ErrNotFound, "52": protocols.ErrNotFound, "53": protocols.ErrPermission, "59": protocols.ErrBadURL,
		"60": protocols.ErrAuth, "61": protocols.ErrPermission, "62": protocols.ErrAuth, "70": protocols.ErrProtocol, "2x": protocols.ErrProtocol,
	} {
		_, _, err := get(t, f, base+code)
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", code, err, want)
		}
	}
	_, _, err := get(t, f, base+"44")
	var se *StatusError
	if !errors.As(err, &se) || se.RetryAfter() != 3*time.Second {
		t.Errorf("44: %v", err)
	}
	if _, _, err := get(t, f, base+"60"); err == nil || !strings.Contains(err.Error(), "--cert FILE --key FILE") {
		t.Errorf("60 says how to give a certificate: %v", err)
	}
	for code, prompt := range map[string]string{"10": "What is your name?", "11": "Password"} {
		resp, _, err := get(t, f, base+code)
		if err != nil || resp.Kind != protocols.KindSearchIndex || resp.Prompt != prompt || resp.Sensitive != (code == "11") {
			t.Errorf("%s: %v %+v", code, err, resp)
		}
	}
	for code, loc := range map[string]string{"30": "gemini://" + s.Addr() + "/elsewhere", "31": "gemini://h.example/moved"} {
		resp, _, err := get(t, f, base+code)
		if err != nil || resp.Kind != protocols.KindRedirect || resp.Location.String() != loc {
			t.Errorf("%s: %v %+v", code, err, resp)
		}
	}
}

// Trust on first use: pinned at first contact, the same key passes, a
// different one is refused naming the file and the line, unless the pin
// has expired; a CA-verified certificate needs no pin; -k needs none.
func TestTrustOnFirstUse(t *testing.T) {
	s := serve(t, &geminid.Server{Pages: map[string]string{"/": "20 text/plain\r\nok\n"}})
	f := fetcher(t)
	u := "gemini://" + s.Addr() + "/"
	if _, body, err := get(t, f, u); err != nil || body != "ok\n" {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(f.KnownHosts)
	key := KeyOf(s.Cert.Leaf)
	if want := s.Addr() + " " + key + " " + s.Cert.Leaf.NotAfter.UTC().Format(time.RFC3339) + "\n"; string(b) != want {
		t.Fatalf("known hosts:\n%q\nwant\n%q", b, want)
	}
	if _, _, err := get(t, f, u); err != nil {
		t.Errorf("the same key: %v", err)
	}
	// A Fetcher keeps the keys it has verified: the file is read again by
	// a new one (a later run).
	later := func() *Fetcher { return &Fetcher{KnownHosts: f.KnownHosts} }
	other := "sha256/" + strings.Repeat("ab", 32)
	os.WriteFile(f.KnownHosts, []byte("example.org:1965 "+key+" 2099-01-01T00:00:00Z\n"+s.Addr()+" "+other+" 2099-01-01T00:00:00Z\n"), 0o600)
	_, _, err := get(t, later(), u)
	var kc *KeyChangedError
	if !errors.As(err, &kc) || !errors.Is(err, protocols.ErrPermission) || kc.Line != 2 || !strings.Contains(err.Error(), "remove line 2 of "+f.KnownHosts) {
		t.Errorf("a changed key: %v", err)
	}
	os.WriteFile(f.KnownHosts, []byte(s.Addr()+" "+other+" 2001-01-01T00:00:00Z\n"), 0o600)
	if _, _, err := get(t, later(), u); err != nil {
		t.Errorf("an expired pin: %v", err)
	}
	if b, _ := os.ReadFile(f.KnownHosts); !strings.Contains(string(b), key) {
		t.Errorf("the expired pin was not replaced: %q", b)
	}

	ca := fetcher(t)
	roots := x509.NewCertPool()
	roots.AddCert(s.Cert.Leaf)
	if _, _, err := get(t, ca, u, func(r *protocols.Request) { r.TLS = &tls.Config{RootCAs: roots} }); err != nil {
		t.Errorf("CA-verified: %v", err)
	}
	if _, err := os.Stat(ca.KnownHosts); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a CA-verified certificate was pinned: %v", err)
	}
	k := fetcher(t)
	if _, _, err := get(t, k, u, func(r *protocols.Request) { r.TLS = &tls.Config{InsecureSkipVerify: true} }); err != nil {
		t.Errorf("insecure: %v", err)
	}
	if _, err := os.Stat(k.KnownHosts); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("-k pinned a key: %v", err)
	}
	// An expired certificate that no CA vouches for is refused.
	old, _ := geminid.NewCert(time.Now().Add(time.Minute))
	s2 := serve(t, &geminid.Server{Cert: old, Pages: map[string]string{"/": "20 text/plain\r\nok\n"}})
	late := fetcher(t)
	late.now = func() time.Time { return time.Now().Add(time.Hour) }
	if _, _, err := get(t, late, "gemini://"+s2.Addr()+"/"); !errors.Is(err, protocols.ErrPermission) || !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired: %v", err)
	}
}

func TestMisbehaving(t *testing.T) {
	s := serve(t, &geminid.Server{Handler: func(c *geminid.Conn, line string) {
		switch {
		case strings.HasSuffix(line, "/bigmeta"):
			fmt.Fprintf(c, "20 %s\r\n", strings.Repeat("x", 1<<20))
		case strings.HasSuffix(line, "/longmeta"):
			fmt.Fprintf(c, "20 %s\r\n", strings.Repeat("x", 1025))
		case strings.HasSuffix(line, "/noend"):
			io.WriteString(c, "20 text/plain")
			time.Sleep(time.Second)
		case strings.HasSuffix(line, "/cut"):
			io.WriteString(c, "20 application/octet-stream\r\npart of it")
			c.Raw.Close() // no close_notify
		case strings.HasSuffix(line, "/junk"):
			io.WriteString(c, "HTTP/1.0 200 OK\r\n")
		default: // "/nothing": no header at all
		}
	}})
	f := fetcher(t)
	f.HeaderTimeout = 200 * time.Millisecond
	base := "gemini://" + s.Addr()
	for path, want := range map[string]error{"/bigmeta": protocols.ErrProtocol, "/longmeta": protocols.ErrProtocol, "/noend": protocols.ErrTimeout,
		"/junk": protocols.ErrProtocol, "/nothing": protocols.ErrProtocol, "/cut": protocols.ErrShortBody} {
		_, body, err := get(t, f, base+path)
		if !errors.Is(err, want) {
			t.Errorf("%s: %v (%q), want %v", path, err, body, want)
		}
	}
	if _, _, err := get(t, f, base+"/"+strings.Repeat("a", 1024)); !errors.Is(err, protocols.ErrBadURL) {
		t.Errorf("a request over 1024 bytes: %v", err)
	}
	if _, _, err := get(t, f, "gemini://u:p@"+s.Addr()+"/"); !errors.Is(err, protocols.ErrBadURL) {
		t.Errorf("user info: %v", err)
	}
}

// Many URLs of one capsule resume one TLS session; a client certificate
// is presented when given.
func TestSessionsAndCertificates(t *testing.T) {
	for _, v := range []uint16{tls.VersionTLS13, tls.VersionTLS12} {
		s := serve(t, &geminid.Server{MaxVersion: v, Pages: map[string]string{"/": "20 text/plain\r\nok\n"}})
		f := fetcher(t)
		for range 5 {
			if _, _, err := get(t, f, "gemini://"+s.Addr()+"/"); err != nil {
				t.Fatal(err)
			}
		}
		if full, resumed := f.Handshakes(); full != 1 || resumed != 4 || s.Resumed.Load() != 4 {
			t.Errorf("%s: %d full handshakes, %d resumed (the server's %d)", tls.VersionName(v), full, resumed, s.Resumed.Load())
		}
	}
	s := serve(t, &geminid.Server{Pages: map[string]string{"/": "20 text/plain\r\nok\n"}})
	cert, _ := geminid.NewCert(time.Now().Add(time.Hour))
	if _, _, err := get(t, fetcher(t), "gemini://"+s.Addr()+"/", func(r *protocols.Request) { r.TLS = &tls.Config{Certificates: []tls.Certificate{cert}} }); err != nil {
		t.Fatal(err)
	}
	if cs := s.ClientCerts(); len(cs) != 1 || !cs[0].Equal(cert.Leaf) {
		t.Errorf("client certificates seen: %d", len(cs))
	}
}

// With Ask, a question is answered and the URL asked again with the
// answer as its query; a sensitive answer never shows in the trace; a
// request for someone else (a gateway's visitor) is never asked.
func TestAsk(t *testing.T) {
	s := serve(t, &geminid.Server{Handler: func(c *geminid.Conn, line string) {
		u, _ := url.Parse(line)
		switch {
		case !u.HasQuery && u.Path == "/name":
			io.WriteString(c, "10 Your name?\r\n")
		case !u.HasQuery:
			io.WriteString(c, "11 Password\r\n")
		default:
			fmt.Fprintf(c, "20 text/plain\r\nyou said %s\n", u.Query)
		}
	}})
	var asked []string
	f := fetcher(t)
	f.Ask = func(ctx context.Context, prompt string, sensitive bool) (string, error) {
		asked = append(asked, fmt.Sprintf("%s %v", prompt, sensitive))
		if sensitive {
			return "s3cret word", nil
		}
		return "Gus", nil
	}
	if _, body, err := get(t, f, "gemini://"+s.Addr()+"/name"); err != nil || body != "you said Gus\n" {
		t.Errorf("%q %v", body, err)
	}
	var trace []string
	if _, body, err := get(t, f, "gemini://"+s.Addr()+"/login", func(r *protocols.Request) {
		r.Trace = func(ev protocols.TraceEvent) { trace = append(trace, ev.Text) }
	}); err != nil || body != "you said s3cret%20word\n" {
		t.Errorf("%q %v", body, err)
	}
	if strings.Contains(strings.Join(trace, "\n"), "s3cret") {
		t.Errorf("the sensitive answer is in the trace:\n%s", strings.Join(trace, "\n"))
	}
	if fmt.Sprint(asked) != "[Your name? false Password true]" {
		t.Errorf("asked %v", asked)
	}
	resp, _, err := get(t, f, "gemini://"+s.Addr()+"/name", func(r *protocols.Request) { r.Anonymous = true })
	if err != nil || resp.Kind != protocols.KindSearchIndex || len(asked) != 2 {
		t.Errorf("anonymous: %v %+v, asked %v", err, resp, asked)
	}
}
