package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/gateway"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/internal/testserver/ftpd"
	"github.com/urlderef/deref/internal/testserver/nntpd"
	"github.com/urlderef/deref/internal/testserver/waisd"
	"github.com/urlderef/deref/url"
)

// archiveOf records the retrievals of urls into a WARC file in dir, as
// deref --warc-file does, and opens it.
func archiveOf(t *testing.T, dir string, urls ...string) *warc.Archive {
	t.Helper()
	w, err := warc.Create(filepath.Join(dir, "rec"), warc.Options{Software: "deref/test"})
	if err != nil {
		t.Fatal(err)
	}
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	c.Recorder = &warc.Recorder{W: w}
	for _, u := range urls {
		resp, err := c.Get(context.Background(), u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := warc.Open(filepath.Join(dir, "rec.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// follow gets u, and where it answers with a redirect (a capture made a
// second later than the page linking it), where that leads.
func follow(t *testing.T, base, path string) (*http.Response, string) {
	t.Helper()
	resp, body := get(t, base+path)
	if resp.StatusCode == http.StatusFound {
		return get(t, base+resp.Header.Get("Location"))
	}
	return resp, body
}

var hrefs = regexp.MustCompile(`(?:href|src)="([^"]*)"`)

// Every link of a replayed page stays in the archive.
func linksStayIn(t *testing.T, page, coll string) []string {
	t.Helper()
	var out []string
	for _, m := range hrefs.FindAllStringSubmatch(page, -1) {
		l := m[1]
		out = append(out, l)
		if !strings.HasPrefix(l, "/"+coll+"/") && l != "/" && l != "/style.css" && !strings.HasPrefix(l, "#") && !strings.Contains(page, `live</a>`) {
			t.Errorf("a link out of the archive: %q", l)
		}
	}
	return out
}

// A Gopher hole recorded, its servers gone, is browsed in the archive:
// the menu renders as the live gateway renders it, each item linked to
// its memento, a text item shown, its payload given byte for byte with
// id_, an item never archived a page saying so; every memento carries
// Memento-Datetime and a Link header, the TimeGate and the TimeMap
// answer as RFC 7089 has them.
func TestReplayGopher(t *testing.T) {
	addr := gopherServer(t, map[string]string{
		"":       "0A text\t/text\tHOST\tPORT\r\n1Again\t\tHOST\tPORT\r\n0Never fetched\t/never\tHOST\tPORT\r\n9A file\t/f.bin\tHOST\tPORT\r\niinfo\t\terror.host\t1\r\n.\r\n",
		"/text":  "hello\r\n..dot\r\n.\r\n",
		"/f.bin": "\x00\x01binary",
	})
	base := "gopher://" + addr
	a := archiveOf(t, t.TempDir(), base+"/1", base+"/0/text", base+"/9/f.bin")
	s := httptest.NewServer(gateway.Archive(map[string]*warc.Archive{"hole": a}, gateway.Options{}))
	defer s.Close()
	caps := a.Captures(base + "/1")
	if len(caps) != 1 {
		t.Fatalf("%d captures of the menu", len(caps))
	}
	ts := caps[0].Timestamp()

	resp, page := get(t, s.URL+"/hole/"+ts+"/"+base+"/1")
	if resp.StatusCode != 200 || !strings.Contains(page, "A text") || !strings.Contains(page, "Archived ") {
		t.Fatalf("menu: %d\n%s", resp.StatusCode, page)
	}
	for _, want := range []string{`href="/hole/` + ts + `/` + base + `/0/text"`, `href="/hole/` + ts + `/` + base + `/0/never"`} {
		if !strings.Contains(page, want) {
			t.Errorf("no %s in\n%s", want, page)
		}
	}
	linksStayIn(t, page, "hole")
	if resp.Header.Get("Memento-Datetime") != caps[0].Time.UTC().Format(http.TimeFormat) ||
		!strings.Contains(resp.Header.Get("Link"), `<`+base+`/1>; rel="original"`) ||
		!strings.Contains(resp.Header.Get("Link"), `rel="first last memento"`) ||
		!strings.Contains(resp.Header.Get("Link"), `</hole/timemap/link/`+base+`/1>; rel="timemap"`) {
		t.Errorf("memento headers: %v", resp.Header)
	}
	// The text item, read as the live gateway shows it.
	if resp, page := follow(t, s.URL, "/hole/"+ts+"/"+base+"/0/text"); resp.StatusCode != 200 || !strings.Contains(page, "hello\n.dot\n") {
		t.Errorf("text: %d\n%s", resp.StatusCode, page)
	}
	// id_: the payload as the server sent it.
	if resp, body := follow(t, s.URL, "/hole/"+ts+"id_/"+base+"/0/text"); resp.StatusCode != 200 || body != "hello\r\n..dot\r\n.\r\n" {
		t.Errorf("id_: %d %q", resp.StatusCode, body)
	}
	if resp, body := follow(t, s.URL, "/hole/"+ts+"/"+base+"/9/f.bin"); resp.StatusCode != 200 || body != "\x00\x01binary" {
		t.Errorf("binary: %d %q", resp.StatusCode, body)
	}
	// Not archived: a page saying so, linking the live URL, fetching nothing.
	if resp, page := get(t, s.URL+"/hole/"+ts+"/"+base+"/0/never"); resp.StatusCode != 404 || !strings.Contains(page, "was not archived") || !strings.Contains(page, `href="`+base+`/0/never"`) {
		t.Errorf("not archived: %d\n%s", resp.StatusCode, page)
	}
	// A time between, or before, goes to the capture's own time.
	resp, _ = get(t, s.URL+"/hole/1999/"+base+"/1")
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/hole/"+ts+"/"+base+"/1" {
		t.Errorf("a time before: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	// The TimeGate.
	resp, _ = get(t, s.URL+"/hole/"+base+"/1", "Accept-Datetime", "Thu, 01 Jan 2015 00:00:00 GMT")
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/hole/"+ts+"/"+base+"/1" || resp.Header.Get("Vary") != "accept-datetime" {
		t.Errorf("timegate: %d %v", resp.StatusCode, resp.Header)
	}
	// The TimeMap.
	resp, body := get(t, s.URL+"/hole/timemap/link/"+base+"/1")
	if resp.Header.Get("Content-Type") != "application/link-format" || !strings.HasPrefix(body, "<"+base+"/1>; rel=\"original\",\n") ||
		!strings.Contains(body, "</hole/"+ts+"/"+base+"/1>; rel=\"first last memento\"; datetime=\"") {
		t.Errorf("timemap: %s\n%s", resp.Header.Get("Content-Type"), body)
	}
}

// The nearest capture wins; a revisit replays the payload it repeats, at
// its own time.
func TestReplayNearest(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "t"), warc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := func(y int) time.Time { return time.Date(y, 6, 1, 12, 0, 0, 0, time.UTC) }
	w.Write(warc.Record{Type: "resource", URI: "gopher://h/0/a", Date: at(2020), MediaType: "text/plain", Body: strings.NewReader("2020\r\n.\r\n")})
	w.Write(warc.Record{Type: "resource", URI: "gopher://h/0/a", Date: at(2024), MediaType: "text/plain", Body: strings.NewReader("2024\r\n.\r\n")})
	w.Write(warc.Record{Type: "resource", URI: "gopher://h/0/a", Date: at(2026), MediaType: "text/plain", Body: strings.NewReader("2020\r\n.\r\n")}) // a revisit
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := warc.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	caps := a.Captures("gopher://h/0/a")
	if len(caps) != 3 || caps[2].Type != "revisit" {
		t.Fatalf("captures %+v", caps)
	}
	for _, tt := range []struct {
		t    time.Time
		want int
	}{{at(2019), 2020}, {at(2021), 2020}, {at(2023), 2024}, {at(2025).Add(24 * time.Hour), 2026}} {
		c, ok := a.Nearest("gopher://h/0/a", tt.t)
		if !ok || c.Time.Year() != tt.want {
			t.Errorf("nearest %v: %v", tt.t, c.Time)
		}
	}
	s := httptest.NewServer(gateway.Archive(map[string]*warc.Archive{"t": a}, gateway.Options{}))
	defer s.Close()
	resp, body := get(t, s.URL+"/t/"+caps[2].Timestamp()+"id_/gopher://h/0/a")
	if resp.StatusCode != 200 || body != "2020\r\n.\r\n" || resp.Header.Get("Memento-Datetime") != at(2026).Format(http.TimeFormat) {
		t.Errorf("the revisit: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if link := resp.Header.Get("Link"); !strings.Contains(link, `rel="prev memento"`) || !strings.Contains(link, `/t/20200601120000/gopher://h/0/a>; rel="first memento"`) {
		t.Errorf("Link: %s", link)
	}
}

// An FTP tree and a web site recorded, their servers stopped, replay
// with every link in the archive: the folder's table, the page's links,
// images, style sheets and what those load.
func TestReplayFTPAndWeb(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "pub", "sub"), 0o755)
	os.WriteFile(filepath.Join(root, "pub", "a.txt"), []byte("alpha\n"), 0o644)
	fs, err := ftpd.Start(root)
	if err != nil {
		t.Fatal(err)
	}
	var webURL string
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<html><head><link rel="stylesheet" href="s.css"><base href="`+webURL+`/"></head><body><a href="b.html#top">b</a> <img src="/i.png" srcset="/i.png 1x, /j.png 2x"><a href="gopher://elsewhere.invalid/1/">away</a><form action="/find"></form><script src="app.js"></script><iframe src="frame.html"></iframe><div style="background: url(bg2.png)"></div></body></html>`)
		case "/s.css":
			w.Header().Set("Content-Type", "text/css")
			io.WriteString(w, `body { background: url("bg.png") } @import 'more.css';`)
		case "/i.png":
			w.Header().Set("Content-Type", "image/png")
			io.WriteString(w, "PNG")
		default:
			http.NotFound(w, r)
		}
	}))
	webURL = web.URL
	ftpURL := fs.URL()
	a := archiveOf(t, t.TempDir(), ftpURL+"pub/", ftpURL+"pub/a.txt", web.URL+"/", web.URL+"/s.css", web.URL+"/i.png")
	fs.Close()
	web.Close() // nothing reaches them from here on
	s := httptest.NewServer(gateway.Archive(map[string]*warc.Archive{"site": a}, gateway.Options{}))
	defer s.Close()

	ts := a.Captures(ftpURL + "pub/")[0].Timestamp()
	resp, page := get(t, s.URL+"/site/"+ts+"/"+ftpURL+"pub/")
	if resp.StatusCode != 200 || !strings.Contains(page, `<a href="/site/`+ts+`/`+ftpURL+`pub/a.txt">a.txt</a>`) ||
		!strings.Contains(page, `<a href="/site/`+ts+`/`+ftpURL+`pub/sub/">sub/</a>`) {
		t.Errorf("the folder: %d\n%s", resp.StatusCode, page)
	}
	linksStayIn(t, page, "site")
	resp, _ = follow(t, s.URL, "/site/"+ts+"/"+ftpURL+"pub/a.txt")
	if resp.StatusCode != 200 {
		t.Errorf("a.txt: %d", resp.StatusCode)
	}

	wts := a.Captures(web.URL + "/")[0].Timestamp()
	resp, page = get(t, s.URL+"/site/"+wts+"/"+web.URL+"/")
	for _, want := range []string{
		`href="/site/` + wts + `/` + web.URL + `/s.css"`, `href="/site/` + wts + `/` + web.URL + `/b.html#top"`,
		`src="/site/` + wts + `/` + web.URL + `/i.png"`, `srcset="/site/` + wts + `/` + web.URL + `/i.png 1x, /site/` + wts + `/` + web.URL + `/j.png 2x"`,
		`href="/site/` + wts + `/gopher://elsewhere.invalid/1/"`, `action="/site/` + wts + `/` + web.URL + `/find"`, "Archived ",
		`<script src="/site/` + wts + `/` + web.URL + `/app.js">`, `<iframe src="/site/` + wts + `/` + web.URL + `/frame.html">`,
		`style="background: url(/site/` + wts + `/` + web.URL + `/bg2.png)"`,
	} {
		if resp.StatusCode != 200 || !strings.Contains(page, want) {
			t.Errorf("no %s in\n%s", want, page)
		}
	}
	if strings.Contains(page, "<base") {
		t.Errorf("<base> kept:\n%s", page)
	}
	resp, css := follow(t, s.URL, "/site/"+wts+"/"+web.URL+"/s.css")
	cts := strings.TrimPrefix(resp.Request.URL.Path, "/site/")[:14] // the style sheet's own capture
	if !strings.Contains(css, `url("/site/`+cts+`/`+web.URL+`/bg.png")`) || !strings.Contains(css, `@import '/site/`+cts+`/`+web.URL+`/more.css'`) {
		t.Errorf("style sheet: %s", css)
	}
}

// A newsgroup and its article replay: the group's table links each
// article to its capture, the article shows its headers and body.
func TestReplayNews(t *testing.T) {
	ns := nntpd.New()
	ns.AddGroup("local.test", "")
	ns.Post("local.test", "<a1@test>", []string{"From: A <a@test>", "Subject: the first", "Date: Sun, 22 Nov 2026 10:00:00 +0000"}, "Hello.\n")
	ns.Post("local.test", "<a2@test>", []string{"From: B <b@test>", "Subject: Re: the first", "References: <a1@test>", "Date: Sun, 22 Nov 2026 11:00:00 +0000"}, "Hi.\n")
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NNTPSERVER", ns.Addr())
	base := "nntp://" + ns.Addr() + "/local.test"
	a := archiveOf(t, t.TempDir(), base, base+"/1", base+"/2", "news:a1@test")
	ns.Close()
	s := httptest.NewServer(gateway.Archive(map[string]*warc.Archive{"n": a}, gateway.Options{}))
	defer s.Close()
	ts := a.Captures(base)[0].Timestamp()
	resp, page := get(t, s.URL+"/n/"+ts+"/"+base)
	if resp.StatusCode != 200 || !strings.Contains(page, `<a href="/n/`+ts+`/`+base+`/1">the first</a>`) {
		t.Errorf("the group: %d\n%s", resp.StatusCode, page)
	}
	linksStayIn(t, page, "n")
	resp, page = follow(t, s.URL, "/n/"+ts+"/"+base+"/1")
	if resp.StatusCode != 200 || !strings.Contains(page, "<b>Subject</b>: the first") || !strings.Contains(page, "Hello.") {
		t.Errorf("the article: %d\n%s", resp.StatusCode, page)
	}
	// A reply's References lead to the capture of the article it names.
	resp, page = follow(t, s.URL, "/n/"+ts+"/"+base+"/2")
	ts2 := strings.TrimPrefix(resp.Request.URL.Path, "/n/")[:14]
	want := `<b>References</b>: <a href="/n/` + ts2 + `/news:a1@test">&lt;a1@test&gt;</a>`
	if !strings.Contains(page, want) {
		t.Errorf("no %s in\n%s", want, page)
	}
	resp, page = follow(t, s.URL, "/n/"+ts2+"/news:a1@test")
	if resp.StatusCode != 200 || !strings.Contains(page, "Hello.") {
		t.Errorf("the article referred to: %d\n%s", resp.StatusCode, page)
	}
}

// A Gopher search item of an archived menu is a form whose words lead to
// the search archived with them.
func TestReplaySearch(t *testing.T) {
	addr := gopherServer(t, map[string]string{
		"":      "7Find\t/find\tHOST\tPORT\r\n.\r\n",
		"/find": "0A hit\t/hit\tHOST\tPORT\r\n.\r\n",
	})
	base := "gopher://" + addr
	a := archiveOf(t, t.TempDir(), base+"/1", base+"/7/find%09gopher%20holes")
	s := httptest.NewServer(gateway.Archive(map[string]*warc.Archive{"g": a}, gateway.Options{}))
	defer s.Close()
	ts := a.Captures(base + "/1")[0].Timestamp()
	_, page := get(t, s.URL+"/g/"+ts+"/"+base+"/1")
	if !strings.Contains(page, `href="/g/`+ts+`/`+base+`/7/find"`) {
		t.Fatalf("the menu:\n%s", page)
	}
	resp, page := get(t, s.URL+"/g/"+ts+"/"+base+"/7/find")
	if resp.StatusCode != 200 || !strings.Contains(page, `<input type="text" name="q"`) {
		t.Fatalf("the search's form: %d\n%s", resp.StatusCode, page)
	}
	resp, _ = get(t, s.URL+"/g/"+ts+"/"+base+"/7/find?q=gopher+holes")
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || loc != "/g/"+ts+"/"+base+"/7/find%09gopher%20holes" {
		t.Fatalf("the form's answer: %d %q", resp.StatusCode, loc)
	}
	if resp, page := follow(t, s.URL, resp.Header.Get("Location")); resp.StatusCode != 200 || !strings.Contains(page, "A hit") {
		t.Errorf("the archived search: %d\n%s", resp.StatusCode, page)
	}
}

// A WAIS database is its search form; an archived search lists its hits,
// each linked to its document's capture.
func TestReplayWAIS(t *testing.T) {
	ws := waisd.New()
	if err := ws.Start(); err != nil {
		t.Fatal(err)
	}
	base := "wais://" + ws.Addr() + "/test"
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "rec"), warc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.Recorder = &warc.Recorder{W: w}
	resp, err := c.Get(context.Background(), base+"?gophers")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	doc := resp.Entries[0].URL
	if resp, err = c.Get(context.Background(), doc); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	w.Close()
	ws.Close()
	a, err := warc.Open(filepath.Join(dir, "rec.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s := httptest.NewServer(gateway.Archive(map[string]*warc.Archive{"w": a}, gateway.Options{}))
	defer s.Close()
	caps := a.Captures(base + "?gophers")
	if len(caps) != 1 {
		t.Fatalf("%d captures of the search", len(caps))
	}
	ts := caps[0].Timestamp()
	if resp, page := get(t, s.URL+"/w/"+ts+"/"+base); resp.StatusCode != 200 || !strings.Contains(page, `name="q"`) {
		t.Errorf("the database's form: %d\n%s", resp.StatusCode, page)
	}
	resp2, _ := get(t, s.URL+"/w/"+ts+"/"+base+"?q=gophers")
	if loc := resp2.Header.Get("Location"); resp2.StatusCode != http.StatusFound || loc != "/w/"+ts+"/"+base+"?gophers" {
		t.Fatalf("the form's answer: %d %q", resp2.StatusCode, loc)
	}
	_, page := follow(t, s.URL, "/w/"+ts+"/"+base+"?gophers")
	if !strings.Contains(page, `<a href="/w/`+ts+`/`+doc+`">`) || !strings.Contains(page, "score 191") {
		t.Errorf("the hits:\n%s", page)
	}
	if resp, page := follow(t, s.URL, "/w/"+ts+"/"+doc); resp.StatusCode != 200 || !strings.Contains(page, strings.TrimSpace(waisd.Alpha)[:20]) {
		t.Errorf("the document: %d\n%s", resp.StatusCode, page)
	}
}

// A Gopher+ item's attributes, archived with it, replay: the menu links
// them, their page lists them.
func TestReplayGopherPlusAttributes(t *testing.T) {
	ln, err := testserver.Listen(func(c net.Conn) {
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadString('\n')
		host, port, _ := net.SplitHostPort(c.LocalAddr().String())
		switch strings.TrimRight(line, "\r\n") {
		case "":
			fmt.Fprintf(c, "0An item\t/x\t%s\t%s\t+\r\n.\r\n", host, port)
		case "/x":
			io.WriteString(c, "the item\r\n.\r\n")
		case "/x\t!":
			fmt.Fprintf(c, "+-1\r\n+INFO: 0An item\t/x\t%s\t%s\t+\r\n+ADMIN:\r\n Admin: Someone <someone@example.invalid>\r\n+VIEWS:\r\n text/plain: <1k>\r\n application/pdf: <9k>\r\n.\r\n", host, port)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	base := "gopher://" + ln.Addr().String()
	a := archiveOf(t, t.TempDir(), base+"/1", base+"/0/x", base+"/0/x%09%09!")
	s := httptest.NewServer(gateway.Archive(map[string]*warc.Archive{"p": a}, gateway.Options{}))
	defer s.Close()
	ts := a.Captures(base + "/1")[0].Timestamp()
	_, page := get(t, s.URL+"/p/"+ts+"/"+base+"/1")
	plus := `href="/p/` + ts + `/` + base + `/0/x?attributes=1"`
	if !strings.Contains(page, plus) {
		t.Fatalf("no %s in\n%s", plus, page)
	}
	resp, page := follow(t, s.URL, "/p/"+ts+"/"+base+"/0/x?attributes=1")
	if resp.StatusCode != 200 || !strings.Contains(page, "Admin: Someone") {
		t.Errorf("the attributes: %d\n%s", resp.StatusCode, page)
	}
	// Each view once; the first leads to the item the archive holds, the
	// other is named only.
	its := strings.TrimPrefix(resp.Request.URL.Path, "/p/")[:14]
	if strings.Count(page, "text/plain: &lt;1k&gt;") != 1 || strings.Count(page, "application/pdf: &lt;9k&gt;") != 1 ||
		!strings.Contains(page, `<dd><a href="/p/`+its+`id_/`+base+`/0/x">text/plain: &lt;1k&gt;</a></dd><dd>application/pdf: &lt;9k&gt;</dd>`) {
		t.Errorf("the views:\n%s", page)
	}
}

// linkValues parses a Link header (RFC 8288): each <URI> with its
// parameters, quotes taken off.
func linkValues(h string) []map[string]string {
	var out []map[string]string
	for h = strings.TrimSpace(h); h != ""; {
		if h[0] != '<' {
			return nil
		}
		end := strings.IndexByte(h, '>')
		if end < 0 {
			return nil
		}
		v := map[string]string{"uri": h[1:end]}
		h = strings.TrimSpace(h[end+1:])
		for strings.HasPrefix(h, ";") {
			h = strings.TrimSpace(h[1:])
			k, rest, _ := strings.Cut(h, "=")
			rest = strings.TrimSpace(rest)
			val := ""
			if strings.HasPrefix(rest, `"`) {
				q := strings.IndexByte(rest[1:], '"')
				if q < 0 {
					return nil
				}
				val, h = rest[1:q+1], rest[q+2:]
			} else {
				n := strings.IndexAny(rest, ";,")
				if n < 0 {
					n = len(rest)
				}
				val, h = rest[:n], rest[n:]
			}
			v[strings.TrimSpace(k)] = val
			h = strings.TrimSpace(h)
		}
		out = append(out, v)
		h = strings.TrimSpace(strings.TrimPrefix(h, ","))
	}
	return out
}

