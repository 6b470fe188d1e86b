package crawl_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
	"github.com/urlderef/deref/url"
)

// menuServer is a Gopher server for a test: it counts the requests per
// selector line and answers each with its answer function, given the
// line (CR LF taken off) and a function making menu lines that point
// back at the server.
type menuServer struct {
	ln    net.Listener
	mu    sync.Mutex
	asked map[string]int
}

// itemFunc makes a menu line of an item on the server itself.
type itemFunc func(t byte, name, sel string) string

func startMenuServer(t *testing.T, answer func(c net.Conn, line string, item itemFunc)) *menuServer {
	m := &menuServer{asked: map[string]int{}}
	ln, err := testserver.Listen(func(c net.Conn) {
		defer c.Close()
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		m.mu.Lock()
		m.asked[line]++
		m.mu.Unlock()
		host, port, _ := net.SplitHostPort(c.LocalAddr().String())
		answer(c, line, func(t byte, name, sel string) string {
			return fmt.Sprintf("%c%s\t%s\t%s\t%s\r\n", t, name, sel, host, port)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	m.ln = ln
	t.Cleanup(func() { ln.Close() })
	return m
}

// hole is a Gopher server whose menus link each other in a cycle, list
// items twice and link other hosts; it counts the requests per selector.
type hole struct {
	*menuServer
	robots string // served at the selector robots.txt when set
}

func startHole(t *testing.T) *hole {
	return startHoleWith(t, "")
}

func startHoleWith(t *testing.T, robots string) *hole {
	h := &hole{robots: robots}
	h.menuServer = startMenuServer(t, h.answer)
	return h
}

func (h *hole) answer(c net.Conn, sel string, item itemFunc) {
	switch {
	case sel == "robots.txt" && h.robots != "":
		io.WriteString(c, h.robots)
	case sel == "" || sel == "/":
		io.WriteString(c, "iwelcome\t\terror.host\t1\r\n"+item('1', "A", "/a")+item('1', "B", "/b")+item('0', "Readme", "/readme.txt")+
			"1Elsewhere\t/\tgopher.example.invalid\t70\r\n"+item('h', "A web page", "URL:http://www.example.invalid/")+".\r\n")
	case sel == "/a":
		io.WriteString(c, item('1', "Back to the top", "/")+item('1', "B again", "/b")+item('0', "Readme again", "/readme.txt")+item('9', "Data", "/a/data.bin")+".\r\n")
	case sel == "/b":
		io.WriteString(c, item('1', "A again", "/a")+item('1', "Deeper", "/b/c")+".\r\n")
	case sel == "/b/c":
		io.WriteString(c, item('0', "Deep", "/b/c/deep.txt")+".\r\n")
	case strings.HasSuffix(sel, ".txt"):
		io.WriteString(c, "text of "+sel+"\r\n.\r\n")
	case strings.HasSuffix(sel, ".bin"):
		io.WriteString(c, "\x00\x01binary")
	default:
		io.WriteString(c, "3not here\t\terror.host\t1\r\n.\r\n")
	}
}

func client() *fetch.Client {
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	return c
}

// Every item of the hole reachable on its host is fetched exactly once,
// menus in cycles and items listed twice included; other hosts are left
// alone.
func TestCrawlGopherHole(t *testing.T) {
	h := startHole(t)
	rep, err := crawl.Run(context.Background(), client(), []string{"gopher://" + h.ln.Addr().String() + "/1/"}, crawl.Options{Parallel: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/", "/a", "/b", "/readme.txt", "/a/data.bin", "/b/c", "/b/c/deep.txt"}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range want {
		if h.asked[s] != 1 {
			t.Errorf("%s asked %d times", s, h.asked[s])
		}
	}
	if h.asked["robots.txt"] != 1 {
		t.Errorf("robots.txt asked %d times", h.asked["robots.txt"])
	}
	if len(h.asked) != len(want)+1 || rep.Fetched != len(want) || rep.Failed != 0 {
		t.Errorf("asked %v; report %+v", h.asked, rep)
	}
}

// robots.txt (a Gopher server's, at the selector robots.txt) keeps the
// crawl from what it excludes for deref, or for every robot when it names
// none; IgnoreRobots fetches it all the same.
func TestCrawlRobots(t *testing.T) {
	h := startHoleWith(t, "User-agent: *\nDisallow: /b\nAllow: /b/c/deep.txt\n\nUser-agent: other\nDisallow: /\n")
	start := "gopher://" + h.ln.Addr().String() + "/1/"
	rep, err := crawl.Run(context.Background(), client(), []string{start}, crawl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	if h.asked["/b"] != 0 || h.asked["/a"] != 1 || rep.Excluded != 1 {
		t.Errorf("asked %v; report %+v", h.asked, rep)
	}
	h.mu.Unlock()
	rep, _ = crawl.Run(context.Background(), client(), []string{start}, crawl.Options{IgnoreRobots: true})
	if rep.Excluded != 0 || rep.Fetched != 7 {
		t.Errorf("ignoring robots.txt: %+v", rep)
	}
	h2 := startHoleWith(t, "User-agent: deref\nDisallow: /a\n\nUser-agent: *\nDisallow: /\n")
	rep, _ = crawl.Run(context.Background(), client(), []string{"gopher://" + h2.ln.Addr().String() + "/1/"}, crawl.Options{})
	h2.mu.Lock()
	defer h2.mu.Unlock()
	if h2.asked["/a"] != 0 || h2.asked["/b"] != 1 {
		t.Errorf("deref's own group: asked %v; report %+v", h2.asked, rep)
	}
}

// Prefix keeps a Gopher crawl below the start menu's selector, whatever
// the items' types.
func TestCrawlGopherPrefix(t *testing.T) {
	h := startHole(t)
	rep, err := crawl.Run(context.Background(), client(), []string{"gopher://" + h.ln.Addr().String() + "/1/b"}, crawl.Options{Prefix: true})
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if rep.Fetched != 3 || h.asked["/b"] != 1 || h.asked["/b/c"] != 1 || h.asked["/b/c/deep.txt"] != 1 || h.asked["/a"] != 0 {
		t.Errorf("report %+v, asked %v", rep, h.asked)
	}
}

// MaxDepth and MaxItems bound the crawl.
func TestCrawlBounds(t *testing.T) {
	h := startHole(t)
	start := "gopher://" + h.ln.Addr().String() + "/1/"
	rep, _ := crawl.Run(context.Background(), client(), []string{start}, crawl.Options{MaxDepth: 1})
	if rep.Fetched != 4 { // the top, A, B, Readme
		t.Errorf("depth 1: %+v", rep)
	}
	rep, _ = crawl.Run(context.Background(), client(), []string{start}, crawl.Options{MaxItems: 2})
	if rep.Fetched != 2 {
		t.Errorf("2 items: %+v", rep)
	}
}

// countingServer serves h, counting the requests for each path: asked
// says how many a path had.
func countingServer(t *testing.T, h nethttp.HandlerFunc) (s *httptest.Server, asked func(path string) int) {
	var mu sync.Mutex
	n := map[string]int{}
	s = httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		n[r.URL.Path]++
		mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s, func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return n[path]
	}
}

// An HTML site is crawled through its links, below the start with
// Prefix, and archived whole with a recorder: each page once, and the
// 404 of robots.txt.
func TestCrawlHTMLToWARC(t *testing.T) {
	s, asked := countingServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/site/":
			io.WriteString(w, `<a href="one.html">1</a> <a href="/site/two.html#x">2</a> <a href="/outside.html">out</a> <a href="mailto:a@b">m</a>`)
		case "/site/one.html":
			io.WriteString(w, `<a href="two.html">2</a> <a href="./">up</a>`)
		case "/site/two.html":
			io.WriteString(w, `<p>two</p>`)
		default:
			nethttp.NotFound(w, r)
		}
	})
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "site"), warc.Options{Software: "deref/test", CDX: true})
	if err != nil {
		t.Fatal(err)
	}
	c := client()
	rec := &warc.Recorder{W: w}
	c.Recorder = rec
	rep, err := crawl.Run(context.Background(), c, []string{s.URL + "/site/"}, crawl.Options{Prefix: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil || rec.Err() != nil {
		t.Fatal(err, rec.Err())
	}
	if rep.Fetched != 3 || asked("/outside.html") != 0 || asked("/site/two.html") != 1 || asked("/site/") != 1 {
		t.Errorf("report %+v, asked %d %d %d", rep, asked("/outside.html"), asked("/site/two.html"), asked("/site/"))
	}
	cdx, _ := os.ReadFile(filepath.Join(dir, "site.cdxj"))
	if n := strings.Count(string(cdx), "\n"); n != 4 || !strings.Contains(string(cdx), `"status":"404","url":"`+s.URL+`/robots.txt"`) { // robots.txt's 404 too, as wget archives it
		t.Errorf("%d index lines:\n%s", n, cdx)
	}
}

// A page's images, style sheets and scripts are fetched with its links,
// relative to its <base>, and what the style sheets load; its links to a mailbox, to a telnet session and
// to this machine's files are not followed, even across hosts, and are no
// failures.
func TestCrawlPageRequisites(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var sessions sync.WaitGroup
	connected := 0
	sessions.Add(1)
	go func() {
		defer sessions.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			connected++
			c.Close()
		}
	}()
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("not for the crawl"), 0o600); err != nil {
		t.Fatal(err)
	}
	fileURL := (&url.URL{Scheme: "file", HasAuthority: true, Path: filepath.ToSlash(secret)}).String()
	if !strings.HasPrefix(fileURL, "file:///") {
		fileURL = "file:///" + strings.TrimPrefix(fileURL, "file://")
	}
	s, asked := countingServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<base href="/assets/"><link rel="stylesheet" href="style.css"><script src="/app.js"></script>`+
				`<img src="logo.png" srcset="logo-2x.png 2x"><a href="%s">secret</a><a href="mailto:a@b">mail</a>`+
				`<a href="telnet://%s/">session</a><a href="/page.html">page</a>`, fileURL, ln.Addr())
		case "/page.html":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<p>a page</p>`)
		case "/assets/style.css":
			w.Header().Set("Content-Type", "text/css")
			io.WriteString(w, `@import "more.css"; /* url(commented.png) */ body { background: url(../bg.png) }`)
		case "/app.js", "/assets/logo.png", "/assets/logo-2x.png", "/assets/more.css", "/bg.png":
			io.WriteString(w, "bytes")
		default:
			nethttp.NotFound(w, r)
		}
	})
	var mu sync.Mutex
	var seen []string
	rep, err := crawl.Run(context.Background(), client(), []string{s.URL + "/"}, crawl.Options{SpanHosts: true,
		Events: func(ev crawl.Event) { mu.Lock(); seen = append(seen, ev.URL); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	sessions.Wait()
	for _, p := range []string{"/", "/page.html", "/assets/style.css", "/app.js", "/assets/logo.png", "/assets/logo-2x.png", "/assets/more.css", "/bg.png"} {
		if asked(p) != 1 {
			t.Errorf("%s asked %d times", p, asked(p))
		}
	}
	if rep.Fetched != 8 || rep.Failed != 0 || connected != 0 {
		t.Errorf("report %+v, %d telnet connections", rep, connected)
	}
	for _, u := range seen {
		if !strings.HasPrefix(u, s.URL+"/") {
			t.Errorf("followed %s", u)
		}
	}
}

// With PageRequisites, what a page is shown with is fetched outside the
// prefix and past MaxDepth, as wget -p takes it: images, style sheets and
// what they load, frames and their images; not the links a page, or a
// frame fetched as a requisite, leads to.
func TestCrawlPageRequisitesOption(t *testing.T) {
	s, asked := countingServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/docs/":
			io.WriteString(w, `<link rel="stylesheet" href="/static/style.css"><link rel="next" href="/static/next.html">`+
				`<img src="/static/logo.png"><iframe src="/static/frame.html"></iframe>`+
				`<a href="page.html">page</a><a href="/other/out.html">out</a><a href="/static/logo.png">the logo</a>`)
		case "/docs/page.html":
			io.WriteString(w, `<img src="pic.png"><a href="deep.html">deeper</a>`)
		case "/docs/deep.html":
			io.WriteString(w, `<img src="deep.png">`)
		case "/static/style.css":
			w.Header().Set("Content-Type", "text/css")
			io.WriteString(w, `body { background: url(bg.png) }`)
		case "/static/frame.html":
			io.WriteString(w, `<img src="fimg.png"><a href="nav.html">nav</a>`)
		default:
			w.Header().Set("Content-Type", "image/png")
			io.WriteString(w, "png")
		}
	})
	all := []string{"/docs/", "/docs/page.html", "/docs/deep.html", "/docs/pic.png", "/docs/deep.png", "/static/style.css",
		"/static/bg.png", "/static/logo.png", "/static/frame.html", "/static/fimg.png", "/static/nav.html", "/static/next.html", "/other/out.html"}
	before := map[string]int{}
	for _, tt := range []struct {
		name string
		o    crawl.Options
		want []string
	}{
		{"prefix and depth 1", crawl.Options{Prefix: true, MaxDepth: 1}, []string{"/docs/", "/docs/page.html"}},
		{"-p, prefix and depth 1", crawl.Options{Prefix: true, MaxDepth: 1, PageRequisites: true}, []string{"/docs/", "/docs/page.html",
			"/docs/pic.png", "/static/style.css", "/static/bg.png", "/static/logo.png", "/static/frame.html", "/static/fimg.png"}},
		{"-p alone", crawl.Options{MaxDepth: -1, PageRequisites: true}, []string{"/docs/",
			"/static/style.css", "/static/bg.png", "/static/logo.png", "/static/frame.html", "/static/fimg.png"}},
		{"no link followed", crawl.Options{MaxDepth: -1}, []string{"/docs/"}},
	} {
		rep, err := crawl.Run(context.Background(), client(), []string{s.URL + "/docs/"}, tt.o)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range all {
			switch n := asked(p) - before[p]; n {
			case 0:
			case 1:
				got = append(got, p)
			default:
				t.Errorf("%s: %s asked %d times", tt.name, p, n)
			}
			before[p] = asked(p)
		}
		slices.Sort(got)
		slices.Sort(tt.want)
		if !slices.Equal(got, tt.want) || rep.Fetched != len(tt.want) {
			t.Errorf("%s: fetched %q (%d), want %q", tt.name, got, rep.Fetched, tt.want)
		}
	}
}

