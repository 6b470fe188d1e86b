package gopher_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/protocols/gopher"
	"github.com/urlderef/deref/url"
)

// server answers every connection with reply and records the request
// line it received (up to CRLF; a filled form up to its "." line).
type server struct {
	ln    net.Listener
	mu    sync.Mutex
	reqs  []string
	reply func(req string, w io.Writer)
}

func start(t testing.TB, reply func(req string, w io.Writer)) *server {
	t.Helper()
	s := &server{reply: reply}
	ln, err := testserver.Listen(s.serve)
	if err != nil {
		t.Fatal(err)
	}
	s.ln = ln
	t.Cleanup(func() { ln.Close() })
	return s
}

// serve reads one request and answers it with the scripted reply.
func (s *server) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	line, _ := br.ReadString('\n')
	req := strings.TrimSuffix(line, "\r\n")
	if strings.HasSuffix(req, "\t1") { // a filled form follows
		for {
			l, err := br.ReadString('\n')
			req += "\r\n" + strings.TrimSuffix(l, "\r\n")
			if err != nil || l == ".\r\n" {
				break
			}
		}
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	s.reply(req, c)
}

func (s *server) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		return ""
	}
	return s.reqs[len(s.reqs)-1]
}

func (s *server) addr() string { return s.ln.Addr().String() }

func client() *fetch.Client {
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	return c
}

func get(t *testing.T, c *fetch.Client, u string) (string, *fetch.Response, error) {
	t.Helper()
	resp, err := c.Get(context.Background(), u)
	if err != nil {
		return "", nil, err
	}
	b, err := io.ReadAll(resp.Body)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	return string(b), resp, err
}

func TestRequestLines(t *testing.T) {
	s := start(t, func(req string, w io.Writer) { io.WriteString(w, "ok\r\n.\r\n") })
	c := client()
	h := "gopher://" + s.addr()
	for _, tt := range []struct{ url, want string }{
		{h, ""},                  // RFC 1738 §3.4.1: empty path, type 1, empty selector
		{h + "/", ""},            // the same
		{h + "/1/1200", "/1200"}, // curl's case: the type is never sent
		{h + "/7/the/search/engine%09query%20succeeded/1202", "/the/search/engine\tquery succeeded/1202"},
		{h + "/00/file", "0/file"},       // a selector that starts with a copy of the type
		{h + "/0a;b?c=d", "a;b?c=d"},     // no character is reserved
		{h + "/0/x%09%09+", "/x\t+"},     // Gopher+ default view: selector TAB +
		{h + "/0/x%09%09!", "/x\t!"},     // all attributes
		{h + "/1/d%09%09$", "/d\t$"},     // attributes of every item
		{h + "/7/s%09q%09+", "/s\tq\t+"}, // a search with Gopher+
		{h + "/0/x%09%09+application/postscript%20Es_ES", "/x\t+application/postscript Es_ES"},
		{h + "/1/f%09%09+%091%0D%0A+-1%0D%0Aone%0D%0Atwo%0D%0A.%0D%0A", "/f\t+\t1\r\n+-1\r\none\r\ntwo\r\n."}, // §3.4.9
	} {
		get(t, c, tt.url)
		if got := s.last(); got != tt.want {
			t.Errorf("%s sent %q, want %q", tt.url, got, tt.want)
		}
	}
	// Type 7 without a search names an index: nothing is sent.
	n := len(s.reqs)
	_, resp, err := get(t, c, h+"/7/srch")
	if err != nil || resp.Kind != fetch.KindSearchIndex || len(s.reqs) != n {
		t.Errorf("search index: %v %v", resp, err)
	}
	// Injection: a decoded CR LF never reaches the server.
	if _, _, err := get(t, c, h+"/0/a%0D%0Ab"); !errors.Is(err, fetch.ErrBadURL) {
		t.Errorf("CRLF in selector: %v", err)
	}
}