// The Link header of a memento between two others reads as RFC 7089's
// examples have it: the original, the TimeGate, the TimeMap with its
// type, and the first, previous, next and last mementos each with its
// datetime.
func TestMementoLinkHeader(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "m"), warc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, y := range []int{2020, 2022, 2024, 2026} {
		w.Write(warc.Record{Type: "resource", URI: "gopher://h/0/a", Date: time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC), MediaType: "text/plain", Body: strings.NewReader(fmt.Sprint(y))})
	}
	w.Close()
	a, err := warc.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s := httptest.NewServer(gateway.Archive(map[string]*warc.Archive{"m": a}, gateway.Options{}))
	defer s.Close()
	resp, body := get(t, s.URL+"/m/20220101000000id_/gopher://h/0/a")
	if resp.StatusCode != 200 || body != "2022" || resp.Header.Get("Memento-Datetime") != "Sat, 01 Jan 2022 00:00:00 GMT" {
		t.Fatalf("the memento: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	got := map[string]map[string]string{}
	for _, v := range linkValues(resp.Header.Get("Link")) {
		got[v["rel"]] = v
	}
	want := map[string]string{
		"original": "gopher://h/0/a", "timegate": "/m/gopher://h/0/a", "timemap": "/m/timemap/link/gopher://h/0/a",
		"first memento": "/m/20200101000000/gopher://h/0/a", "prev memento": "/m/20200101000000/gopher://h/0/a",
		"next memento": "/m/20240101000000/gopher://h/0/a", "last memento": "/m/20260101000000/gopher://h/0/a",
	}
	for rel, uri := range want {
		v, ok := got[rel]
		if rel == "first memento" || rel == "prev memento" {
			v, ok = got["first prev memento"]
		}
		if !ok || v["uri"] != uri {
			t.Errorf("rel %q: %v, want <%s>", rel, v, uri)
			continue
		}
		if strings.HasSuffix(rel, "memento") {
			if _, err := http.ParseTime(v["datetime"]); err != nil {
				t.Errorf("rel %q: datetime %q", rel, v["datetime"])
			}
		}
	}
	if got["timemap"]["type"] != "application/link-format" {
		t.Errorf("the timemap's type: %v", got["timemap"])
	}
	// The TimeMap parses as link-format, one memento per capture.
	_, tm := get(t, s.URL+"/m/timemap/link/gopher://h/0/a")
	mementos := 0
	for _, v := range linkValues(strings.ReplaceAll(tm, "\n", " ")) {
		if strings.HasSuffix(v["rel"], "memento") {
			mementos++
		}
	}
	if mementos != 4 {
		t.Errorf("%d mementos in the TimeMap:\n%s", mementos, tm)
	}
}

// HTML served as it is (a capture's id_ payload, live or replayed
// objects) comes sandboxed, so that a refresh or a script in it can do
// nothing on the gateway's origin; a replayed page's SVG links, href
// and xlink:href alike, lead into the archive, a javascript: one
// nowhere.
func TestReplaySandboxAndSVG(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><head><meta http-equiv="refresh" content="0; url=http://elsewhere.invalid/"></head><body>`+
			`<svg><a xlink:href="javascript:alert(1)"><text>x</text></a><a href="javascript:alert(2)">y</a><image xlink:href="/pic.png"/><use href="/s.svg#i"/></svg></body></html>`)
	}))
	a := archiveOf(t, t.TempDir(), web.URL+"/")
	web.Close()
	s := httptest.NewServer(gateway.Archive(map[string]*warc.Archive{"c": a}, gateway.Options{}))
	defer s.Close()
	ts := a.Captures(web.URL + "/")[0].Timestamp()
	resp, page := get(t, s.URL+"/c/"+ts+"id_/"+web.URL+"/")
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "sandbox") || !strings.Contains(page, "elsewhere.invalid") {
		t.Errorf("id_: CSP %q\n%s", csp, page)
	}
	resp, page = get(t, s.URL+"/c/"+ts+"/"+web.URL+"/")
	for _, want := range []string{`xlink:href="#"`, `<a href="#">y</a>`, `xlink:href="/c/` + ts + `/` + web.URL + `/pic.png"`, `href="/c/` + ts + `/` + web.URL + `/s.svg#i"`} {
		if !strings.Contains(page, want) {
			t.Errorf("no %s in\n%s", want, page)
		}
	}
	if strings.Contains(page, "javascript:") {
		t.Errorf("a javascript: link survives:\n%s", page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); strings.Contains(csp, "sandbox") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("the replayed page's CSP: %q", csp)
	}
}

// The banner of a memento moves through time: the capture before and
// the one after, on the gateway's pages and on a replayed web page,
// whose banner is ASCII whatever the page's character set.
func TestReplayBannerNeighbours(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "n"), warc.Options{Software: "deref/test"})
	if err != nil {
		t.Fatal(err)
	}
	menu, page := "gopher://h.invalid/1/", "http://h.invalid/caf%C3%A9"
	var times []time.Time
	for i := range 3 {
		at := time.Date(2026, 1, 2+i, 3, 4, 5, 0, time.UTC)
		times = append(times, at)
		w.Write(warc.Record{Type: "resource", URI: menu, Date: at, MediaType: "application/gopher-menu", Protocol: "gopher", Status: "-",
			Body: strings.NewReader(fmt.Sprintf("iCapture %d\tfake\t(NULL)\t0\r\n.\r\n", i))})
		body := "<html><body>caf\xe9</body></html>" // Latin-1, no charset named
		head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n", len(body))
		w.Write(warc.Record{Type: "response", URI: page, Date: at, MediaType: "application/http;msgtype=response", Body: strings.NewReader(head + body),
			PayloadOffset: int64(len(head)), PayloadType: "text/html", Status: "200"})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := warc.Open(filepath.Join(dir, "n.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s := httptest.NewServer(gateway.Archive(map[string]*warc.Archive{"n": a}, gateway.Options{}))
	defer s.Close()
	ts := func(i int) string { return times[i].Format("20060102150405") }
	for _, u := range []string{menu, page} {
		_, mid := get(t, s.URL+"/n/"+ts(1)+"/"+u)
		if !strings.Contains(mid, `rel="prev" href="/n/`+ts(0)+`/`) || !strings.Contains(mid, `rel="next" href="/n/`+ts(2)+`/`) {
			t.Errorf("%s, the middle capture:\n%s", u, mid)
		}
		_, first := get(t, s.URL+"/n/"+ts(0)+"/"+u)
		if strings.Contains(first, `rel="prev"`) || strings.Contains(first, `rel="first"`) || !strings.Contains(first, `rel="next" href="/n/`+ts(1)+`/`) ||
			!strings.Contains(first, `rel="last" href="/n/`+ts(2)+`/`) {
			t.Errorf("%s, the first capture:\n%s", u, first)
		}
		_, last := get(t, s.URL+"/n/"+ts(2)+"/"+u)
		if strings.Contains(last, `rel="next"`) || strings.Contains(last, `rel="last"`) || !strings.Contains(last, `rel="prev" href="/n/`+ts(1)+`/`) ||
			!strings.Contains(last, `rel="first" href="/n/`+ts(0)+`/`) {
			t.Errorf("%s, the last capture:\n%s", u, last)
		}
	}
	_, p := get(t, s.URL+"/n/"+ts(1)+"/"+page)
	i := strings.Index(p, `<div class="deref-replay">`)
	if i < 0 {
		t.Fatalf("no banner:\n%s", p)
	}
	banner := p[i : i+strings.Index(p[i:], "</div>")]
	for _, c := range []byte(banner) {
		if c >= 0x80 {
			t.Fatalf("the banner holds a byte past ASCII: %q", banner)
		}
	}
	if !strings.Contains(banner, "&#183;") || !strings.Contains(banner, "caf&#233;") && !strings.Contains(banner, "caf%C3%A9") {
		t.Errorf("banner %q", banner)
	}
}

