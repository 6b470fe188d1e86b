//go:build interop

package interop

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/urlderef/deref/fetch/warc"
)

// replayWeb serves ReplayWeb.page (the npm package's ui.js and sw.js) on
// 127.0.0.1, as its embedding guide lays it out, with the WACZ files of
// dir under /w/ (ranges answered 206, as it reads them): /?wacz=NAME
// opens NAME.wacz's page list, and &url=URL the page of URL alone.
func replayWeb(t *testing.T, dir string) string {
	t.Helper()
	pkg := env(t, "DEREF_INTEROP_REPLAYWEB")
	mux := http.NewServeMux()
	js := func(file string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/javascript")
			http.ServeFile(w, r, filepath.Join(pkg, file))
		}
	}
	mux.HandleFunc("/ui.js", js("ui.js"))
	mux.HandleFunc("/replay/ui.js", js("ui.js"))
	mux.HandleFunc("/replay/sw.js", js("sw.js"))
	mux.Handle("/w/", http.StripPrefix("/w/", http.FileServer(http.Dir(dir))))
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		attrs := fmt.Sprintf(`source="/w/%s.wacz" replayBase="/replay/"`, html.EscapeString(r.URL.Query().Get("wacz")))
		if u := r.URL.Query().Get("url"); u != "" {
			attrs += fmt.Sprintf(` url="%s" embed="replayonly"`, html.EscapeString(u))
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html><head><script src=\"/ui.js\"></script></head><body><replay-web-page %s style=\"width:1000px;height:700px;display:block\"></replay-web-page></body></html>", attrs)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s.URL
}

// inFrame evaluates expr in the first frame whose URL holds part (an
// isolated world: the frame's DOM, not its scripts' globals), within
// wait; ok is false when no such frame came.
func inFrame[T any](ctx context.Context, part, expr string, wait time.Duration) (v T, url string, ok bool) {
	for start := time.Now(); time.Since(start) < wait; time.Sleep(250 * time.Millisecond) {
		tree, err := chromedp.Run(ctx, func(ctx context.Context, t *chromedp.Target) (*page.FrameTree, error) {
			r, err := cdp.Call(ctx, t, page.GetFrameTree, cdp.Empty{})
			return r.FrameTree, err
		})
		if err != nil || tree == nil {
			continue
		}
		var find func(*page.FrameTree) *cdp.Frame
		find = func(ft *page.FrameTree) *cdp.Frame {
			if strings.Contains(ft.Frame.URL, part) {
				return ft.Frame
			}
			for _, c := range ft.ChildFrames {
				if f := find(c); f != nil {
					return f
				}
			}
			return nil
		}
		f := find(tree)
		if f == nil {
			continue
		}
		res, err := chromedp.Run(ctx, func(ctx context.Context, t *chromedp.Target) (*runtime.RemoteObject, error) {
			w, err := cdp.Call(ctx, t, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: f.ID})
			if err != nil {
				return nil, err
			}
			yes := true
			r, err := cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{Expression: expr, ContextID: w.ExecutionContextID, ReturnByValue: &yes, AwaitPromise: &yes})
			if err == nil && r.ExceptionDetails != nil {
				err = fmt.Errorf("%s", r.ExceptionDetails.Text)
			}
			return r.Result, err
		})
		if err != nil || res == nil || json.Unmarshal(res.Value, &v) != nil {
			continue
		}
		return v, f.URL, true
	}
	return v, "", false
}