func TestTextAndBinary(t *testing.T) {
	replies := map[string]string{
		"/text":        "line one\r\n..dot stuffed\r\n.\r\nnot part of it\r\n",
		"/noterm":      "no terminator\nbyte exact\n",
		"/bin":         "\x00\x01.\r\n.\r\n\x02",
		"/missing":     "3'/missing' does not exist (no handler found)\t\terror.host\t1\r\n",
		"/plus":        "+5\r\nhello",
		"/gnmissing":   "Error: File or directory not found! (null)\r\n___________\r\n                 Gophered by Gophernicus/3.1.1\r\n",
		"/missinginfo": "iThe server says:\t\terror.host\t1\r\n3 not here\t\terror.host\t1\r\n.\r\n",
		"/notonly":     "3 one item is missing\t\terror.host\t1\r\n0About\t/about\th\t70\r\n.\r\n",
		"/short":       "+50\r\nhello",
		"/plusdot":     "+-1\r\nline\r\n..x\r\n.\r\n",
		"/plusnot":     "+-1\r\nline\r\n",
		"/plusall":     "+-2\r\nraw\r\n.\r\nto close",
		"/err1":        "--1\r\n1 Admin <a@b>\r\n'/err1' does not exist\r\n",
		"/err2":        "--2\r\n2 Admin <a@b>\r\ntry later\r\n",
		"/moved":       "--2\r\n3 Admin <a@b>\r\nnow at gopher://elsewhere/\r\n",
		"/longline":    strings.Repeat("x", 200000),
	}
	s := start(t, func(req string, w io.Writer) {
		sel, _, _ := strings.Cut(req, "\t")
		io.WriteString(w, replies[sel])
	})
	c := client()
	h := "gopher://" + s.addr()
	for _, tt := range []struct {
		url, body string
		err       error
	}{
		{h + "/0/text", "line one\n.dot stuffed\n", nil},
		{h + "/0/noterm", "no terminator\nbyte exact\n", nil},
		{h + "/9/bin", "\x00\x01.\r\n.\r\n\x02", nil},
		{h + "/0/missing", "", fetch.ErrNotFound},
		{h + "/1/missing", "", fetch.ErrNotFound}, // a menu that is only an error is the error
		{h + "/1/missinginfo", "", fetch.ErrNotFound},
		{h + "/1/gnmissing", "", fetch.ErrNotFound}, // gophernicus: a text, no menu line at all
		{h + "/1/notonly", "3 one item is missing\t\terror.host\t1\n0About\t/about\th\t70\n", nil},
		{h + "/0/plus%09%09+", "hello", nil},
		{h + "/0/short%09%09+", "", fetch.ErrShortBody},
		{h + "/0/plusdot%09%09+", "line\n.x\n", nil},
		{h + "/0/plusnot%09%09+", "", fetch.ErrShortBody},
		{h + "/9/plusall%09%09+", "raw\r\n.\r\nto close", nil},
		{h + "/0/err1%09%09+", "", fetch.ErrNotFound},
		{h + "/0/err2%09%09+", "", fetch.ErrTemporary},
		{h + "/0/moved%09%09+", "", fetch.ErrNotFound},
		{h + "/0/longline", "", fetch.ErrProtocol},
	} {
		body, _, err := get(t, c, tt.url)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("%s: %v, want %v", tt.url, err, tt.err)
			}
			continue
		}
		if err != nil || body != tt.body {
			t.Errorf("%s: %q, %v; want %q", tt.url, body, err, tt.body)
		}
	}
}