// A URL's captures: a list of each one's time, kind, media type and
// archived size where there are few, a calendar by month first where
// there are many; the count's noun agrees with it.
func TestReplayCapturesPage(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "c"), warc.Options{Software: "deref/test"})
	if err != nil {
		t.Fatal(err)
	}
	one, many := "gopher://h.invalid/0/one", "gopher://h.invalid/1/"
	w.Write(warc.Record{Type: "resource", URI: one, Date: time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC), MediaType: "text/plain", Protocol: "gopher", Status: "-", Body: strings.NewReader("one\n")})
	for i := range 25 {
		w.Write(warc.Record{Type: "resource", URI: many, Date: time.Date(2025, time.Month(1+i/10), 1+i, 0, 0, 0, 0, time.UTC), MediaType: "application/gopher-menu", Protocol: "gopher", Status: "-",
			Body: strings.NewReader(fmt.Sprintf("iMenu %d\tfake\t(NULL)\t0\r\n.\r\n", i))})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := warc.Open(filepath.Join(dir, "c.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s := httptest.NewServer(gateway.Archive(map[string]*warc.Archive{"c": a}, gateway.Options{}))
	defer s.Close()
	_, page := get(t, s.URL+"/c/*/"+one)
	for _, want := range []string{"<title>1 capture of " + one, "<th>Media type</th>", "<td>text/plain</td>", "<td>resource</td>", " B</td>", "2025-05-01 00:00:00 UTC"} {
		if !strings.Contains(page, want) {
			t.Errorf("one capture: no %q in\n%s", want, page)
		}
	}
	if strings.Contains(page, `class="calendar"`) {
		t.Errorf("a calendar for one capture:\n%s", page)
	}
	_, page = get(t, s.URL+"/c/*/"+many)
	for _, want := range []string{"<title>25 captures of " + many, `class="calendar"`, `<a href="#m202501">January 2025</a></td><td class="n">10</td>`, `<a href="#m202503">March 2025</a></td><td class="n">5</td>`, `id="m202502"`} {
		if !strings.Contains(page, want) {
			t.Errorf("25 captures: no %q in\n%s", want, page)
		}
	}
}

// A collection's page: the pages to start from, a box that finds a URL
// or a prefix, the URLs with what each column says, 100 at a time with
// the pages before and after linked; the prefix form /COLL/*/PREFIX*.
func TestReplayCollectionPage(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "c"), warc.Options{Software: "deref/test"})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	w.Write(warc.Record{Type: "resource", URI: "gopher://h.invalid/1/", Date: at, MediaType: "application/gopher-menu", Protocol: "gopher", Status: "-", Body: strings.NewReader("iroot\tfake\t(NULL)\t0\r\n.\r\n")})
	for i := range 250 {
		w.Write(warc.Record{Type: "resource", URI: fmt.Sprintf("gopher://h.invalid/0/f%03d", i), Date: at, MediaType: "text/plain", Protocol: "gopher", Status: "-", Body: strings.NewReader(fmt.Sprintf("%d\n", i))})
	}
	w.Write(warc.Record{Type: "resource", URI: "gopher://h.invalid/0/f007", Date: at.Add(time.Hour), MediaType: "text/plain", Protocol: "gopher", Status: "-", Body: strings.NewReader("again\n")})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := warc.Open(filepath.Join(dir, "c.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s := httptest.NewServer(gateway.Archive(map[string]*warc.Archive{"c": a}, gateway.Options{}))
	defer s.Close()
	_, page := get(t, s.URL+"/c/")
	for _, want := range []string{"<h2>Start here</h2>", `<a href="/c/20250501000000/gopher://h.invalid/1/">gopher://h.invalid/1/</a>`,
		"<th>URL</th><th>Media type</th><th>Captures</th><th>First</th><th>Last</th>", `name="url"`, `rel="next" href="/c/?after=`} {
		if !strings.Contains(page, want) {
			t.Errorf("the collection: no %q in\n%s", want, page)
		}
	}
	if strings.Contains(page, `rel="prev"`) || strings.Count(page, `<td class="n">`) != 100 {
		t.Errorf("the first page: %d rows\n%s", strings.Count(page, `<td class="n">`), page)
	}
	if !strings.Contains(page, `f007</a></td><td>text/plain</td><td class="n">2</td><td><a href="/c/20250501000000/gopher://h.invalid/0/f007">2025-05-01 00:00</a></td><td><a href="/c/20250501010000/gopher://h.invalid/0/f007">2025-05-01 01:00</a>`) {
		t.Errorf("f007's row:\n%s", page)
	}
	// Through the pages, forward and back.
	next := func(page, rel string) string {
		i := strings.Index(page, `rel="`+rel+`" href="`)
		if i < 0 {
			return ""
		}
		rest := page[i+len(`rel="`+rel+`" href="`):]
		return html.UnescapeString(rest[:strings.IndexByte(rest, '"')])
	}
	_, p2 := get(t, s.URL+next(page, "next"))
	_, p3 := get(t, s.URL+next(p2, "next"))
	if n := strings.Count(p3, `<td class="n">`); n != 51 || next(p3, "next") != "" || !strings.Contains(p3, "f249") {
		t.Errorf("the last page: %d rows\n%s", n, p3)
	}
	_, back := get(t, s.URL+next(p3, "prev"))
	if back != p2 {
		t.Errorf("back from the last page is not the second:\n%s", back)
	}
	// A prefix, typed or in pywb's form.
	resp, _ := get(t, s.URL+"/c/?url="+neturlQuery("gopher://h.invalid/0/f24*"))
	if loc := resp.Header.Get("Location"); loc != "/c/*/gopher://h.invalid/0/f24*" {
		t.Errorf("the box's prefix led to %q", loc)
	}
	_, pre := get(t, s.URL+"/c/*/gopher://h.invalid/0/f24*")
	if n := strings.Count(pre, `<td class="n">`); n != 10 || !strings.Contains(pre, "URLs under gopher://h.invalid/0/f24") {
		t.Errorf("the prefix: %d rows\n%s", n, pre)
	}
	resp, _ = get(t, s.URL+"/c/?url="+neturlQuery("gopher://h.invalid/0/f100"))
	if loc := resp.Header.Get("Location"); loc != "/c/*/gopher://h.invalid/0/f100" {
		t.Errorf("the box's URL led to %q", loc)
	}
}

func neturlQuery(s string) string {
	return strings.NewReplacer("%", "%25", "&", "%26", "+", "%2B", "#", "%23", " ", "+").Replace(s)
}