// OutputDir holds a browsable tree by host and path, menus as their
// folder's index; a selector that would climb out is not written, and
// nothing partial is left.
func TestCrawlOutputDir(t *testing.T) {
	h := startHole(t)
	dir := t.TempDir()
	rep, err := crawl.Run(context.Background(), client(), []string{"gopher://" + h.ln.Addr().String() + "/1/"}, crawl.Options{OutputDir: dir})
	if err != nil || rep.Failed != 0 {
		t.Fatalf("%v %+v", err, rep)
	}
	_, port, _ := net.SplitHostPort(h.ln.Addr().String())
	base := filepath.Join(dir, siteDir("127.0.0.1:"+port))
	for name, want := range map[string]string{
		"readme.txt":   "text of /readme.txt\n",
		"a/data.bin":   "\x00\x01binary",
		"b/c/deep.txt": "text of /b/c/deep.txt\n",
		"index":        "iwelcome",
		"a/index":      "1Back to the top",
		"b/c/index":    "0Deep",
	} {
		b, err := os.ReadFile(filepath.Join(base, filepath.FromSlash(name)))
		if err != nil || !strings.HasPrefix(string(b), want) {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}
	var parts []string
	filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".part") {
			parts = append(parts, p)
		}
		return err
	})
	if len(parts) != 0 {
		t.Errorf("left %v", parts)
	}
}