func TestMenu(t *testing.T) {
	menu := "0About this\t/about.txt\texample.org\t70\t+\r\n" +
		"1Sub menu\t/sub\texample.org\t7070\r\n" +
		"7Search\t/cgi/search\texample.org\t70\t?\r\n" +
		"iJust text\tfake\t(NULL)\t0\r\n" +
		"8Login\tguest\texample.org\t23\r\n" +
		"TMainframe\t\texample.org\t23\r\n" +
		"hA web page\tURL:http://example.org/x\texample.org\t70\r\n" +
		"9A file with space\t/files/a b.bin\texample.org\t70\r\n" +
		"ZUnknown type\t/z\texample.org\t70\r\n" +
		"3An error\t\terror.host\t1\r\n" +
		".\r\n"
	s := start(t, func(req string, w io.Writer) { io.WriteString(w, menu) })
	c := client()
	raw, resp, err := get(t, c, "gopher://"+s.addr()+"/1/")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Kind != fetch.KindDirectory || !strings.Contains(raw, "About this") {
		t.Fatalf("menu: %v %q", resp.Kind, raw)
	}
	want := []struct {
		name, typ, url string
		kind           fetch.Kind
	}{
		{"About this", "0+", "gopher://example.org/0/about.txt", fetch.KindFile},
		{"Sub menu", "1", "gopher://example.org:7070/1/sub", fetch.KindDirectory},
		{"Search", "7?", "gopher://example.org/7/cgi/search", fetch.KindSearchIndex},
		{"Just text", "i", "", fetch.KindInfo},
		{"Login", "8", "telnet://guest@example.org:23/", fetch.KindSession},
		{"Mainframe", "T", "tn3270://example.org:23/", fetch.KindSession},
		{"A web page", "h", "http://example.org/x", fetch.KindFile},
		{"A file with space", "9", "gopher://example.org/9/files/a%20b.bin", fetch.KindFile},
		{"Unknown type", "Z", "gopher://example.org/Z/z", fetch.KindFile},
		{"An error", "3", "", fetch.KindInfo},
	}
	if len(resp.Entries) != len(want) {
		t.Fatalf("%d entries, want %d: %+v", len(resp.Entries), len(want), resp.Entries)
	}
	if e := resp.Entries[1]; e.Selector != "/sub" || e.Host != "example.org" || e.Port != 7070 {
		t.Errorf("selector, host and port of %+v", e)
	}
	for i, w := range want {
		e := resp.Entries[i]
		if e.Name != w.name || e.Type != w.typ || e.URL != w.url || e.Kind != w.kind {
			t.Errorf("entry %d: %+v, want %+v", i, e, w)
		}
		if e.URL != "" && strings.HasPrefix(e.URL, "gopher:") {
			if _, err := url.Parse(e.URL); err != nil {
				t.Errorf("entry URL %s does not parse: %v", e.URL, err)
			}
		}
	}
}

func TestAttributes(t *testing.T) {
	attrs := "+-2\r\n+INFO: 0hello.txt\t/hello.txt\t127.0.0.1\t7070\t+\r\n+ADMIN:\r\n Admin: Unconfigured <a@b>\r\n Mod-Date: Thu Jan  2 03:04:05 2020 <20200102030405>\r\n+VIEWS:\r\n text/plain: <1k>\r\n application/postscript Es_ES: <10k>\r\n+ABSTRACT:\r\n A short text.\r\n"
	s := start(t, func(req string, w io.Writer) { io.WriteString(w, attrs) })
	_, resp, err := get(t, client(), "gopher://"+s.addr()+"/0/hello.txt%09%09!")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, a := range resp.Attributes {
		names = append(names, a.Name)
	}
	if strings.Join(names, ",") != "INFO,ADMIN,VIEWS,ABSTRACT" {
		t.Fatalf("attributes %q", names)
	}
	if v := resp.Attributes[2]; len(v.Lines) != 2 || v.Lines[1] != "application/postscript Es_ES: <10k>" {
		t.Errorf("VIEWS %+v", v)
	}
	if a := resp.Attributes[1]; a.Item != "0hello.txt\t/hello.txt\t127.0.0.1\t7070\t+" || a.Lines[0] != "Admin: Unconfigured <a@b>" {
		t.Errorf("ADMIN %+v", a)
	}
}