// replayed opens URL of NAME.wacz in ReplayWeb.page, in a browser
// context of its own (the service worker's store its own), and returns
// what the replayed page shows: its title, its image's width, its
// background, its text. Its frame is waited for, and the page loaded
// again once if it does not come (ReplayWeb.page's start-up race).
func replayed(t *testing.T, browser context.Context, rwp, name, target string) (got struct {
	Title, Background, Text string
	Width                   int
}, ok bool) {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	defer cancel()
	page := rwp + "/?wacz=" + url.QueryEscape(name) + "&url=" + url.QueryEscape(target)
	const expr = `(() => { const img = document.querySelector('img'); const b = document.body;
		return {Title: document.title, Width: img ? img.naturalWidth : -1, Background: b ? getComputedStyle(b).backgroundImage : '', Text: b ? b.innerText : ''}; })()`
	type shown = struct {
		Title, Background, Text string
		Width                   int
	}
	for try := range 3 {
		if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
			t.Fatal(err)
		}
		// The frame comes, then its document fills: waited for until it
		// shows its text and its image has loaded (or 30 s).
		var v shown
		found := false
		for start := time.Now(); time.Since(start) < 30*time.Second; time.Sleep(250 * time.Millisecond) {
			var ok bool
			if v, _, ok = inFrame[shown](ctx, "mp_/"+target, expr, 5*time.Second); ok {
				found = true
				if strings.TrimSpace(v.Text) != "" && v.Width != 0 {
					return v, true
				}
			}
		}
		if found && strings.TrimSpace(v.Text) != "" {
			return v, true // no image, or one that never loads: the caller says so
		}
		t.Logf("%s: no replayed page for %s (try %d): %+v", name, target, try+1, v)
	}
	return got, false
}

// pageList is the text of NAME.wacz's page list in ReplayWeb.page: its
// nested shadow roots walked.
func pageList(t *testing.T, browser context.Context, rwp, name string, wants ...string) string {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	defer cancel()
	const expr = `(() => { const out = []; const walk = n => { if (n.shadowRoot) walk(n.shadowRoot);
		for (const c of n.childNodes || []) { if (c.nodeType === 3) out.push(c.textContent); else walk(c); } };
		walk(document.body || document); return out.join(' ').replace(/\s+/g, ' '); })()`
	text := ""
	for try := range 3 {
		if err := chromedp.Do(ctx, chromedp.Navigate(rwp+"/?wacz="+url.QueryEscape(name))); err != nil {
			t.Fatal(err)
		}
		for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(500 * time.Millisecond) {
			text, _, _ = inFrame[string](ctx, "/replay/?source=", expr, 5*time.Second)
			all := true
			for _, w := range wants {
				all = all && strings.Contains(text, w)
			}
			if all {
				return text
			}
		}
		t.Logf("%s: the page list, try %d: %q", name, try+1, text)
	}
	return text
}