// A selector that climbs out of its folder ("..") is written below the
// output folder all the same, its ".." elements written %2E%2E, as wget
// writes them: nothing is written outside.
func TestCrawlOutputDirRefusesClimbing(t *testing.T) {
	ln, err := testserver.Listen(func(c net.Conn) {
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadString('\n')
		sel := strings.TrimRight(line, "\r\n")
		host, port, _ := net.SplitHostPort(c.LocalAddr().String())
		if sel == "" {
			fmt.Fprintf(c, "0Climb\t/x/../../../escape.txt\t%s\t%s\r\n.\r\n", host, port)
			return
		}
		io.WriteString(c, "escaped\r\n.\r\n")
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	base := t.TempDir()
	dir := filepath.Join(base, "out")
	rep, _ := crawl.Run(context.Background(), client(), []string{"gopher://" + ln.Addr().String() + "/1"}, crawl.Options{OutputDir: dir})
	if rep.Failed != 0 || rep.Fetched != 2 {
		t.Errorf("report %+v", rep)
	}
	var found []string
	filepath.WalkDir(base, func(p string, de os.DirEntry, err error) error {
		if err == nil && strings.Contains(de.Name(), "escape") {
			found = append(found, p)
		}
		return err
	})
	want := filepath.Join(dir, siteDir(ln.Addr().String()), "x", "%2E%2E", "%2E%2E", "%2E%2E", "escape.txt")
	if len(found) != 1 || found[0] != want {
		t.Errorf("written: %v, want %s only", found, want)
	}
}

// A Gopher+ menu's item is archived with its attribute block: a metadata
// record of the item's URI, spoken in gopher+, linked to the item's
// resource record.
func TestCrawlGopherPlusAttributes(t *testing.T) {
	m := startMenuServer(t, func(c net.Conn, line string, item itemFunc) {
		switch sel, plus, _ := strings.Cut(line, "\t"); {
		case sel == "/doc.txt" && plus == "!":
			io.WriteString(c, "+-2\r\n+INFO: "+strings.TrimSuffix(item('0', "Doc", "/doc.txt"), "\r\n")+"\t+\r\n+ADMIN:\r\n Admin: Someone <a@b>\r\n Mod-Date: Thu Jan  2 03:04:05 2020 <20200102030405>\r\n")
		case sel == "/doc.txt":
			io.WriteString(c, "the document\r\n")
		case sel == "robots.txt":
			io.WriteString(c, "3none\t\terror.host\t1\r\n.\r\n")
		default:
			io.WriteString(c, strings.TrimSuffix(item('0', "Doc", "/doc.txt"), "\r\n")+"\t+\r\n.\r\n")
		}
	})
	ln := m.ln
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "plus"), warc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := client()
	c.Recorder = &warc.Recorder{W: w}
	if _, err := crawl.Run(context.Background(), c, []string{"gopher://" + ln.Addr().String() + "/1/"}, crawl.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	item := "gopher://" + ln.Addr().String() + "/0/doc.txt"
	var itemID string
	var meta gowarc.WarcRecord
	for _, r := range readWARC(t, filepath.Join(dir, "plus.warc.gz")) {
		h := r.WarcHeader()
		switch {
		case r.Type() == gowarc.Resource && h.Get(gowarc.WarcTargetURI) == item:
			itemID = h.Get(gowarc.WarcRecordID)
		case r.Type() == gowarc.Metadata:
			meta = r
		}
	}
	if meta == nil || itemID == "" {
		t.Fatalf("item record %q, attribute record %v", itemID, meta)
	}
	h := meta.WarcHeader()
	raw, _ := meta.Block().RawBytes()
	block, _ := io.ReadAll(raw)
	if h.Get(gowarc.WarcTargetURI) != item || h.Get(gowarc.WarcConcurrentTo) != itemID || h.Get("WARC-Protocol") != "gopher+" ||
		h.Get(gowarc.ContentType) != "application/gopher+-attributes" || !strings.Contains(string(block), "+ADMIN:\r\n Admin: Someone <a@b>") {
		t.Errorf("attribute record:\n%s\n%q (item %s)", h, block, itemID)
	}
}

// A URL that fails for a reason that may pass is tried again (the
// mirror's retry policy); one that fails for good is not.
func TestCrawlRetries(t *testing.T) {
	var mu sync.Mutex
	asked := map[string]int{}
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		asked[r.URL.Path]++
		n := asked[r.URL.Path]
		mu.Unlock()
		switch {
		case r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<a href="/flaky">f</a> <a href="/gone">g</a>`)
		case r.URL.Path == "/flaky" && n == 1:
			nethttp.Error(w, "busy", nethttp.StatusServiceUnavailable)
		case r.URL.Path == "/flaky":
			io.WriteString(w, "here now\n")
		default:
			nethttp.NotFound(w, r)
		}
	}))
	defer s.Close()
	rep, err := crawl.Run(context.Background(), client(), []string{s.URL + "/"}, crawl.Options{Retries: 2, RetryWait: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if rep.Fetched != 2 || rep.Failed != 1 || asked["/flaky"] != 2 || asked["/gone"] != 1 {
		t.Errorf("report %+v, asked %v", rep, asked)
	}
}

// A robots.txt that fails for a reason that may pass is asked for again,
// as a page is, and its rules then hold.
func TestCrawlRobotsRetried(t *testing.T) {
	var asked func(string) int
	s, asked := countingServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			if asked("/robots.txt") == 1 {
				nethttp.Error(w, "busy", nethttp.StatusServiceUnavailable)
				return
			}
			io.WriteString(w, "User-agent: *\nDisallow: /private\n")
		case "/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<a href="/private/x.html">p</a> <a href="/public.html">o</a>`)
		default:
			io.WriteString(w, "a page\n")
		}
	})
	rep, err := crawl.Run(context.Background(), client(), []string{s.URL + "/"}, crawl.Options{Retries: 2, RetryWait: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if asked("/robots.txt") != 2 || asked("/private/x.html") != 0 || asked("/public.html") != 1 || rep.Excluded != 1 {
		t.Errorf("report %+v; robots.txt asked %d times, the private page %d", rep, asked("/robots.txt"), asked("/private/x.html"))
	}
}

// Objects whose URLs lead to one local file (two folders cut away by
// CutDirs): with several connections to the host at once, they take turns
// at it, and the file holds one of them whole, not a mix.
func TestCrawlOutputOnePath(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html")
			for i := range 8 {
				fmt.Fprintf(w, `<a href="/d%d/p">%d</a>`, i, i)
			}
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		body := strings.Repeat(r.URL.Path[2:3], 256<<10)
		for len(body) > 0 { // in pieces, so that the pages interleave
			n := min(len(body), 32<<10)
			io.WriteString(w, body[:n])
			w.(nethttp.Flusher).Flush()
			body = body[n:]
			time.Sleep(time.Millisecond)
		}
	}))
	defer s.Close()
	dir := t.TempDir()
	rep, err := crawl.Run(context.Background(), client(), []string{s.URL + "/"}, crawl.Options{OutputDir: dir, PerHost: 4, Parallel: 4, IgnoreRobots: true, CutDirs: 1})
	if err != nil || rep.Failed != 0 || rep.Fetched != 9 {
		t.Fatalf("%v, report %+v", err, rep)
	}
	u, _ := url.Parse(s.URL)
	got, err := os.ReadFile(filepath.Join(dir, siteDir(u.Site()), "p"))
	if err != nil || len(got) != 256<<10 || strings.Count(string(got), string(got[:1])) != len(got) {
		t.Errorf("p: %d bytes, not one page whole (%v)", len(got), err)
	}
}