// TestStall: a server that stops in the middle of a Gopher+ item, or of
// a menu (read whole before Fetch returns), ends the retrieval at the idle
// time-out.
func TestStall(t *testing.T) {
	for _, tt := range []struct{ sent, path string }{
		{"+-2\r\nsome", "/9/x%09%09+"},
		{"0one\t/one\t127.0.0.1\t70\r\n0tw", "/1/"},
	} {
		s := start(t, func(req string, w io.Writer) {
			io.WriteString(w, tt.sent)
			time.Sleep(3 * time.Second)
		})
		c := client()
		c.IdleTimeout = 300 * time.Millisecond
		if _, _, err := get(t, c, "gopher://"+s.addr()+tt.path); !errors.Is(err, fetch.ErrTimeout) {
			t.Errorf("stall in %s: %v", tt.path, err)
		}
	}
}

// TestDownloadSplice fetches binary items into files, where the socket is
// spliced into the file: until close, and a Gopher+ length that the
// server does not keep.
func TestDownloadSplice(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 64<<10) // 1 MiB
	s := start(t, func(req string, w io.Writer) {
		switch {
		case strings.HasPrefix(req, "/big\t+"):
			io.WriteString(w, "+1048576\r\n"+big)
		case strings.HasPrefix(req, "/short\t+"):
			io.WriteString(w, "+2000000\r\n"+big)
		default:
			io.WriteString(w, big)
		}
	})
	c := client()
	dir := t.TempDir()
	for _, u := range []string{"/9/big", "/9/big%09%09+"} {
		p, err := c.Download(context.Background(), "gopher://"+s.addr()+u, dir)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if b, _ := os.ReadFile(p); string(b) != big {
			t.Errorf("%s: %d bytes", u, len(b))
		}
	}
	if _, err := c.Download(context.Background(), "gopher://"+s.addr()+"/9/short%09%09+", dir); !errors.Is(err, fetch.ErrShortBody) {
		t.Errorf("short Gopher+ body: %v", err)
	}
	if _, err := os.Stat(dir + "/short"); !os.IsNotExist(err) {
		t.Errorf("a short object sits under its final name: %v", err)
	}
}

// TestAskForm fills in a Gopher+ form: the +ASK block is fetched, the
// questions answered by the callback, and the filled form sent as RFC 1738
// §3.4.9 shows.
func TestAskForm(t *testing.T) {
	s := start(t, func(req string, w io.Writer) {
		switch req {
		case "/form\t!+ASK":
			io.WriteString(w, "+-2\r\n+ASK:\r\n Ask: Your name?\tanon\r\n Note: Be kind.\r\n Choose: Colour\tred\tblue\r\n")
		case "/form\t+\t1\r\n+-1\r\nAlice\r\nblue\r\n.":
			io.WriteString(w, "+-2\r\nthanks\r\n")
		default:
			io.WriteString(w, "--1\r\n1 admin\r\nunexpected request\r\n")
		}
	})
	c := client()
	var asked []gopher.Question
	c.Gopher.Ask = func(ctx context.Context, qs []gopher.Question) ([]string, error) {
		asked = qs
		return []string{"Alice", "blue"}, nil
	}
	body, _, err := get(t, c, "gopher://"+s.addr()+"/1/form%09%09?")
	if err != nil || body != "thanks\r\n" && body != "thanks\n" {
		t.Errorf("filled form: %q, %v (last request %q)", body, err, s.last())
	}
	if len(asked) != 3 || asked[0].Prompt != "Your name?" || asked[0].Choices[0] != "anon" || asked[1].NeedsAnswer() || asked[2].Choices[1] != "blue" {
		t.Errorf("questions %+v", asked)
	}
	c.Gopher.Ask = nil
	if _, _, err := get(t, c, "gopher://"+s.addr()+"/1/form%09%09?"); !errors.Is(err, fetch.ErrNotRetrievable) {
		t.Errorf("a form without anyone to answer: %v", err)
	}
}