// TestWACZInReplayWebPage: deref crawl --wacz of nginx's site (a page,
// its style sheet with a background, an image, a script) and a
// gophernicus menu, opened in ReplayWeb.page, self-hosted on 127.0.0.1
// in headless Chromium: the page list shows the site's page by its
// title, and the page renders with its image and background. What it
// shows for the Gopher menu is said in deref help warc.
func TestWACZInReplayWebPage(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("no chromium: the interop start script installs it")
	}
	bin := buildDeref(t)
	dir := t.TempDir()
	site := env(t, "DEREF_INTEROP_HTTP") + "/replay/"
	menu := gopherServers(t)["gophernicus"] + "/1/pub/"
	ftpFile := ftpServers(t)["vsftpd"] + "/pub/README.txt"
	runTool(t, bin, "crawl", "-s", "--no-netrc", "-r", "-np", "-p", "-l", "1", "-e", "robots=off", "--wacz", filepath.Join(dir, "web.wacz"), site, menu, ftpFile)
	runTool(t, bin, "wacz", "validate", filepath.Join(dir, "web.wacz"))
	rwp := replayWeb(t, dir)
	browser := browse(t, chromium, rwp)

	list := pageList(t, browser, rwp, "web", "replay", site, "page 2")
	for _, want := range []string{"replay", site, "page 2"} {
		if !strings.Contains(list, want) {
			t.Errorf("the page list lacks %q: %q", want, list)
		}
	}
	got, ok := replayed(t, browser, rwp, "web", site)
	if !ok {
		t.Fatal("ReplayWeb.page showed no replayed page")
	}
	if got.Width != 1 || !strings.Contains(got.Background, "bg.png") || !strings.Contains(got.Text, "The replayed page.") {
		t.Errorf("the page: %+v", got)
	}
	if got.Title != "the script ran" && got.Title != "replay" {
		t.Errorf("the title: %q", got.Title)
	}
	// The Gopher menu and the FTP file: ReplayWeb.page replays http(s)
	// captures only. It names the page ("Replay of gopher://...") and
	// leaves its frame empty, loading nothing of the capture (deref help
	// warc says so).
	const walk = `(() => { const out = []; const walk = n => { if (n.shadowRoot) walk(n.shadowRoot);
		for (const c of n.childNodes || []) { if (c.nodeType === 3) out.push(c.textContent); else walk(c); } };
		walk(document.body || document); return out.join(' ').replace(/\s+/g, ' '); })()`
	for _, u := range []string{menu, ftpFile} {
		ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
		text := ""
		// Loaded again where the app's frame came before its service
		// worker (the server's 404 in it: ReplayWeb.page's start-up race).
		for try := 0; try < 3 && !strings.Contains(text, "Replay of "+u); try++ {
			if err := chromedp.Do(ctx, chromedp.Navigate(rwp+"/?wacz=web&url="+url.QueryEscape(u))); err != nil {
				t.Fatal(err)
			}
			text = ""
			for start := time.Now(); time.Since(start) < 20*time.Second && !strings.Contains(text, "Replay of "+u) && !strings.Contains(text, "404 page not found"); time.Sleep(500 * time.Millisecond) {
				text, _, _ = inFrame[string](ctx, "/replay/?source=", walk, 5*time.Second)
			}
		}
		if !strings.Contains(text, "Replay of "+u) {
			t.Errorf("ReplayWeb.page on %s: %q", u, text)
		}
		if v, f, found := inFrame[string](ctx, "mp_/"+u, walk, 5*time.Second); found {
			t.Errorf("ReplayWeb.page now replays %s (%s: %q): deref help warc says it does not", u, f, v)
		}
		cancel()
	}
}