// URLs that differ in their queries are files of their own, the query
// after the name as wget writes it (decoded, then "/" and control
// characters escaped; "@" before it under Windows's rules, which escape
// ":" too, and a port after "+").
func TestCrawlQueryNames(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.URL.Path == "/" && r.URL.RawQuery == "" {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<a href="p?x=1">1</a> <a href="p?x=2&amp;y=%2F">2</a> <a href="p?">3</a> <a href="./?page=2">4</a> <a href="a%3Ab%01c?q=%41%20b">5</a> <a href="p?k=%3A%26%2B%41">6</a> <a href="p?`+strings.Repeat("q", 300)+`">7</a>`)
			return
		}
		if r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html") // index.html?page=2
		} else {
			w.Header().Set("Content-Type", "text/plain")
		}
		io.WriteString(w, r.URL.RequestURI())
	}))
	defer s.Close()
	u, _ := url.Parse(s.URL)
	for _, tt := range []struct {
		names crawl.FileNames
		site  string
		files map[string]string // local name: the request-target it holds
	}{
		{crawl.FileNames{System: "unix"}, u.Site(), map[string]string{
			"p?x=1": "/p?x=1", "p?x=2&y=%2F": "/p?x=2&y=%2F", "p?": "/p?", "index.html?page=2": "/?page=2", "a:b%01c?q=A b": "/a%3Ab%01c?q=A%20b",
			"p?k=:&+A": "/p?k=%3A%26%2BA", "p?" + strings.Repeat("q", 234): "/p?" + strings.Repeat("q", 300),
		}},
		{crawl.FileNames{System: "windows", Case: "upper"}, strings.ReplaceAll(u.Site(), ":", "+"), map[string]string{
			"P@X=1": "/p?x=1", "P@X=2&Y=%2F": "/p?x=2&y=%2F", "P@": "/p?", "INDEX.HTML@PAGE=2": "/?page=2", "A%3AB%01C@Q=A B": "/a%3Ab%01c?q=A%20b",
			"P@K=%3A&+A": "/p?k=%3A%26%2BA", "P@" + strings.Repeat("Q", 234): "/p?" + strings.Repeat("q", 300),
		}},
	} {
		dir := t.TempDir()
		rep, err := crawl.Run(context.Background(), client(), []string{s.URL + "/"}, crawl.Options{OutputDir: dir, IgnoreRobots: true, FileNames: tt.names})
		if err != nil || rep.Failed != 0 || rep.Fetched != 8 {
			t.Fatalf("%+v: %v, report %+v", tt.names, err, rep)
		}
		entries, _ := os.ReadDir(filepath.Join(dir, tt.site))
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		if len(got) != len(tt.files)+1 { // and index.html
			t.Errorf("%+v: files %q", tt.names, got)
		}
		for name, target := range tt.files {
			if b, err := os.ReadFile(filepath.Join(dir, tt.site, name)); err != nil || string(b) != target {
				t.Errorf("%+v: %s holds %q (%v), want %q", tt.names, name, b, err, target)
			}
		}
	}
}

// TestCrawlOutputDirManyFolders: pages in more folders than stay open at
// once are each written whole in its own, none left as NAME.part.
func TestCrawlOutputDirManyFolders(t *testing.T) {
	const n = 150
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/" {
			for i := range n {
				fmt.Fprintf(w, `<a href="/f%d/sub/page.html">%d</a>`, i, i)
			}
			return
		}
		io.WriteString(w, "page of "+r.URL.Path)
	}))
	defer s.Close()
	dir := t.TempDir()
	rep, err := crawl.Run(context.Background(), client(), []string{s.URL + "/"}, crawl.Options{OutputDir: dir, PerHost: 8, Parallel: 8, IgnoreRobots: true})
	if err != nil || rep.Failed != 0 || rep.Fetched != n+1 {
		t.Fatalf("%v, report %+v", err, rep)
	}
	u, _ := url.Parse(s.URL)
	site := filepath.Join(dir, siteDir(u.Site()))
	for i := range n {
		p := fmt.Sprintf("/f%d/sub/page.html", i)
		if b, err := os.ReadFile(filepath.Join(site, filepath.FromSlash(p))); err != nil || string(b) != "page of "+p {
			t.Errorf("%s: %q %v", p, b, err)
		}
	}
	parts := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if strings.HasSuffix(p, fetch.PartSuffix) {
			parts++
		}
		return nil
	})
	if parts != 0 {
		t.Errorf("%d .part files left", parts)
	}
}

// TestConvertLinks: once the crawl is over, the pages' links lead to the
// files written (relative, quotes and fragments kept), a relative link to
// what was not fetched is absolute, others stay as they were; a <base>
// is made "."; a page two URLs led to is rewritten once; a page with a
// token past 1 MiB is left as it came.
func TestConvertLinks(t *testing.T) {
	var s *httptest.Server
	s = httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/d/", "/d/index.html":
			fmt.Fprintf(w, `<a href="%s/d/x/p.html#s">abs</a> <A HREF=x/p.html>bare</A> <a href='../up.html'>up</a> <a href="mailto:m@example.invalid">m</a> <a href="#top">top</a> <a href="index.html">self</a> <img srcset="i.png 1x, /d/i.png 2x">`, s.URL)
		case "/d/x/p.html":
			io.WriteString(w, `<base href="/d/"><a href="x/p.html">via base</a> <a href="./">folder</a>`)
		case "/d/i.png":
			w.Header().Set("Content-Type", "image/png")
			io.WriteString(w, "png")
		case "/d/big.html":
			io.WriteString(w, `<a href="/d/">home</a><script>`+strings.Repeat("x", 2<<20)+`</script>`)
		case "/d/long.html": // longer than what a rewrite holds in memory
			io.WriteString(w, strings.Repeat("<p>words</p>", 40000)+`<a href="/d/">home</a>`)
		default:
			nethttp.NotFound(w, r)
		}
	}))
	defer s.Close()
	dir := t.TempDir()
	rep, err := crawl.Run(context.Background(), client(), []string{s.URL + "/d/", s.URL + "/d/big.html", s.URL + "/d/long.html"}, crawl.Options{OutputDir: dir, Prefix: true, ConvertLinks: true, IgnoreRobots: true})
	if err != nil || rep.Converted != 3 {
		t.Fatalf("%v, report %+v", err, rep)
	}
	u, _ := url.Parse(s.URL)
	site := filepath.Join(dir, siteDir(u.Site()))
	for rel, want := range map[string]string{
		"d/index.html": `<a href="x/p.html#s">abs</a> <A HREF=x/p.html>bare</A> <a href='` + s.URL + `/up.html'>up</a> <a href="mailto:m@example.invalid">m</a> <a href="#top">top</a> <a href="index.html">self</a> <img srcset="i.png 1x, i.png 2x">`,
		"d/x/p.html":   `<base href="."><a href="p.html">via base</a> <a href="../index.html">folder</a>`,
		"d/long.html":  strings.Repeat("<p>words</p>", 40000) + `<a href="index.html">home</a>`,
	} {
		if b, _ := os.ReadFile(filepath.Join(site, filepath.FromSlash(rel))); string(b) != want {
			t.Errorf("%s:\n got %s\nwant %s", rel, b, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(site, "d", "big.html")); !bytes.HasPrefix(b, []byte(`<a href="/d/">home</a>`)) || len(b) < 2<<20 {
		t.Errorf("big.html: %d bytes, %.40q", len(b), b)
	}
	for _, o := range []crawl.Options{{ConvertLinks: true}, {ConvertLinks: true, OutputDir: dir, State: filepath.Join(dir, "state")}} {
		if _, err := crawl.Run(context.Background(), client(), []string{s.URL + "/d/"}, o); err == nil {
			t.Errorf("%+v taken", o)
		}
	}
}

// TestConvertStyleSheets: with ConvertLinks, the URLs a style sheet
// loads, and a <style> element's, are rewritten as a page's links are,
// in their quotes or without, everything else as it came; a style sheet
// whose URLs stay as they are is left alone.
func TestConvertStyleSheets(t *testing.T) {
	css := "@import \"/s/more.css\";\n/* url(/s/not.png) */\nbody { background: url( /s/img/a.png ) }\n" +
		"h1 { background: url('../up.png') } h2 { background: url(\"img/a.png\") } h3 { background: url(data:image/png;base64,AAAA) }\n"
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		switch r.URL.Path {
		case "/s/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<link rel="stylesheet" href="css/site.css"><style>p { background: url(/s/img/a.png) }</style><p>x</p>`)
		case "/s/css/site.css":
			w.Header().Set("Content-Type", "text/css")
			io.WriteString(w, strings.ReplaceAll(css, "img/a.png\")", "../img/a.png\")"))
		case "/s/more.css":
			w.Header().Set("Content-Type", "text/css")
			io.WriteString(w, "p { color: red }\n")
		case "/s/img/a.png":
			w.Header().Set("Content-Type", "image/png")
			io.WriteString(w, "png")
		default:
			nethttp.NotFound(w, r)
		}
	}))
	defer s.Close()
	dir := t.TempDir()
	rep, err := crawl.Run(context.Background(), client(), []string{s.URL + "/s/"}, crawl.Options{OutputDir: dir, Prefix: true, ConvertLinks: true, IgnoreRobots: true})
	if err != nil || rep.Converted != 2 || rep.Fetched != 4 {
		t.Fatalf("%v, report %+v", err, rep)
	}
	u, _ := url.Parse(s.URL)
	site := filepath.Join(dir, siteDir(u.Site()), "s")
	for rel, want := range map[string]string{
		"index.html": `<link rel="stylesheet" href="css/site.css"><style>p { background: url(img/a.png) }</style><p>x</p>`,
		"css/site.css": "@import \"../more.css\";\n/* url(/s/not.png) */\nbody { background: url( ../img/a.png ) }\n" +
			"h1 { background: url('" + s.URL + "/s/up.png') } h2 { background: url(\"../img/a.png\") } h3 { background: url(data:image/png;base64,AAAA) }\n",
		"more.css": "p { color: red }\n",
	} {
		if b, _ := os.ReadFile(filepath.Join(site, filepath.FromSlash(rel))); string(b) != want {
			t.Errorf("%s:\n got %s\nwant %s", rel, b, want)
		}
	}
	if _, err := os.Stat(filepath.Join(site, "css", "site.css.part")); err == nil {
		t.Error("site.css.part left")
	}
}

