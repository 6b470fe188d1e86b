//go:build interop

package interop

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/urlderef/deref/internal/testserver/waisd"
)

// TestReplayInBrowser archives gophernicus's pub menu with deref crawl
// and nginx's conv site (a page, its style sheet and images) with wget
// --warc-file --warc-cdx (the collection given by wget's CDX file), then browses both in headless Chromium through deref serve
// --archive: every link of every page leads into the archive, everything
// the pages load comes from the replay server, the menu's item opens its
// text, and the web page's links and images are its captures'.
func TestReplayInBrowser(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("no chromium: the interop start script installs it")
	}
	bin := buildDeref(t)
	dir := t.TempDir()
	gn := gopherServers(t)["gophernicus"]
	site := env(t, "DEREF_INTEROP_HTTP") + "/conv/"
	runTool(t, bin, "crawl", "-s", "--no-netrc", "--warc-file", filepath.Join(dir, "hole"), gn+"/1/pub/")
	runTool(t, "wget", "-q", "-r", "-np", "-p", "-P", filepath.Join(dir, "w"), "--warc-file="+filepath.Join(dir, "wget"), "--warc-cdx", "--no-warc-keep-log", site)
	vs := ftpServers(t)["vsftpd"] + "/pub/"
	group := env(t, "DEREF_INTEROP_NEWS") + "/local.test"
	runTool(t, bin, "crawl", "-s", "--no-netrc", "--scope", "prefix", "--warc-file", filepath.Join(dir, "mixed"), vs, site, group)
	webSite := env(t, "DEREF_INTEROP_HTTP") + "/replay/"
	runTool(t, bin, "crawl", "-s", "--no-netrc", "-r", "-np", "-p", "-e", "robots=off", "--warc-file", filepath.Join(dir, "web"), webSite)
	ws := waisd.New() // no Debian WAIS server: the suite's own, which follows the captured bytes
	if err := ws.Start(); err != nil {
		t.Fatal(err)
	}
	search := "wais://" + ws.Addr() + "/test?gophers"
	doc := strings.Split(strings.Split(runTool(t, bin, "--no-netrc", search), "\n")[0], "\t")[4]
	runTool(t, bin, "-s", "--no-netrc", "--warc-file", filepath.Join(dir, "wais"), "-o", os.DevNull, search, "-o", os.DevNull, doc)
	ws.Close()
	base, _ := startServe(t, "--archive", filepath.Join(dir, "hole.warc.gz"), "--archive", filepath.Join(dir, "wget.cdx"), "--archive", filepath.Join(dir, "mixed.warc.gz"),
		"--archive", filepath.Join(dir, "wais.warc.gz"), "--archive", filepath.Join(dir, "web.warc.gz"))

	ctx := browse(t, path, base)
	// Every link and every resource the page loaded, as absolute URLs; the
	// banner's link to the live page (class live) aside.
	const linksJS = `Array.from(document.querySelectorAll('a[href]:not(.live),img[src],link[href],script[src],form[action]')).map(e => e.href || e.src || e.action)`
	const loadedJS = `performance.getEntriesByType('resource').map(e => e.name)`
	visit := func(name, u, wait string) (links, loaded []string, text string) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS(wait))); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var err error
		if links, err = chromedp.Run(sctx, chromedp.Evaluate[[]string](linksJS)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if loaded, err = chromedp.Run(sctx, chromedp.Evaluate[[]string](loadedJS)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if text, err = chromedp.Run(sctx, chromedp.Text(chromedp.CSS("body"))); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, l := range append(append([]string{}, links...), loaded...) {
			if !strings.HasPrefix(l, base+"/") && !strings.HasPrefix(l, "mailto:") {
				t.Errorf("%s: %s leads out of the archive", name, l)
			}
		}
		return links, loaded, text
	}
	links, _, text := visit("the menu", base+"/hole/"+gn+"/1/pub/", "ul.menu")
	if !strings.Contains(text, "README.txt") || !strings.Contains(text, "Archived ") {
		t.Errorf("the menu: %q", text)
	}
	var readme string
	for _, l := range links {
		if strings.HasSuffix(l, "/0/pub/README.txt") {
			readme = l
		}
	}
	if readme == "" {
		t.Fatalf("no README link among %q", links)
	}
	want, _ := os.ReadFile(filepath.Join(env(t, "DEREF_INTEROP_TREE"), "pub", "README.txt"))
	if _, _, text := visit("the README", readme, "pre"); !strings.Contains(text, strings.TrimSpace(string(want))[:40]) {
		t.Errorf("the README: %q", text)
	}
	links, loaded, text := visit("wget's page", base+"/wget/"+site, "body")
	if !strings.Contains(text, "a folder") || !strings.Contains(text, "Archived ") {
		t.Errorf("wget's page: %q", text)
	}
	for _, want := range []string{"/conv/style.css", "/conv/img/a.png"} {
		found := false
		for _, l := range loaded {
			found = found || strings.HasSuffix(l, want)
		}
		if !found {
			t.Errorf("wget's page did not load its %s from the archive: %q", want, loaded)
		}
	}
	for _, want := range []string{"/conv/sub/", "/conv/sub/page.html#part", "https://example.invalid/x"} {
		found := false
		for _, l := range links {
			found = found || strings.HasSuffix(l, want)
		}
		if !found {
			t.Errorf("wget's page lacks a link to %s: %q", want, links)
		}
	}
	// deref's own crawl of an FTP tree, the same web page and a group.
	if _, _, text := visit("vsftpd's folder", base+"/mixed/"+vs, "table"); !strings.Contains(text, "random.bin") || !strings.Contains(text, "nested/") {
		t.Errorf("vsftpd's folder: %q", text)
	}
	_, loaded, text = visit("deref's crawl of the page", base+"/mixed/"+site, "body")
	if !strings.Contains(text, "a folder") || len(loaded) == 0 {
		t.Errorf("the page: %q, loaded %q", text, loaded)
	}
	links, _, text = visit("the group", base+"/mixed/"+group, "table")
	if !strings.Contains(text, "first article") {
		t.Errorf("the group: %q", text)
	}
	article := ""
	for _, l := range links {
		if strings.Contains(l, "/local.test/") {
			article = l
			break
		}
	}
	if article == "" {
		t.Fatalf("no article among %q", links)
	}
	if _, _, text := visit("an article", article, "pre"); !strings.Contains(text, "Newsgroups") {
		t.Errorf("the article: %q", text)
	}
	// A site crawled by deref: its page renders with its style sheet, the
	// background that loads and its image, all from the archive; its
	// script is not run (the gateway's CSP); its link leads to the
	// second page's capture.
	links, loaded, text = visit("deref's crawl of a site", base+"/web/"+webSite, "#dot")
	width, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.getElementById('dot').naturalWidth`))
	if err != nil || width != 1 || !strings.Contains(text, "The replayed page.") {
		t.Errorf("the site's page: image width %d (%v), %q", width, err, text)
	}
	for _, want := range []string{"/replay/style.css", "/replay/img/bg.png", "/replay/img/dot.png"} {
		found := false
		for _, l := range loaded {
			found = found || strings.HasSuffix(l, want)
		}
		if !found {
			t.Errorf("the site's page did not load %s from the archive: %q", want, loaded)
		}
	}
	if title, _ := chromedp.Run(ctx, chromedp.Title()); title == "the script ran" {
		t.Error("an archived script ran")
	}
	page2 := ""
	for _, l := range links {
		if strings.HasSuffix(l, "/replay/page2.html") {
			page2 = l
		}
	}
	if _, _, text := visit("the second page", page2, "p"); !strings.Contains(text, "The second page.") {
		t.Errorf("the second page: %q", text)
	}
	// A WAIS search archived, its server gone: the hits, and a document.
	links, _, text = visit("a WAIS search", base+"/wais/"+search, "ol")
	if !strings.Contains(text, "alpha.txt") {
		t.Errorf("the WAIS search: %q", text)
	}
	if len(links) == 0 {
		t.Fatal("no hits linked")
	}
	hit := "" // the hit archived, alpha.txt's (the others lead to "not archived")
	for _, l := range links {
		if strings.Contains(l, "alpha.txt") {
			hit = l
		}
	}
	if _, _, text := visit("a WAIS document", hit, "body"); !strings.Contains(text, strings.TrimSpace(waisd.Alpha)[:20]) {
		t.Errorf("the document: %q", text)
	}
	// A link to what was not archived leads to a page saying so.
	if _, _, text := visit("not archived", base+"/wget/"+time.Now().UTC().Format("20060102150405")+"/https://example.invalid/x", "main"); !strings.Contains(text, "was not archived") {
		t.Errorf("not archived: %q", text)
	}
}