// TestJSWACZ: js-wacz 0.1.6 packs wget's WARC file of nginx's site.
// deref wacz validate names the one fault it is known for (each WARC
// file's sha256 taken over its bytes twice, harvard-lil/js-wacz#127) and
// nothing else, and passes the same package with that hash corrected;
// deref serve --archive replays it; deref wacz create of wget's WARC
// file gives a WACZ ReplayWeb.page renders. And a WARC file of 3,500
// captures, packed by js-wacz into its ZipNum layout, is read by deref
// in place, every capture found.
func TestJSWACZ(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("no chromium: the interop start script installs it")
	}
	jswacz := env(t, "DEREF_INTEROP_JSWACZ")
	bin := buildDeref(t)
	dir := t.TempDir()
	site := env(t, "DEREF_INTEROP_HTTP") + "/replay/"
	runTool(t, "wget", "-q", "-r", "-np", "-p", "-e", "robots=off", "-P", filepath.Join(dir, "w"), "--warc-file="+filepath.Join(dir, "wget"), "--no-warc-keep-log", site)
	js := filepath.Join(dir, "js.wacz")
	runTool(t, jswacz, "create", "-f", filepath.Join(dir, "wget.warc.gz"), "-o", js, "--url", site)

	out, err := exec.Command(bin, "wacz", "validate", js).CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 || len(lines) != 1 || !strings.Contains(lines[0], "archive/wget.warc.gz") || !strings.Contains(lines[0], "js-wacz#127") {
		t.Errorf("validate js-wacz's package: %v\n%s", err, out)
	}
	fixed := filepath.Join(dir, "fixed.wacz")
	fixHashes(t, js, fixed)
	if out, err := exec.Command(bin, "wacz", "validate", fixed).CombinedOutput(); err != nil {
		t.Errorf("validate the package with its hash corrected: %v\n%s", err, out)
	}

	base, _ := startServe(t, "--archive", js)
	for path, want := range map[string]string{"/js/" + site: "The replayed page.", "/js/" + site + "style.css": "bg.png", "/js/": site} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("deref serve --archive js.wacz, %s: %d\n%.400s", path, resp.StatusCode, b)
		}
	}

	runTool(t, bin, "wacz", "create", "-o", filepath.Join(dir, "ours.wacz"), filepath.Join(dir, "wget.warc.gz"))
	rwp := replayWeb(t, dir)
	browser := browse(t, chromium, rwp)
	got, ok := replayed(t, browser, rwp, "ours", site)
	if !ok || got.Width != 1 || !strings.Contains(got.Background, "bg.png") || !strings.Contains(got.Text, "The replayed page.") {
		t.Errorf("deref wacz create of wget's WARC file, in ReplayWeb.page: %v %+v", ok, got)
	}

	// js-wacz's ZipNum layout, past 3,000 index lines.
	w, err := warc.Create(filepath.Join(dir, "many"), warc.Options{Software: "deref-interop"})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 3500 {
		body := fmt.Sprintf("<!doctype html><title>page %d</title>", i)
		head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n", len(body))
		if _, err := w.Write(warc.Record{Type: "response", URI: fmt.Sprintf("http://127.0.0.1:9/p/%04d.html", i), Date: at, MediaType: "application/http;msgtype=response",
			Body: strings.NewReader(head + body), PayloadOffset: int64(len(head)), PayloadType: "text/html", Status: "200"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	many := filepath.Join(dir, "many.wacz")
	runTool(t, jswacz, "create", "-f", filepath.Join(dir, "many.warc.gz"), "-o", many)
	zr, err := zip.OpenReader(many)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	zr.Close()
	if !strings.Contains(strings.Join(names, " "), "indexes/index.idx") {
		t.Fatalf("js-wacz wrote no ZipNum index: %v", names)
	}
	a, err := warc.Open(many)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	missing := 0
	for i := range 3500 {
		if len(a.Captures(fmt.Sprintf("http://127.0.0.1:9/p/%04d.html", i))) != 1 {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d captures of 3,500 not found through js-wacz's ZipNum index", missing)
	}
	c, _ := a.Nearest("http://127.0.0.1:9/p/3499.html", at)
	if p, err := a.Open(c); err != nil {
		t.Error(err)
	} else {
		b, _ := io.ReadAll(p)
		p.Close()
		if !bytes.Contains(b, []byte("page 3499")) {
			t.Errorf("the last page: %q", b)
		}
	}
}

// fixHashes writes to out the WACZ in with every file's sha256 in
// datapackage.json made right, and datapackage-digest.json with it, the
// rest as it is.
func fixHashes(t *testing.T, in, out string) {
	t.Helper()
	zr, err := zip.OpenReader(in)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	data := map[string][]byte{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		data[f.Name], _ = io.ReadAll(rc)
		rc.Close()
	}
	var dp map[string]any
	if err := json.Unmarshal(data["datapackage.json"], &dp); err != nil {
		t.Fatal(err)
	}
	for _, r := range dp["resources"].([]any) {
		r := r.(map[string]any)
		sum := sha256.Sum256(data[r["path"].(string)])
		r["hash"] = "sha256:" + hex.EncodeToString(sum[:])
	}
	data["datapackage.json"], _ = json.MarshalIndent(dp, "", "  ")
	sum := sha256.Sum256(data["datapackage.json"])
	data["datapackage-digest.json"], _ = json.Marshal(map[string]string{"path": "datapackage.json", "hash": "sha256:" + hex.EncodeToString(sum[:])})
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, zf := range zr.File {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: zf.Name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data[zf.Name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}