// TestCrawlAcceptReject: Accept and Reject, as wget's -A and -R: a link
// to a file that does not pass is not followed, pages are fetched for
// their links and written only when they pass; with NoDirectories the
// files go at the top, a name taken given .1.
func TestCrawlAcceptReject(t *testing.T) {
	s, asked := countingServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		switch r.URL.Path {
		case "/a/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<a href="x.pdf">x</a> <a href="y.txt">y</a> <a href="sub/">sub</a> <a href="p.html">p</a> <a href="gen?id=1">gen</a>`)
		case "/a/sub/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<a href="x.pdf">another x</a> <a href="Z.PDF">z</a> <a href="deeper/">deeper</a>`)
		case "/a/p.html":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<a href="w.pdf">w</a>`)
		default:
			io.WriteString(w, "file "+r.URL.Path)
		}
	})
	for _, tt := range []struct {
		name    string
		o       crawl.Options
		fetched []string // besides the start
		files   []string
	}{
		{"accept pdf", crawl.Options{Accept: []string{"pdf"}},
			[]string{"/a/x.pdf", "/a/sub/", "/a/p.html", "/a/sub/x.pdf", "/a/sub/deeper/", "/a/w.pdf"},
			[]string{"a/sub/x.pdf", "a/w.pdf", "a/x.pdf"}},
		{"accept a pattern, depth 1", crawl.Options{Accept: []string{"*.[pP][dD][fF]"}, MaxDepth: 1},
			[]string{"/a/x.pdf", "/a/sub/"},
			[]string{"a/x.pdf"}},
		{"reject", crawl.Options{Reject: []string{"txt", "gen*", ".html"}},
			[]string{"/a/x.pdf", "/a/sub/", "/a/p.html", "/a/sub/x.pdf", "/a/sub/Z.PDF", "/a/sub/deeper/", "/a/w.pdf"},
			[]string{"a/sub/Z.PDF", "a/sub/deeper/index", "a/sub/x.pdf", "a/w.pdf", "a/x.pdf"}}, // the pages' index.html ends in .html too
		{"no directories", crawl.Options{Accept: []string{"pdf", "PDF"}, NoDirectories: true},
			[]string{"/a/x.pdf", "/a/sub/", "/a/p.html", "/a/sub/x.pdf", "/a/sub/Z.PDF", "/a/sub/deeper/", "/a/w.pdf"},
			[]string{"Z.PDF", "w.pdf", "x.pdf", "x.pdf.1"}},
	} {
		before := map[string]int{}
		all := []string{"/a/x.pdf", "/a/y.txt", "/a/sub/", "/a/p.html", "/a/gen", "/a/sub/x.pdf", "/a/sub/Z.PDF", "/a/sub/deeper/", "/a/w.pdf"}
		for _, p := range all {
			before[p] = asked(p)
		}
		dir := t.TempDir()
		tt.o.OutputDir, tt.o.Prefix, tt.o.IgnoreRobots, tt.o.NoHostDirs = dir, true, true, true
		tt.o.PerHost, tt.o.Parallel = 1, 1 // the order that gives x.pdf its name
		if _, err := crawl.Run(context.Background(), client(), []string{s.URL + "/a/"}, tt.o); err != nil {
			t.Fatal(err)
		}
		var fetched []string
		for _, p := range all {
			if asked(p) > before[p] {
				fetched = append(fetched, p)
			}
		}
		slices.Sort(fetched)
		slices.Sort(tt.fetched)
		files := treeFilesIn(t, dir)
		if !slices.Equal(fetched, tt.fetched) || !slices.Equal(files, tt.files) {
			t.Errorf("%s: fetched %q\nwant %q\nwrote %q\nwant %q", tt.name, fetched, tt.fetched, files, tt.files)
		}
		if tt.o.NoDirectories {
			if b, _ := os.ReadFile(filepath.Join(dir, "x.pdf.1")); string(b) != "file /a/sub/x.pdf" {
				t.Errorf("x.pdf.1 holds %q", b)
			}
		}
	}
}

// TestCrawlFolderAndRegexRules: IncludeDirs, ExcludeDirs (folders and
// patterns, IgnoreCase), AcceptRegex, RejectRegex and ExcludeDomains
// decide which links are followed, pages included.
func TestCrawlFolderAndRegexRules(t *testing.T) {
	var s *httptest.Server
	s, asked := countingServer(t, func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			fmt.Fprintf(w, `<a href="/docs/a.html">a</a> <a href="/docs/old/b.html">b</a> <a href="/Docs2/c.html">c</a> <a href="/img/d.png">d</a> <a href="/x.cgi?id=1">x</a> <a href="%s/e.html">e</a>`,
				strings.Replace(s.URL, "127.0.0.1", "localhost", 1))
		default:
			io.WriteString(w, "leaf")
		}
	})
	all := []string{"/docs/a.html", "/docs/old/b.html", "/Docs2/c.html", "/img/d.png", "/x.cgi", "/e.html"}
	re := regexp.MustCompile
	for _, tt := range []struct {
		name string
		o    crawl.Options
		want []string
	}{
		{"include docs", crawl.Options{IncludeDirs: []string{"/docs"}}, []string{"/docs/a.html", "/docs/old/b.html"}},
		{"exclude docs/old", crawl.Options{ExcludeDirs: []string{"docs/old", "img"}}, []string{"/docs/a.html", "/Docs2/c.html", "/x.cgi"}},
		{"a pattern, any case", crawl.Options{IncludeDirs: []string{"/docs*"}, IgnoreCase: true}, []string{"/docs/a.html", "/Docs2/c.html"}},
		{"a folder in capitals, any case", crawl.Options{IncludeDirs: []string{"/DOCS"}, IgnoreCase: true}, []string{"/docs/a.html", "/docs/old/b.html"}},
		{"a pattern matches whole", crawl.Options{ExcludeDirs: []string{"/d*"}}, []string{"/docs/old/b.html", "/Docs2/c.html", "/img/d.png", "/x.cgi"}},
		{"regexes", crawl.Options{AcceptRegex: re(`\.(html|cgi)`), RejectRegex: re(`id=`)}, []string{"/docs/a.html", "/docs/old/b.html", "/Docs2/c.html"}},
		{"other hosts, one excluded", crawl.Options{SpanHosts: true, ExcludeDomains: []string{"localhost"}}, []string{"/docs/a.html", "/docs/old/b.html", "/Docs2/c.html", "/img/d.png", "/x.cgi"}},
		{"other hosts", crawl.Options{SpanHosts: true}, all},
	} {
		before := map[string]int{}
		for _, p := range all {
			before[p] = asked(p)
		}
		tt.o.IgnoreRobots = true
		if _, err := crawl.Run(context.Background(), client(), []string{s.URL + "/"}, tt.o); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range all {
			if asked(p) > before[p] {
				got = append(got, p)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: fetched %q, want %q", tt.name, got, tt.want)
		}
	}
}

// treeFilesIn lists the files below dir, "/" separated and sorted.
func treeFilesIn(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// TestCrawlOnlyNewer: with OnlyNewer a second crawl asks each file
// If-Modified-Since the time its file was given (the server's), gets
// 304s, and follows the links of the pages from their files; a file the
// server changed is fetched again. With ConvertLinks the pages and style
// sheets are fetched again, the rest not.
func TestCrawlOnlyNewer(t *testing.T) {
	root := t.TempDir()
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	for name, body := range map[string]string{
		"s/index.html":     `<link rel="stylesheet" href="style.css"><a href="a.txt">a</a> <a href="sub/">sub</a>`,
		"s/style.css":      `p { background: url(img.png) }`,
		"s/img.png":        "png",
		"s/a.txt":          "a",
		"s/sub/index.html": `<a href="b.txt">b</a>`,
		"s/sub/b.txt":      "b",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
		os.Chtimes(p, old, old)
	}
	var mu sync.Mutex
	codes := map[string]int{} // path: status, of the last run
	files := nethttp.FileServer(nethttp.Dir(root))
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		rec := httptest.NewRecorder()
		files.ServeHTTP(rec, r)
		mu.Lock()
		codes[r.URL.Path] = rec.Code
		mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	defer s.Close()
	dir := t.TempDir()
	run := func(o crawl.Options) (*crawl.Report, map[string]int) {
		mu.Lock()
		clear(codes)
		mu.Unlock()
		o.OutputDir, o.NoHostDirs, o.OnlyNewer, o.IgnoreRobots, o.Prefix = dir, true, true, true, true
		rep, err := crawl.Run(context.Background(), client(), []string{s.URL + "/s/"}, o)
		if err != nil || rep.Failed != 0 {
			t.Fatalf("%v %+v", err, rep)
		}
		mu.Lock()
		defer mu.Unlock()
		return rep, maps.Clone(codes)
	}
	all := func(code int) map[string]int {
		return map[string]int{"/s/": code, "/s/style.css": code, "/s/img.png": code, "/s/a.txt": code, "/s/sub/": code, "/s/sub/b.txt": code}
	}
	rep, got := run(crawl.Options{})
	if !maps.Equal(got, all(200)) || rep.Fetched != 6 || rep.Unchanged != 0 {
		t.Fatalf("first run: %v %+v", got, rep)
	}
	if st, err := os.Stat(filepath.Join(dir, "s", "a.txt")); err != nil || !st.ModTime().Equal(old) {
		t.Errorf("a.txt's time: %v %v", st.ModTime(), err)
	}
	rep, got = run(crawl.Options{})
	if !maps.Equal(got, all(304)) || rep.Fetched != 6 || rep.Unchanged != 6 {
		t.Errorf("second run: %v %+v", got, rep)
	}
	now := time.Now().Truncate(time.Second)
	os.WriteFile(filepath.Join(root, "s", "sub", "b.txt"), []byte("b, changed"), 0o644)
	os.Chtimes(filepath.Join(root, "s", "sub", "b.txt"), now, now)
	want := all(304)
	want["/s/sub/b.txt"] = 200
	rep, got = run(crawl.Options{})
	if b, _ := os.ReadFile(filepath.Join(dir, "s", "sub", "b.txt")); !maps.Equal(got, want) || rep.Unchanged != 5 || string(b) != "b, changed" {
		t.Errorf("after a change: %v %+v %q", got, rep, b)
	}
	want = all(304)
	want["/s/"], want["/s/sub/"], want["/s/style.css"] = 200, 200, 200
	rep, got = run(crawl.Options{ConvertLinks: true})
	if !maps.Equal(got, want) || rep.Unchanged != 3 {
		t.Errorf("with ConvertLinks: %v %+v", got, rep)
	}
	// NoClobber (wget's -nc) asks nothing of a file that is there; the
	// pages, rewritten by ConvertLinks, are fetched again.
	rep, got = run(crawl.Options{NoClobber: true, ConvertLinks: true})
	if want := map[string]int{"/s/": 200, "/s/sub/": 200, "/s/style.css": 200}; !maps.Equal(got, want) || rep.Unchanged != 3 || rep.Fetched != 6 {
		t.Errorf("NoClobber: %v %+v", got, rep)
	}
	os.Remove(filepath.Join(dir, "s", "a.txt"))
	rep, got = run(crawl.Options{NoClobber: true})
	if want := map[string]int{"/s/a.txt": 200}; !maps.Equal(got, want) || rep.Unchanged != 5 {
		t.Errorf("NoClobber, a.txt removed: %v %+v", got, rep)
	}
	// BackupConverted (wget's -K) keeps the pages as they came as
	// NAME.orig, by which the next run judges them: 304s throughout, the
	// links read from the originals.
	dir = t.TempDir() // a tree no run without -K converted
	if _, got = run(crawl.Options{ConvertLinks: true, BackupConverted: true}); !maps.Equal(got, all(200)) {
		t.Errorf("BackupConverted, first: %v", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "s", "index.html.orig")); !strings.Contains(string(b), `href="sub/"`) {
		t.Errorf("index.html.orig: %q", b)
	}
	rep, got = run(crawl.Options{ConvertLinks: true, BackupConverted: true})
	if !maps.Equal(got, all(304)) || rep.Unchanged != 6 {
		t.Errorf("BackupConverted, again: %v %+v", got, rep)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "s", "index.html")); !strings.Contains(string(b), `href="sub/index.html"`) {
		t.Errorf("index.html, converted: %q", b)
	}
	// The original of every page with a link to convert, its text
	// changed or not (sub/index.html's b.txt stays b.txt), as wget's.
	for _, name := range []string{"index.html.orig", "sub/index.html.orig", "style.css.orig"} {
		if _, err := os.Stat(filepath.Join(dir, "s", name)); err != nil {
			t.Errorf("no %s", name)
		}
	}
	// A style sheet whose text stays the same is still whole.
	if b, _ := os.ReadFile(filepath.Join(dir, "s", "style.css")); string(b) != `p { background: url(img.png) }` {
		t.Errorf("style.css: %q", b)
	}
}

// TestCrawlOutputDirCut: NoHostDirs and CutDirs shorten the paths as
// wget's -nH and --cut-dirs do, never cutting a file's own name, and the
// converted links follow the files where they went.
func TestCrawlOutputDirCut(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/a/b/":
			io.WriteString(w, `<a href="c/page.html">deeper</a> <a href="/a/top.html">up</a>`)
		case "/a/b/c/page.html":
			io.WriteString(w, `<a href="/a/b/">back</a>`)
		case "/a/top.html":
			io.WriteString(w, `top`)
		default:
			nethttp.NotFound(w, r)
		}
	}))
	defer s.Close()
	dir := t.TempDir()
	rep, err := crawl.Run(context.Background(), client(), []string{s.URL + "/a/b/"}, crawl.Options{OutputDir: dir, NoHostDirs: true, CutDirs: 2, ConvertLinks: true, IgnoreRobots: true})
	if err != nil || rep.Fetched != 3 || rep.Failed != 0 {
		t.Fatalf("%v, report %+v", err, rep)
	}
	for rel, want := range map[string]string{
		"index.html":  `<a href="c/page.html">deeper</a> <a href="top.html">up</a>`,
		"c/page.html": `<a href="../index.html">back</a>`,
		"top.html":    `top`, // /a/top.html: one folder to cut, the name kept
	} {
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel))); err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want %q", rel, b, err, want)
		}
	}
}

// TestCrawlAdjustExtension: with AdjustExtension, a page whose name does
// not end in .html is written NAME.html, a style sheet NAME.css, and the
// converted links lead there; other names stay.
func TestCrawlAdjustExtension(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		switch r.URL.Path {
		case "/x/page.php":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, `<link rel="stylesheet" href="style.php"><a href="doc.HTM">doc</a> <a href="data">data</a>`)
		case "/x/style.php":
			w.Header().Set("Content-Type", "text/css")
			io.WriteString(w, `p{}`)
		case "/x/doc.HTM":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `doc`)
		case "/x/data":
			w.Header().Set("Content-Type", "application/octet-stream")
			io.WriteString(w, `data`)
		default:
			nethttp.NotFound(w, r)
		}
	}))
	defer s.Close()
	dir := t.TempDir()
	rep, err := crawl.Run(context.Background(), client(), []string{s.URL + "/x/page.php"}, crawl.Options{OutputDir: dir, NoHostDirs: true, AdjustExtension: true, ConvertLinks: true, IgnoreRobots: true})
	if err != nil || rep.Fetched != 4 || rep.Failed != 0 {
		t.Fatalf("%v, report %+v", err, rep)
	}
	for rel, want := range map[string]string{
		"x/page.php.html": `<link rel="stylesheet" href="style.php.css"><a href="doc.HTM">doc</a> <a href="data">data</a>`,
		"x/style.php.css": `p{}`,
		"x/doc.HTM":       `doc`,
		"x/data":          `data`,
	} {
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel))); err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want %q", rel, b, err, want)
		}
	}
}

// siteDir is the folder OutputDir holds a site's files in: HOST:PORT, or
// on Windows HOST+PORT, as wget names them.
func siteDir(site string) string {
	if runtime.GOOS == "windows" {
		return strings.ReplaceAll(site, ":", "+")
	}
	return site
}

// TestCrawlRedirects: a page's links are relative to where redirects led
// (dir to dir/, as web servers send a folder's URL without its slash),
// as wget takes them; the page of dir/ is the folder's index, not a file
// named dir in the way of the folder's files; a link to dir/ (its page's
// own) is not fetched again, and -k leads the links to the one file.
func TestCrawlRedirects(t *testing.T) {
	var mu sync.Mutex
	asked := map[string]int{}
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		asked[r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			io.WriteString(w, `<a href="dir">dir</a> <a href="old.html">old</a>`)
		case "/dir", "/old.html":
			to := map[string]string{"/dir": "/dir/", "/old.html": "/new/page.html"}[r.URL.Path]
			nethttp.Redirect(w, r, to, nethttp.StatusMovedPermanently)
		case "/dir/":
			io.WriteString(w, `<a href="a.html">a</a> <a href="./">self</a>`)
		case "/new/page.html":
			io.WriteString(w, `<a href="b.html">b</a>`)
		case "/dir/a.html", "/new/b.html":
			io.WriteString(w, "leaf")
		default:
			nethttp.NotFound(w, r)
		}
	}))
	defer s.Close()
	dir := t.TempDir()
	rep, err := crawl.Run(context.Background(), client(), []string{s.URL + "/"}, crawl.Options{OutputDir: dir, IgnoreRobots: true, ConvertLinks: true})
	if err != nil || rep.Failed != 0 {
		t.Fatalf("%v, report %+v", err, rep)
	}
	for _, p := range []string{"/", "/dir", "/dir/", "/dir/a.html", "/old.html", "/new/page.html", "/new/b.html"} {
		if asked[p] != 1 {
			t.Errorf("%s asked %d times (%v)", p, asked[p], asked)
		}
	}
	if len(asked) != 7 {
		t.Errorf("asked %v", asked)
	}
	u, _ := url.Parse(s.URL)
	site := filepath.Join(dir, siteDir(u.Site()))
	for name, want := range map[string]string{
		"index.html":     `<a href="dir/index.html">dir</a> <a href="old.html">old</a>`,
		"dir/index.html": `<a href="a.html">a</a> <a href="index.html">self</a>`,
		"dir/a.html":     "leaf",
		"old.html":       `<a href="new/b.html">b</a>`, // wget's name; its link relative to where it led
		"new/b.html":     "leaf",
	} {
		if b, err := os.ReadFile(filepath.Join(site, filepath.FromSlash(name))); err != nil || string(b) != want {
			t.Errorf("%s: %q %v, want %q", name, b, err, want)
		}
	}
}

// TestCrawlLinkAndNameOptions: wget's --relative, --https-only,
// --trust-server-names, --default-page, --protocol-directories and
// --retry-on-http-error, each against the same site.
func TestCrawlLinkAndNameOptions(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	tries := 0
	var s *httptest.Server
	s = httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<a href="rel.txt">r</a> <a href="%s/abs.txt">a</a> <a href="moved">m</a> <a href="late.txt">l</a>`, s.URL)
		case "/moved":
			nethttp.Redirect(w, r, "/target.txt", nethttp.StatusFound)
		case "/late.txt":
			mu.Lock()
			tries++
			n := tries
			mu.Unlock()
			if n == 1 {
				nethttp.NotFound(w, r) // not published yet
				return
			}
			io.WriteString(w, strings.Repeat("x", 100))
		default:
			io.WriteString(w, strings.Repeat("x", 100))
		}
	}))
	defer s.Close()
	u, _ := url.Parse(s.URL)
	site := siteDir(u.Site())
	for _, tt := range []struct {
		name   string
		o      crawl.Options
		asked  string   // the paths asked for, sorted
		files  []string // below OutputDir
		failed int
	}{
		{"relative", crawl.Options{RelativeOnly: true, RetryStatuses: []int{404}}, "/ /late.txt /late.txt /moved /rel.txt /target.txt", nil, 0},
		{"https-only", crawl.Options{HTTPSOnly: true}, "/", nil, 0},
		{"names", crawl.Options{TrustServerNames: true, DefaultPage: "home.htm", ProtocolDirs: true, RetryStatuses: []int{404}},
			"/ /abs.txt /late.txt /late.txt /moved /rel.txt /target.txt",
			[]string{"http/" + site + "/abs.txt", "http/" + site + "/home.htm", "http/" + site + "/late.txt", "http/" + site + "/rel.txt", "http/" + site + "/target.txt"}, 0},
		{"404 final", crawl.Options{}, "/ /abs.txt /late.txt /moved /rel.txt /target.txt", nil, 1},
	} {
		asked, tries = nil, 0
		dir := t.TempDir()
		tt.o.IgnoreRobots = true
		tt.o.Retries, tt.o.RetryWait = 1, time.Millisecond
		if tt.files != nil {
			tt.o.OutputDir = dir
		}
		rep, err := crawl.Run(context.Background(), client(), []string{s.URL + "/"}, tt.o)
		if err != nil || rep.Failed != tt.failed {
			t.Errorf("%s: %v, report %+v", tt.name, err, rep)
		}
		slices.Sort(asked)
		if got := strings.Join(asked, " "); got != tt.asked {
			t.Errorf("%s: asked %s, want %s", tt.name, got, tt.asked)
		}
		if tt.files != nil {
			var got []string
			filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
				if err == nil && !de.IsDir() {
					rel, _ := filepath.Rel(dir, p)
					got = append(got, filepath.ToSlash(rel))
				}
				return err
			})
			if strings.Join(got, " ") != strings.Join(tt.files, " ") {
				t.Errorf("%s: wrote %q, want %q", tt.name, got, tt.files)
			}
		}
	}
}