// TestGophers checks gophers:// (TLS): the certificate is verified, and a
// trusted server is read as plain Gopher over TLS.
func TestGophers(t *testing.T) {
	hs := httptest.NewUnstartedServer(nil)
	hs.StartTLS()
	defer hs.Close()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", hs.TLS)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go testserver.Serve(ln, func(c net.Conn) {
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadString('\n')
		io.WriteString(c, "secure "+strings.TrimSpace(line)+"\r\n.\r\n")
	})
	u := "gophers://" + ln.Addr().String() + "/0/sel"
	c := client()
	if _, _, err := get(t, c, u); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted certificate: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(hs.Certificate())
	c.TLSConfig = &tls.Config{RootCAs: pool}
	body, _, err := get(t, c, u)
	if err != nil || body != "secure /sel\n" {
		t.Errorf("gophers: %q, %v", body, err)
	}
}

// TestIfModifiedSince: a conditional retrieval asks a Gopher+ server for
// the item's Mod-Date first, and transfers nothing when it is not newer;
// a plain Gopher server, which has no attributes, gets the item fetched.
func TestIfModifiedSince(t *testing.T) {
	attrs := "+-2\r\n+INFO: 0hello.txt\t/hello.txt\t127.0.0.1\t7070\t+\r\n+ADMIN:\r\n Mod-Date: Thu Jan  2 03:04:05 2020 <20200102030405>\r\n"
	var reqs []string
	var mu sync.Mutex
	s := start(t, func(req string, w io.Writer) {
		mu.Lock()
		reqs = append(reqs, req)
		mu.Unlock()
		if strings.HasSuffix(req, "\t!") {
			io.WriteString(w, attrs)
			return
		}
		io.WriteString(w, "hello\r\n.\r\n")
	})
	c := client()
	u := url.MustParse("gopher://" + s.addr() + "/0/hello.txt")
	mod := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	_, err := c.FetchWith(context.Background(), u, fetch.FetchOptions{IfModifiedSince: mod})
	if !errors.Is(err, fetch.ErrNotModified) || len(reqs) != 1 {
		t.Errorf("unchanged: %v, requests %q", err, reqs)
	}
	resp, err := c.FetchWith(context.Background(), u, fetch.FetchOptions{IfModifiedSince: mod.Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(reqs) != 3 || reqs[2] != "/hello.txt" {
		t.Errorf("changed: requests %q", reqs)
	}

	plain := start(t, func(req string, w io.Writer) {
		if strings.Contains(req, "\t") {
			io.WriteString(w, "3 no such item\tfake\t(NULL)\t0\r\n.\r\n") // no Gopher+
			return
		}
		io.WriteString(w, "hello\r\n.\r\n")
	})
	pu := url.MustParse("gopher://" + plain.addr() + "/0/hello.txt")
	resp, err = c.FetchWith(context.Background(), pu, fetch.FetchOptions{IfModifiedSince: mod})
	if err != nil {
		t.Fatalf("plain Gopher: %v", err)
	}
	resp.Body.Close()
}

// A Gopher URL's local name comes from its selector; the item type before
// it is no part of the name (it was: gopher://h/0about.txt gave
// "0about.txt", gopher://h/1/ gave "1").
func TestSuggestedName(t *testing.T) {
	for raw, want := range map[string]string{
		"gopher://h/0about.txt":          "about.txt",
		"gopher://h/0/pub/hello.txt":     "hello.txt",
		"gopher://h/1/":                  "index",
		"gopher://h/":                    "index",
		"gopher://h/1/pub/":              "pub",
		"gopher://h/9a%2Fb.bin":          "b.bin",
		"gopher://h/7/cgi/search%09word": "search",
		"gopher://h/0..":                 "index",
	} {
		if got := fetch.SuggestedName(url.MustParse(raw)); got != want {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}
}

// TestTypeWord: item types have the words menus show for them; a type
// without one has none.
func TestTypeWord(t *testing.T) {
	for typ, want := range map[byte]string{'1': "menu", '7': "search", '8': "telnet", 'T': "tn3270", '9': "binary", 'z': ""} {
		if got := gopher.TypeWord(typ); got != want {
			t.Errorf("type %q: %q, want %q", typ, got, want)
		}
	}
}
