package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/gateway"
	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/internal/testserver/askd"
	"github.com/urlderef/deref/internal/testserver/ftpd"
	"github.com/urlderef/deref/internal/testserver/nntpd"
	"github.com/urlderef/deref/internal/testserver/waisd"
	"github.com/urlderef/deref/url"
)

// gopherServer answers selectors from a table; a selector it does not
// know gets an error menu.
func gopherServer(t *testing.T, answers map[string]string) string {
	t.Helper()
	ln, err := testserver.Listen(func(c net.Conn) {
		defer c.Close()
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return
		}
		sel, _, _ := strings.Cut(strings.TrimRight(line, "\r\n"), "\t")
		host, port, _ := net.SplitHostPort(c.LocalAddr().String())
		a, ok := answers[sel]
		if !ok {
			a = "3not here\t\terror.host\t1\r\n.\r\n"
		}
		io.WriteString(c, strings.NewReplacer("HOST", host, "PORT", port).Replace(a))
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// start serves a gateway with a client of its own.
func start(t *testing.T, o gateway.Options) *httptest.Server {
	t.Helper()
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	s := httptest.NewServer(gateway.Handler(c, o))
	t.Cleanup(s.Close)
	return s
}

func get(t *testing.T, u string, header ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// A hostile menu, markup and script in every field, renders as text: no
// element of the server's, no javascript: link, no control character;
// the page forbids inline script.
func TestHostileMenu(t *testing.T) {
	addr := gopherServer(t, map[string]string{
		"/": "i<script>alert('info')</script>\tx\terror.host\t1\r\n" +
			"0<img src=x onerror=alert(1)>\t/a\"><script>alert(2)</script>\tHOST\tPORT\r\n" +
			"hClick me\tURL:javascript:alert(3)\tHOST\tPORT\r\n" +
			"hData\tURL:data:text/html,<script>alert(4)</script>\tHOST\tPORT\r\n" +
			"1Bell\x07 and escape\x1b[31m\t/menu\tHOST\tPORT\r\n" +
			"hThe web\tURL:https://example.org/?a=1&b=2\tHOST\tPORT\r\n" +
			"1Elsewhere\t/\tgopher.example.org\t70\r\n" +
			".\r\n",
	})
	s := start(t, gateway.Options{AllowPrivate: true})
	resp, page := get(t, s.URL+"/gopher/"+addr+"/1/")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, page)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe-inline") || resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("Content-Security-Policy %q, cookies %q", csp, resp.Header.Get("Set-Cookie"))
	}
	for _, bad := range []string{"<script", "<img", "javascript:", "data:text", "\x07", "\x1b"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q:\n%s", bad, page)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(&#39;info&#39;)&lt;/script&gt;", "&lt;img src=x onerror=alert(1)&gt;",
		`href="https://example.org/?a=1&amp;b=2"`, `href="/gopher/gopher.example.org/1/"`, `href="/gopher/` + addr + `/1/menu"`} {
		if !strings.Contains(page, want) {
			t.Errorf("no %q in the page:\n%s", want, page)
		}
	}
}

// Without AllowPrivate, a page of a loopback or private address, or of a
// name that resolves to one, is refused, and nothing is asked of it.
func TestPrivateRefused(t *testing.T) {
	asked := 0
	var mu sync.Mutex
	ln, err := testserver.Listen(func(c net.Conn) {
		mu.Lock()
		asked++
		mu.Unlock()
		c.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	s := start(t, gateway.Options{})
	for _, target := range []string{"/gopher/127.0.0.1:" + port + "/1/", "/gopher/localhost:" + port + "/0/x", "/gopher/10.0.0.1/1/",
		"/ftp/127.0.0.1:" + port + "/pub/", "/gopher/[::1]:" + port + "/1/", "/gopher/169.254.169.254/0/latest"} {
		resp, page := get(t, s.URL+target)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(page, "--allow-private") {
			t.Errorf("%s: status %d:\n%s", target, resp.StatusCode, page)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != 0 {
		t.Errorf("the loopback server was asked %d times", asked)
	}
}

// Allow narrows the hosts served; it admits no private address by itself.
func TestAllowPatterns(t *testing.T) {
	addr := gopherServer(t, map[string]string{"/": "iwelcome\t\tx\t1\r\n.\r\n"})
	_, port, _ := net.SplitHostPort(addr)
	s := start(t, gateway.Options{AllowPrivate: true, Allow: []string{"127.0.0.1:" + port}})
	if resp, page := get(t, s.URL+"/gopher/"+addr+"/1/"); resp.StatusCode != 200 || !strings.Contains(page, "welcome") {
		t.Errorf("the allowed host: %d %s", resp.StatusCode, page)
	}
	if resp, page := get(t, s.URL+"/gopher/gopher.example.org/1/"); resp.StatusCode != http.StatusForbidden || !strings.Contains(page, "gopher.example.org is not among the hosts") {
		t.Errorf("a host no pattern admits: %d %s", resp.StatusCode, page)
	}
	// Another port of the host allowed: the port is what is refused.
	if resp, page := get(t, s.URL+"/gopher/127.0.0.1:1/1/"); resp.StatusCode != http.StatusForbidden || !strings.Contains(page, "port 1 of 127.0.0.1 is not among those this gateway serves (it serves 127.0.0.1:"+port+")") {
		t.Errorf("another port of the allowed host: %d %s", resp.StatusCode, page)
	}
	s2 := start(t, gateway.Options{Allow: []string{"127.0.0.1:" + port}})
	if resp, _ := get(t, s2.URL+"/gopher/"+addr+"/1/"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a pattern naming a loopback address without AllowPrivate: %d", resp.StatusCode)
	}
}

// A client that uses the gateway as its proxy (an absolute-form request
// line) gets the raw object, not a page.
func TestProxyMode(t *testing.T) {
	addr := gopherServer(t, map[string]string{
		"/hello.txt": "hello through the proxy\r\n.\r\n",
		"/":          "0Hello\t/hello.txt\tHOST\tPORT\r\n.\r\n",
	})
	s := start(t, gateway.Options{AllowPrivate: true})
	for target, want := range map[string]string{
		"gopher://" + addr + "/0/hello.txt": "hello through the proxy\n", // a text item, its lines as deref reads them
		"gopher://" + addr + "/1/":          "0Hello\t/hello.txt\t127.0.0.1\t",
	} {
		status, b := proxyGet(t, s, target, "")
		if status != 200 || !strings.HasPrefix(b, want) || strings.Contains(b, "<html") {
			t.Errorf("%s: %d %q", target, status, b)
		}
	}
	// A browser asking for HTML (lynx with gopher_proxy) gets the menu as
	// a page whose links are the gateway's pages of the items, at the
	// gateway's own address, and a text item as it is.
	for target, want := range map[string]string{
		"gopher://" + addr + "/1/":          `href="` + s.URL + `/gopher/` + addr + `/0/hello.txt"`,
		"gopher://" + addr + "/0/hello.txt": "hello through the proxy\n",
	} {
		status, b := proxyGet(t, s, target, "text/html, text/plain, text/sgml, */*;q=0.01")
		if html := strings.Contains(b, "<html"); status != 200 || !strings.Contains(b, want) || html != strings.HasSuffix(target, "/1/") {
			t.Errorf("%s, asking for HTML: %d %q", target, status, b)
		}
	}
}

// proxyGet asks the gateway s for target as a proxy is asked (the
// absolute URL in the request line), with accept as its Accept field
// when set.
func proxyGet(t *testing.T, s *httptest.Server, target, accept string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	head := "GET " + target + " HTTP/1.0\r\n"
	if accept != "" {
		head += "Accept: " + accept + "\r\n"
	}
	io.WriteString(c, head+"\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A menu renders as it arrives: the page shows its first items while the
// server has not sent the rest.
func TestMenuStreams(t *testing.T) {
	release := make(chan struct{})
	ln, err := testserver.Listen(func(c net.Conn) {
		defer c.Close()
		bufio.NewReader(c).ReadString('\n')
		host, port, _ := net.SplitHostPort(c.LocalAddr().String())
		w := bufio.NewWriter(c)
		for i := range 50000 {
			if i == 1000 {
				w.Flush()
				<-release
			}
			fmt.Fprintf(w, "0Item %d\t/item/%d\t%s\t%s\r\n", i, i, host, port)
		}
		w.WriteString(".\r\n")
		w.Flush()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := start(t, gateway.Options{AllowPrivate: true})
	resp, err := http.Get(s.URL + "/gopher/" + ln.Addr().String() + "/1/")
	if err != nil {
		close(release)
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			close(release)
			t.Fatalf("the page ended before item 900: %v", err)
		}
		if strings.Contains(line, ">Item 900<") {
			break // while the server still holds 49,000 items
		}
	}
	close(release)
	rest, _ := io.ReadAll(br)
	if !strings.Contains(string(rest), ">Item 49999<") || !strings.HasSuffix(string(rest), "</html>\n") {
		t.Errorf("the page's end: %q", rest[max(0, len(rest)-200):])
	}
}

// An FTP folder is a table with its parent; a file comes as it is, with
// its length, type and time, a range when asked, as an attachment when
// downloaded.
func TestFTPPages(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "pub", "sub"), 0o755)
	data := bytes.Repeat([]byte("0123456789"), 1000)
	os.WriteFile(filepath.Join(root, "pub", "data.bin"), data, 0o644)
	os.WriteFile(filepath.Join(root, "pub", "<i>odd.txt"), []byte("odd\n"), 0o644)
	fs, err := ftpd.Start(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	s := start(t, gateway.Options{AllowPrivate: true})
	resp, page := get(t, s.URL+"/ftp/"+fs.Addr()+"/pub/")
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, page)
	}
	for _, want := range []string{`href="/ftp/` + fs.Addr() + `/pub/data.bin"`, ">data.bin</a>", ">10000<", ">sub/</a>", "&lt;i&gt;odd.txt", `href="/ftp/` + fs.Addr() + `/"`} {
		if !strings.Contains(page, want) {
			t.Errorf("no %q in the folder's page:\n%s", want, page)
		}
	}
	resp, body := get(t, s.URL+"/ftp/"+fs.Addr()+"/pub/data.bin")
	if resp.StatusCode != 200 || body != string(data) || resp.Header.Get("Content-Length") != "10000" || resp.Header.Get("Last-Modified") == "" || !strings.HasSuffix(resp.Header.Get("Content-Security-Policy"), "; sandbox") {
		t.Errorf("the file: %d, %d bytes, %v", resp.StatusCode, len(body), resp.Header)
	}
	resp, body = get(t, s.URL+"/ftp/"+fs.Addr()+"/pub/data.bin", "Range", "bytes=9990-")
	if resp.StatusCode != 206 || body != "0123456789" || resp.Header.Get("Content-Range") != "bytes 9990-9999/10000" {
		t.Errorf("a range: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	// A large object goes on the client's connection itself (spliced from
	// the data connection where the system can): whole, with its length.
	big := bytes.Repeat([]byte("a large object "), 3<<16)
	os.WriteFile(filepath.Join(root, "pub", "big.bin"), big, 0o644)
	resp, body = get(t, s.URL+"/ftp/"+fs.Addr()+"/pub/big.bin")
	if resp.StatusCode != 200 || body != string(big) || resp.ContentLength != int64(len(big)) || resp.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("a large file: %d, %d of %d bytes, %v", resp.StatusCode, len(body), len(big), resp.Header)
	}
	resp, _ = get(t, s.URL+"/ftp/"+fs.Addr()+"/pub/data.bin?download=1")
	if cd := resp.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") || !strings.Contains(cd, "data.bin") {
		t.Errorf("download: Content-Disposition %q", cd)
	}
}

// A text item is a page: UTF-8 when it is, else read as Latin-1.
func TestTextCharset(t *testing.T) {
	addr := gopherServer(t, map[string]string{
		"/utf8.txt":   "gr\xc3\xbc\xc3\x9fe <b>\r\n.\r\n",
		"/latin1.txt": "gr\xfc\xdfe\r\n.\r\n",
	})
	s := start(t, gateway.Options{AllowPrivate: true})
	for sel, want := range map[string]string{"/utf8.txt": "grüße &lt;b&gt;", "/latin1.txt": "grüße"} {
		resp, page := get(t, s.URL+"/gopher/"+addr+"/0"+sel)
		if resp.StatusCode != 200 || !strings.Contains(page, "<pre>"+want) || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Errorf("%s: %d %q", sel, resp.StatusCode, page)
		}
	}
}

// A search item is named so in its menu and is a form; its answer a
// menu; /?url= leads to a page.
func TestSearch(t *testing.T) {
	addr := gopherServer(t, map[string]string{
		"":         "7Find\t/find\tHOST\tPORT\r\n.\r\n",
		"/find":    "iyou asked\t\tx\t1\r\n.\r\n",
		"/nothere": "",
	})
	s := start(t, gateway.Options{AllowPrivate: true})
	if _, page := get(t, s.URL+"/gopher/"+addr+"/1"); !strings.Contains(page, `<span class="kind">search</span>`) {
		t.Errorf("the menu does not name the item a search:\n%s", page)
	}
	_, page := get(t, s.URL+"/gopher/"+addr+"/7/find")
	if !strings.Contains(page, `<input type="text" name="q"`) {
		t.Errorf("no search form:\n%s", page)
	}
	resp, _ := get(t, s.URL+"/gopher/"+addr+"/7/find?q=hello+you")
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || loc != "/gopher/"+addr+"/7/find%09hello%20you" {
		t.Fatalf("the form's answer: %d %q", resp.StatusCode, loc)
	}
	if _, page := get(t, s.URL+resp.Header.Get("Location")); !strings.Contains(page, "you asked") {
		t.Errorf("no results:\n%s", page)
	}
	resp, _ = get(t, s.URL+"/?url="+url.EscapeQuery("gopher://"+addr+"/7/find"))
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/gopher/"+addr+"/7/find" {
		t.Errorf("/?url=: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// file: is served only below AllowFile, never through a symbolic link
// out of it.
func TestFilePages(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(dir, "in.txt"), []byte("inside\n"), 0o644)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret\n"), 0o644)
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "link.txt")); err != nil {
		t.Skip("no symbolic links here")
	}
	none := start(t, gateway.Options{})
	if resp, _ := get(t, none.URL+"/file/"+filepath.ToSlash(dir)+"/in.txt"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("file: without AllowFile: %d", resp.StatusCode)
	}
	s := start(t, gateway.Options{AllowFile: dir})
	if resp, body := get(t, s.URL+"/file/"+filepath.ToSlash(dir)+"/in.txt"); resp.StatusCode != 200 || body != "inside\n" {
		t.Errorf("a file inside: %d %q", resp.StatusCode, body)
	}
	for _, p := range []string{filepath.ToSlash(dir) + "/link.txt", filepath.ToSlash(outside) + "/secret.txt", filepath.ToSlash(dir) + "/../" + filepath.Base(outside) + "/secret.txt"} {
		if resp, body := get(t, s.URL+"/file/"+p); resp.StatusCode != http.StatusForbidden || strings.Contains(body, "secret\n") {
			t.Errorf("%s: %d %q", p, resp.StatusCode, body)
		}
	}
}

// The access log has a line per request in Common Log Format, or JSON,
// with passwords hidden.
func TestAccessLog(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) })
	s := start(t, gateway.Options{Log: w})
	get(t, s.URL+"/ftp/alice:s3cret@127.0.0.1/pub/")
	get(t, s.URL+"/")
	time.Sleep(10 * time.Millisecond)
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || strings.Contains(out, "s3cret") || !strings.Contains(lines[0], `"GET /ftp/alice:***@127.0.0.1/pub/ HTTP/1.1" 403 `) ||
		!strings.HasPrefix(lines[0], "127.0.0.1 - - [") {
		t.Errorf("log:\n%s", out)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A WAIS database is a search form; a search, a list of hits linked to
// their documents; a document, its text.
func TestWAISPages(t *testing.T) {
	ws := waisd.New()
	if err := ws.Start(); err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s := start(t, gateway.Options{AllowPrivate: true})
	_, page := get(t, s.URL+"/wais/"+ws.Addr()+"/test")
	if !strings.Contains(page, `name="q"`) {
		t.Fatalf("no search form:\n%s", page)
	}
	resp, _ := get(t, s.URL+"/wais/"+ws.Addr()+"/test?q=gophers")
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || loc != "/wais/"+ws.Addr()+"/test?gophers" {
		t.Fatalf("the search: %d, to %q", resp.StatusCode, loc)
	}
	_, page = get(t, s.URL+loc)
	i := strings.Index(page, `<a href="/wais/`+ws.Addr()+`/test/TEXT/`)
	if i < 0 || !strings.Contains(page, "score 191") {
		t.Fatalf("no hit:\n%s", page)
	}
	href := page[i+len(`<a href="`):]
	href = href[:strings.Index(href, `"`)]
	resp, body := get(t, s.URL+strings.ReplaceAll(href, "&amp;", "&"))
	if resp.StatusCode != 200 || body != waisd.Alpha {
		t.Errorf("the document %s: %d %q", href, resp.StatusCode, body)
	}
}

// A group is its articles, newest first, fifty a page with links to the
// older ones; an article its headers and body, quoted lines set apart
// and markup escaped. The configured news server is reached where it is.
func TestNewsPages(t *testing.T) {
	ns := nntpd.New()
	ns.AddGroup("local.test", "Local test group")
	for i := 1; i <= 60; i++ {
		ns.Post("local.test", fmt.Sprintf("<a%d@test>", i), []string{"From: A <a@test>", fmt.Sprintf("Subject: article %d <b>", i), "Date: Sun, 22 Nov 2026 10:00:00 +0000"},
			"Hello.\n> a quoted <line>\nThe end.\n")
	}
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.NNTP.Server = ns.Addr()
	// The news server is the operator's: reached on loopback without
	// AllowPrivate, which other loopback servers still need.
	s := httptest.NewServer(gateway.Handler(c, gateway.Options{}))
	defer s.Close()
	if resp, _ := get(t, s.URL+"/nntp/127.0.0.1:1/local.test"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("another loopback news server: %d", resp.StatusCode)
	}
	_, page := get(t, s.URL+"/news/local.test")
	if !strings.Contains(page, `<a href="/news/a60@test">article 60 &lt;b&gt;</a>`) || strings.Contains(page, ">article 10 ") ||
		!strings.Contains(page, `href="/news/local.test?page=1">older</a>`) {
		t.Errorf("the group's first page:\n%s", page)
	}
	if _, page := get(t, s.URL+"/news/local.test?page=1"); !strings.Contains(page, ">article 10 &lt;b&gt;<") || strings.Contains(page, ">article 11 ") {
		t.Errorf("the group's second page:\n%s", page)
	}
	_, page = get(t, s.URL+"/news/a7@test")
	if !strings.Contains(page, `<span class="quote">&gt; a quoted &lt;line&gt;</span>`) || !strings.Contains(page, "<b>Subject</b>: article 7 &lt;b&gt;") {
		t.Errorf("the article:\n%s", page)
	}
	// Titles that name what is shown, and an article's way back.
	if _, page := get(t, s.URL+"/news/local.test"); !strings.Contains(page, "<title>Articles in local.test</title>") {
		t.Errorf("the group's title:\n%s", page)
	}
	if !strings.Contains(page, "<title>article 7 &lt;b&gt;</title>") || !strings.Contains(page, `href="/news/local.test">up</a>`) {
		t.Errorf("the article's title and way back:\n%s", page)
	}
	_, page = get(t, s.URL+"/nntp/"+ns.Addr()+"/local.test/7")
	if !strings.Contains(page, "<title>article 7 &lt;b&gt;</title>") || !strings.Contains(page, `/local.test">up</a>`) {
		t.Errorf("the nntp: article's title and way back:\n%s", page)
	}
}

// A Gopher+ form (an item flagged "?") is an HTML form of its +ASK
// questions; the answers go to the server as RFC 1738 §3.4.9 says, and
// the reply is the page. An item's attributes list its views as links.
func TestGopherPlusForms(t *testing.T) {
	ln, err := askd.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := start(t, gateway.Options{AllowPrivate: true})
	base := "/gopher/" + ln.Addr()
	_, page := get(t, s.URL+base+"/1/")
	if !strings.Contains(page, `href="`+base+`/0/form?ask=1"`) {
		t.Fatalf("the form's link:\n%s", page)
	}
	_, page = get(t, s.URL+base+"/0/form?ask=1")
	for _, want := range []string{"Sign &lt;b&gt;here&lt;/b&gt;", `name="a0" value="nobody"`, `<select name="a1"><option>red</option><option>green</option></select>`, `name="answered"`} {
		if !strings.Contains(page, want) {
			t.Errorf("no %q in the form:\n%s", want, page)
		}
	}
	resp, page := get(t, s.URL+base+"/0/form?answered=1&a0=Ada+Lovelace&a1=green")
	sent := strings.Join(ln.Answers(), "|")
	if resp.StatusCode != 200 || sent != "+-1|Ada Lovelace|green" || !strings.Contains(page, "Thanks, Ada Lovelace and green") {
		t.Errorf("the answers sent %q; the reply %d:\n%s", sent, resp.StatusCode, page)
	}
	if resp, _ := get(t, s.URL+base+"/0/form?answered=1&a0=two%0d%0alines&a1=red"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an answer with a line break: %d", resp.StatusCode)
	}
	_, page = get(t, s.URL+base+"/0/doc?attributes=1")
	if !strings.Contains(page, `href="`+base+`/0/doc%09%09&#43;application/pdf?raw=1"`) { // the "+" escaped for the attribute
		t.Errorf("no link to the PDF view:\n%s", page)
	}
}

// Every connection a page makes goes through the client's dial function,
// which the gateway guards: an FTP file's data connection as well as its
// control connection.
func TestDataConnectionsAreDialled(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "f.bin"), []byte("data"), 0o644)
	fs, err := ftpd.Start(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	var mu sync.Mutex
	var dialled []string
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialled = append(dialled, addr)
		mu.Unlock()
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	s := httptest.NewServer(gateway.Handler(c, gateway.Options{AllowPrivate: true}))
	defer s.Close()
	if resp, body := get(t, s.URL+"/ftp/"+fs.Addr()+"/f.bin"); resp.StatusCode != 200 || body != "data" {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dialled) < 2 || dialled[0] != fs.Addr() {
		t.Errorf("dialled %v: want the control connection, then the data connection", dialled)
	}
}

// A page never sends a protocol's lines to another protocol's port (RFC
// 1738 §6): a gopher: URL at the SMTP port is refused, nothing dialled.
func TestPortRule(t *testing.T) {
	s := start(t, gateway.Options{AllowPrivate: true})
	resp, page := get(t, s.URL+"/gopher/127.0.0.1:25/1/")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(page, "RFC 1738 §6") {
		t.Errorf("%d %s", resp.StatusCode, page)
	}
}

// The gateway mounted in a server of one's own, with a client of its
// own (its dial function is guarded: the client serves the gateway only);
// /?url= leads to a URL's page.
func ExampleHandler() {
	c := fetch.NewClient()
	c.NetrcFile = "" // a gateway answers for others: never with this machine's credentials
	mux := http.NewServeMux()
	mux.Handle("/", gateway.Handler(c, gateway.Options{}))
	s := httptest.NewServer(mux)
	defer s.Close()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(s.URL + "/?url=" + url.EscapeQuery("gopher://gopher.example.org/1/"))
	if err != nil {
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("Location"))
	// Output: 302 /gopher/gopher.example.org/1/
}

// Timeout bounds the wait for an answer to begin, not a transfer: an
// object that streams for longer than it comes whole, a server that says
// nothing gets 504.
func TestTimeout(t *testing.T) {
	ln, err := testserver.Listen(func(c net.Conn) {
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadString('\n')
		if strings.HasPrefix(line, "/silent") {
			time.Sleep(2 * time.Second)
			return
		}
		for i := range 6 { // 6 x 100 ms: longer than the Timeout
			fmt.Fprintf(c, "chunk %d\n", i)
			time.Sleep(100 * time.Millisecond)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := start(t, gateway.Options{AllowPrivate: true, Timeout: 300 * time.Millisecond})
	resp, body := get(t, s.URL+"/gopher/"+ln.Addr().String()+"/9/slow.bin")
	if resp.StatusCode != 200 || strings.Count(body, "chunk") != 6 {
		t.Errorf("a slow object: %d %q", resp.StatusCode, body)
	}
	resp, body = get(t, s.URL+"/gopher/"+ln.Addr().String()+"/9/silent.bin")
	if resp.StatusCode != http.StatusGatewayTimeout || !strings.Contains(body, "no answer within 300ms") {
		t.Errorf("a silent server: %d %q", resp.StatusCode, body)
	}
}

// The front page's ?url= leads to a page of the gateway or to the form
// again, never off it, whatever is typed.
func TestURLFormStaysOn(t *testing.T) {
	s := start(t, gateway.Options{AllowPrivate: true})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, typed := range []string{"//evil.invalid/x", "http://evil.invalid/", "https://evil.invalid/", "javascript:alert(1)", "/\\evil.invalid", "\\\\evil.invalid",
		"gopher:////evil.invalid/1/", "gopher://evil.invalid\r\nLocation: http://x.invalid/", "data:text/html,<script>alert(1)</script>", "gopher://127.0.0.1:7/1//evil.invalid"} {
		resp, err := noFollow.Get(s.URL + "/?url=" + neturl.QueryEscape(typed))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if loc != "" && (!strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, "/\\") || strings.ContainsAny(loc, "\r\n")) {
			t.Errorf("?url=%q: Location %q", typed, loc)
		}
	}
}

// A menu's title names it, and its blank info lines stay blank lines
// (they are its layout).
func TestMenuTitleAndBlankLines(t *testing.T) {
	addr := gopherServer(t, map[string]string{
		"/":     "iFirst\t\terror.host\t1\r\ni\t\terror.host\t1\r\niThird\t\terror.host\t1\r\n1Docs\t/docs\tHOST\tPORT\r\n.\r\n",
		"/docs": "0A file\t/docs/a\tHOST\tPORT\r\n.\r\n",
	})
	s := start(t, gateway.Options{AllowPrivate: true})
	_, page := get(t, s.URL+"/gopher/"+addr+"/1/")
	if !strings.Contains(page, "<title>The root menu of "+addr+"</title>") || !strings.Contains(page, `<li class="i">First</li>`+"\n"+`<li class="i">&#160;</li>`+"\n"+`<li class="i">Third</li>`) {
		t.Errorf("the root menu:\n%s", page)
	}
	if _, page := get(t, s.URL+"/gopher/"+addr+"/1/docs"); !strings.Contains(page, "<title>Menu /docs on "+addr+"</title>") {
		t.Errorf("a menu:\n%s", page)
	}
}
