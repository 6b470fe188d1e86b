//go:build interop

package interop

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/urlderef/deref/fetch/gateway"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/internal/testserver/ftpd"
	"github.com/urlderef/deref/internal/testserver/nntpd"
	"github.com/urlderef/deref/internal/testserver/waisd"
	derefurl "github.com/urlderef/deref/url"
)

// hostileGopher serves a menu whose every field is an attack on the page
// that shows it, and an HTML item that tries everything HTML can: each
// names canary, a listener no request should reach.
func hostileGopher(t *testing.T, canary string) string {
	t.Helper()
	page := `<!doctype html><html><head><meta http-equiv="refresh" content="0; url=` + canary + `/refresh"><title>hostile</title>` +
		`<link rel="stylesheet" href="` + canary + `/css"></head><body><script>fetch('` + canary + `/script');alert(1)</script>` +
		`<img src="` + canary + `/img" onerror="fetch('` + canary + `/onerror')"><form action="` + canary + `/form"><input name=q></form>` +
		`<svg><a xlink:href="javascript:fetch('` + canary + `/svg')"><text>svg</text></a><a href="javascript:alert(2)"><text>svg2</text></a></svg>` +
		`<a id="js" href="javascript:fetch('` + canary + `/a')">js</a> <a href="vbscript:msgbox(1)">vb</a> <a href="data:text/html,<script>alert(3)</script>">data</a>` +
		`<iframe src="` + canary + `/frame"></iframe><object data="` + canary + `/object"></object></body></html>`
	long := strings.Repeat("A<", 20000)
	ln, err := testserver.Listen(func(c net.Conn) {
		defer c.Close()
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return
		}
		sel, _, _ := strings.Cut(strings.TrimRight(line, "\r\n"), "\t")
		host, port, _ := net.SplitHostPort(c.LocalAddr().String())
		hp := host + "\t" + port
		switch sel {
		case "", "/":
			fmt.Fprintf(c, "i<script>fetch('%s/info')</script>\tfake\t(NULL)\t0\r\n", canary)
			fmt.Fprintf(c, "0\"><img src=%s/attr onerror=alert(4)>\t/a\"><script>alert(5)</script>\t%s\r\n", canary, hp)
			fmt.Fprintf(c, "hClick me\tURL:javascript:fetch('%s/js')\t%s\r\n", canary, hp)
			fmt.Fprintf(c, "hVB\tURL:vbscript:msgbox(1)\t%s\r\n", hp)
			fmt.Fprintf(c, "hData\tURL:data:text/html,<script>fetch('%s/data')</script>\t%s\r\n", canary, hp)
			fmt.Fprintf(c, "1&lt;script&gt;alert(6)&lt;/script&gt; &#60;b&#62;\t/e\t%s\r\n", hp)
			fmt.Fprintf(c, "0%s\t/long\t%s\r\n", long, hp)
			fmt.Fprintf(c, "0bad \xff\xfe<b>utf-8\t/bad\t%s\r\n", hp)
			fmt.Fprintf(c, "9a\rX-Injected: 1\t/f\rX-Injected: 1\t%s\r\n", hp)
			fmt.Fprintf(c, "hThe page\t/page.html\t%s\r\n", hp)
			io.WriteString(c, ".\r\n")
		case "/page.html":
			io.WriteString(c, page)
		default:
			io.WriteString(c, "text <script>alert(7)</script>\r\n.\r\n")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return "gopher://" + ln.Addr().String()
}

// gopherPageOf is the live gateway's path of a Gopher server.
func gopherPageOf(live, hole string) string {
	return live + "/gopher/" + strings.TrimPrefix(hole, "gopher://")
}

// TestHostileContent: menus, an HTML item, FTP names, WAIS headlines and news articles that attack
// the pages showing them, opened in headless Chromium through deref
// serve, live and replayed from deref crawl's archive: no script runs, no
// dialog opens, no request reaches the canary (a listener every attack
// names), no page leaves the gateway, no link with a script URL is
// there to click, and no response header is split.
func TestHostileContent(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("no chromium: the interop start script installs it")
	}
	var hits atomic.Int64
	var mu sync.Mutex
	var paths []string
	cs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
	}))
	hitPaths := func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(paths, " ")
	}
	defer cs.Close()
	canary := cs.URL
	hole := hostileGopher(t, canary)
	ns := nntpd.New()
	ns.AddGroup("local.hostile", "<script>alert(8)</script>")
	ns.Post("local.hostile", "<h1@test>", []string{`From: "><img src=` + canary + `/from> <a@test>`, "Subject: <script>fetch('" + canary + "/subject')</script>", "Date: Sun, 22 Nov 2026 10:00:00 +0000"},
		"<script>alert(9)</script>\n")
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	group := "nntp://" + ns.Addr() + "/local.hostile"

	// FTP names: an FTP server (ftpserverlib) listing files named as
	// attacks.
	root := t.TempDir()
	for _, name := range []string{`<img src=x onerror=alert(10)>.txt`, `"><script>alert(11)<`, `javascript:alert(12)`, "bad \xff\xfe.txt", "&lt;b&gt;.txt", "cr\rX-Injected: 1.txt"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := ftpd.Start(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()

	// WAIS headlines: a document named as an attack, found by a search
	// for its name.
	ws := waisd.New()
	evilDoc := `"><img src=x onerror=alert(17)>`
	ws.Add(evilDoc, "<script>alert(18)</script>\n")
	if err := ws.Start(); err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	search := "wais://" + ws.Addr() + "/test?" + url.QueryEscape(strings.ToLower(evilDoc))

	bin := buildDeref(t)
	dir := t.TempDir()
	runTool(t, bin, "crawl", "-s", "--no-netrc", "--warc-file", filepath.Join(dir, "h"), hole+"/1/", group, fs.URL(), search)
	// An archive that attacks too: its fields (the URI, the media type)
	// as markup, shown on the collection's and the captures' pages.
	w, err := warc.Create(filepath.Join(dir, "evil"), warc.Options{Software: "deref-interop"})
	if err != nil {
		t.Fatal(err)
	}
	evilURI := `gopher://h.invalid/0/"><script>alert(13)</script>`
	for _, r := range []warc.Record{
		{Type: "resource", URI: evilURI, MediaType: `text/html"><img src=` + canary + `/mime onerror=alert(14)>`, Protocol: "gopher", Status: "-", Body: strings.NewReader("<script>alert(15)</script>")},
		{Type: "resource", URI: "gopher://h.invalid/1/", MediaType: "application/gopher-menu", Protocol: "gopher", Status: "-",
			Body: strings.NewReader("hx\tURL:javascript:alert(16)\th.invalid\t70\r\n0<img src=" + canary + "/menu>\t/\"><b>\th.invalid\t70\r\n.\r\n")},
	} {
		r.Date = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		if _, err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	live, _ := startServe(t)
	replay, _ := startServe(t, "--archive", filepath.Join(dir, "h.warc.gz"), "--archive", filepath.Join(dir, "evil.warc.gz"))
	ctx := browse(t, chromium, live)

	const scriptLinks = `Array.from(document.querySelectorAll('a, area')).filter(a => /^\s*(javascript|vbscript|data):/i.test((a.getAttribute('href') || '') + ' ' + (a.getAttribute('xlink:href') || '')) ||
		/^\s*(javascript|vbscript|data):/i.test(a.getAttribute('xlink:href') || '')).map(a => a.outerHTML)`
	// A page of the gateway's has no such link; an object sent as it is
	// (sandboxed) keeps its bytes, and there each such link is clicked,
	// to do nothing.
	const clickAll = `Array.from(document.querySelectorAll('a, area')).forEach(a => a.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, view: window}))); true`
	open := func(name, u, base string) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		before := hits.Load()
		if err := chromedp.Do(sctx, chromedp.Navigate(u), chromedp.Sleep(1500*time.Millisecond)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// A dialog would be showing: the browser says none is.
		if _, err := chromedp.Run(sctx, func(ctx context.Context, tg *chromedp.Target) (cdp.Empty, error) {
			return cdp.Call(ctx, tg, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}); err == nil {
			t.Errorf("%s: a dialog opened", name)
		}
		loc, err := chromedp.Run(sctx, chromedp.Location())
		if err != nil || !strings.HasPrefix(loc, base+"/") {
			t.Errorf("%s: the page went to %q (%v)", name, loc, err)
		}
		links, err := chromedp.Run(sctx, chromedp.Evaluate[[]string](scriptLinks))
		switch {
		case err != nil:
			t.Errorf("%s: %v", name, err)
		case strings.Contains(name, "as it is") && len(links) > 0:
			if _, err := chromedp.Run(sctx, chromedp.Evaluate[bool](clickAll)); err != nil {
				t.Errorf("%s: clicking: %v", name, err)
			}
			chromedp.Do(sctx, chromedp.Sleep(time.Second))
			if _, err := chromedp.Run(sctx, func(ctx context.Context, tg *chromedp.Target) (cdp.Empty, error) {
				return cdp.Call(ctx, tg, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
			}); err == nil {
				t.Errorf("%s: a click opened a dialog", name)
			}
			if loc, err := chromedp.Run(sctx, chromedp.Location()); err != nil || !strings.HasPrefix(loc, base+"/") {
				t.Errorf("%s: a click took the page to %q (%v)", name, loc, err)
			}
		case len(links) > 0:
			t.Errorf("%s: links with script URLs: %q", name, links)
		}
		if n := hits.Load() - before; n > 0 {
			t.Errorf("%s: %d requests reached the canary: %s", name, n, hitPaths())
		}
	}
	gopherPage := gopherPageOf(live, hole)
	open("the live menu", gopherPage+"/1/", live)
	open("the live menu of entities", gopherPage+"/1/e", live)
	open("a live text", gopherPage+"/0/long", live)
	open("the live HTML item, as it is", gopherPage+"/h/page.html", live)
	open("the live group", live+"/nntp/"+ns.Addr()+"/local.hostile", live)
	open("the live article", live+"/nntp/"+ns.Addr()+"/local.hostile/1", live)
	su, err := derefurl.Parse(search)
	if err != nil {
		t.Fatal(err)
	}
	open("the live WAIS search", live+gateway.PagePath(su), live)
	// Shown, as text: the attacks are there to be seen, escaped.
	for _, c := range []struct{ u, want string }{
		{live + gateway.PagePath(su), "&lt;img src=x onerror=alert(17)&gt;"},
		{gopherPageOf(live, hole) + "/1/", "&lt;script&gt;fetch("},
		{live + "/ftp/" + fs.Addr() + "/", "&lt;img src=x onerror=alert(10)&gt;.txt"},
	} {
		resp, err := http.Get(c.u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), c.want) {
			t.Errorf("%s: %d, no %q in\n%.2000s", c.u, resp.StatusCode, c.want, b)
		}
	}
	open("the replayed WAIS search", replay+"/h/"+search, replay)
	open("the live FTP folder", live+"/ftp/"+fs.Addr()+"/", live)
	open("the replayed FTP folder", replay+"/h/"+fs.URL(), replay)
	open("the replayed menu", replay+"/h/"+hole+"/1/", replay)
	open("the replayed HTML item", replay+"/h/"+hole+"/h/page.html", replay)
	open("the replayed HTML item, id_, as it is", replay+"/h/"+time.Now().UTC().Format("20060102150405")+"id_/"+hole+"/h/page.html", replay)
	open("the replayed group", replay+"/h/"+group, replay)
	open("the collection", replay+"/h/", replay)
	open("the captures", replay+"/h/*/"+hole+"/1/", replay)
	open("a hostile archive's collection", replay+"/evil/", replay)
	open("a hostile archive's captures", replay+"/evil/*/"+url.PathEscape(evilURI), replay)
	open("a hostile archive's menu", replay+"/evil/20260102030405/gopher://h.invalid/1/", replay)
	open("a hostile archive's object, as it is", replay+"/evil/20260102030405id_/"+url.PathEscape(evilURI), replay)

	// No header split by a name with a CR in it (or an LF, in a URL: no
	// listing can carry one, its lines ending there).
	for _, u := range []string{gopherPage + "/9/f%0DX-Injected:%201?download=1", gopherPage + "/9/f%0DX-Injected:%201",
		live + "/ftp/" + fs.Addr() + "/cr%0DX-Injected:%201.txt?download=1", live + "/ftp/" + fs.Addr() + "/lf%0AX-Injected:%201.txt?download=1"} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("X-Injected") != "" {
			t.Errorf("%s: a header split: %v", u, resp.Header)
		}
	}
	if hits.Load() > 0 {
		t.Errorf("the canary was reached: %s", hitPaths())
	}
}