// TestCrawlReferer: each link is fetched with the page it was on as its
// Referer, as wget and browsers send it (hotlink-protected images are
// served so); a start URL with none; a Referer the Client sends for
// every request (deref -e) goes instead.
func TestCrawlReferer(t *testing.T) {
	var mu sync.Mutex
	refs := map[string][]string{}
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		refs[r.URL.Path] = r.Header.Values("Referer")
		mu.Unlock()
		if r.URL.Path == "/" || r.URL.Path == "/docs/" {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<a href="/docs/">docs</a> <img src="/pic.png">`)
		}
	}))
	defer s.Close()
	if _, err := crawl.Run(context.Background(), client(), []string{s.URL + "/#top"}, crawl.Options{IgnoreRobots: true}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"/": "", "/docs/": s.URL + "/", "/pic.png": s.URL + "/"}
	for p, r := range want {
		if got := strings.Join(refs[p], ","); got != r {
			t.Errorf("%s: Referer %q, want %q", p, got, r)
		}
	}
	c := client()
	c.Header = [][2]string{{"Referer", "http://given.example/"}}
	refs = map[string][]string{}
	if _, err := crawl.Run(context.Background(), c, []string{s.URL + "/"}, crawl.Options{IgnoreRobots: true}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(refs["/docs/"], ","); got != "http://given.example/" {
		t.Errorf("with the Client's: Referer %q", got)
	}
}

// TestCrawlRobotsMeta: a page whose robots <meta> says nofollow gives no
// links, unless IgnoreRobots, as wget has it.
func TestCrawlRobotsMeta(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/robots.txt":
			nethttp.NotFound(w, r)
		case "/":
			io.WriteString(w, `<meta name="robots" content="noindex,nofollow"><a href="a">a</a> <img src="i.png">`)
		}
	}))
	defer s.Close()
	for _, ignore := range []bool{false, true} {
		rep, err := crawl.Run(context.Background(), client(), []string{s.URL + "/"}, crawl.Options{IgnoreRobots: ignore})
		if want := map[bool]int{false: 1, true: 3}[ignore]; err != nil || rep.Fetched != want {
			t.Errorf("IgnoreRobots %v: %v, %d fetched, want %d", ignore, err, rep.Fetched, want)
		}
	}
}

// TestCrawlFTPVerbatim: a crawl fetches an FTP file as the server holds
// it (TYPE I), a .txt too, whose name would have RFC 1738's guess choose
// TYPE A and make its CRLFs LFs, as wget and the mirror fetch it.
func TestCrawlFTPVerbatim(t *testing.T) {
	s := &ftpscript.Server{Files: map[string]string{"a.txt": "one\r\ntwo\r\n"}}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir := t.TempDir()
	rep, err := crawl.Run(context.Background(), client(), []string{"ftp://" + s.Addr() + "/a.txt"}, crawl.Options{OutputDir: dir})
	if err != nil || rep.Failed != 0 {
		t.Fatalf("%v, report %+v", err, rep)
	}
	b, err := os.ReadFile(filepath.Join(dir, siteDir(s.Addr()), "a.txt"))
	if cmds := strings.Join(s.Commands(), "|"); err != nil || string(b) != "one\r\ntwo\r\n" || strings.Contains(cmds, "TYPE A") {
		t.Errorf("%q %v; sent %s", b, err, cmds)
	}
}

// TestCrawlQuota: once more than Quota bytes are fetched, no retrieval
// starts (whichever of the page's links came first), as wget's -Q; the
// URLs left are counted.
func TestCrawlQuota(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<a href="a">a</a><a href="b">b</a><a href="c">c</a><a href="d">d</a><a href="e">e</a>`) // 85 bytes
			return
		}
		io.WriteString(w, strings.Repeat("x", 100))
	}))
	defer s.Close()
	for _, tt := range []struct {
		quota         int64
		fetched, left int
	}{{50, 1, 5}, {84, 1, 5}, {85, 2, 4}, {150, 2, 4}, {185, 3, 3}, {1000, 6, 0}} {
		rep, err := crawl.Run(context.Background(), client(), []string{s.URL + "/"}, crawl.Options{IgnoreRobots: true, Quota: tt.quota})
		if err != nil || rep.Fetched != tt.fetched || rep.OverQuota != tt.left {
			t.Errorf("quota %d: %v, %d fetched and %d left, want %d and %d", tt.quota, err, rep.Fetched, rep.OverQuota, tt.fetched, tt.left)
		}
	}
}

// TestCrawlOrder: with one connection to a host, its URLs are fetched in
// the order their links were found, as wget fetches them, however many
// workers the crawl has.
func TestCrawlOrder(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		if r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html")
			for i := range 30 {
				fmt.Fprintf(w, `<a href="/f%02d">%d</a>`, 29-i, i)
			}
		}
	}))
	defer s.Close()
	for range 3 {
		asked = nil
		if _, err := crawl.Run(context.Background(), client(), []string{s.URL + "/"}, crawl.Options{IgnoreRobots: true, Parallel: 8}); err != nil {
			t.Fatal(err)
		}
		for i, p := range asked[1:] {
			if want := fmt.Sprintf("/f%02d", 29-i); p != want {
				t.Fatalf("fetched in the order %q", asked)
			}
		}
	}
}

// --wait holds between every two requests to a host, robots.txt
// included: its request is the host's first, and the first page comes
// --wait after it (it came 23 ms after with --wait 50ms, when only pages
// waited).
func TestWaitAfterRobots(t *testing.T) {
	type conn struct {
		sel        string
		start, end time.Time
	}
	var mu sync.Mutex
	var log []conn
	ln, err := testserver.Listen(func(c net.Conn) {
		start := time.Now()
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadString('\n')
		sel := strings.TrimRight(line, "\r\n")
		host, port, _ := net.SplitHostPort(c.LocalAddr().String())
		switch sel {
		case "robots.txt":
			io.WriteString(c, "User-agent: *\r\nDisallow: /private\r\n")
		case "":
			for i := range 3 {
				fmt.Fprintf(c, "0Item\t/t/%d\t%s\t%s\r\n", i, host, port)
			}
			io.WriteString(c, ".\r\n")
		default:
			io.WriteString(c, "text\r\n.\r\n")
		}
		mu.Lock()
		log = append(log, conn{sel, start, time.Now()})
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	const wait = 50 * time.Millisecond
	rep, err := crawl.Run(context.Background(), client(), []string{"gopher://" + ln.Addr().String() + "/1"}, crawl.Options{Wait: wait, Parallel: 4})
	if err != nil || rep.Fetched != 4 {
		t.Fatalf("%+v %v", rep, err)
	}
	mu.Lock()
	defer mu.Unlock()
	sort.Slice(log, func(i, j int) bool { return log[i].start.Before(log[j].start) })
	if len(log) != 5 || log[0].sel != "robots.txt" {
		t.Fatalf("requests %v, want robots.txt first and 4 pages", log)
	}
	for i := 1; i < len(log); i++ {
		if gap := log[i].start.Sub(log[i-1].end); gap < wait-time.Millisecond {
			t.Errorf("%q began %v after %q ended, want --wait %v between them", log[i].sel, gap, log[i-1].sel, wait)
		}
	}
}
