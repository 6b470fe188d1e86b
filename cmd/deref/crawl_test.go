package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"
	"github.com/vbauerster/mpb/v8"

	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/internal/testserver/gopherd"
)

// TestCrawlCommand: deref crawl walks a Gopher server's menus into a WARC
// file with its index, reports as JSON, and refuses a bad scope.
func TestCrawlCommand(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "docs", "old"), 0o755)
	os.WriteFile(filepath.Join(root, "about.txt"), []byte("about\n"), 0o644)
	os.WriteFile(filepath.Join(root, "docs", "guide.txt"), []byte("guide\n"), 0o644)
	os.WriteFile(filepath.Join(root, "docs", "old", "notes.txt"), []byte("notes\n"), 0o644)
	gs := &gopherd.Server{Root: root}
	if err := gs.Start(); err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	dir := t.TempDir()
	r := runDeref(t, "", "crawl", "--json", "--warc-file", filepath.Join(dir, "hole"), "--warc-cdx", "gopher://"+gs.Addr()+"/1/")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep struct{ Fetched, Failed int }
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Fetched != 6 || rep.Failed != 0 {
		t.Errorf("report %q: %+v %v", r.stdout, rep, err)
	}
	// Every JSON the command writes has lower-case keys, as deref mirror's.
	for _, key := range []string{`"fetched":6`, `"failed":0`, `"over_quota":0`, `"hosts":[{"host":"gopher://`} {
		if !strings.Contains(r.stdout, key) {
			t.Errorf("no %s in %s", key, r.stdout)
		}
	}
	cdx, _ := os.ReadFile(filepath.Join(dir, "hole.cdxj"))
	if n := strings.Count(string(cdx), "\n"); n != 6 || !strings.Contains(string(cdx), "/0/docs/old/notes.txt") {
		t.Errorf("%d index lines:\n%s", n, cdx)
	}
	out := filepath.Join(dir, "tree")
	r = runDeref(t, "", "crawl", "-s", "--output-dir", out, "gopher://"+gs.Addr()+"/1/")
	host, port, _ := strings.Cut(gs.Addr(), ":")
	if b, err := os.ReadFile(filepath.Join(out, siteDir(host+":"+port), "docs", "old", "notes.txt")); r.code != 0 || string(b) != "notes\n" {
		t.Errorf("--output-dir: exit %d, %q %v: %s", r.code, b, err, r.stderr)
	}
	r = runDeref(t, "", "crawl", "--max-depth", "1", "--json", "gopher://"+gs.Addr()+"/1/")
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Fetched != 3 {
		t.Errorf("depth 1: %q", r.stdout)
	}
	if r := runDeref(t, "", "crawl", "--scope", "world", "gopher://"+gs.Addr()+"/1/"); r.code != 1 || !strings.Contains(r.stderr, "--scope") {
		t.Errorf("a bad scope: exit %d, %s", r.code, r.stderr)
	}
}

// TestCrawlPageRequisitesFlag: -p alone fetches the page and what it is
// shown with, as wget -p; with -r (or -l, --max-depth) the links too.
func TestCrawlPageRequisitesFlag(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<img src="/i.png"><a href="/next.html">next</a>`)
		case "/next.html":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<img src="/j.png">`)
		case "/i.png", "/j.png":
			io.WriteString(w, "png")
		default:
			nethttp.NotFound(w, r)
		}
	}))
	defer s.Close()
	for _, tt := range []struct {
		args    []string
		fetched int
	}{
		{[]string{"-p"}, 2},
		{[]string{"-p", "-r"}, 4},
		{[]string{"-p", "--max-depth", "1"}, 4}, // j.png: what next.html is shown with, past the depth
		{[]string{"-p", "-l", "1"}, 4},
		{nil, 4},
		{[]string{"--max-depth", "1"}, 3},
	} {
		r := runDeref(t, "", append(append([]string{"crawl", "--json", "--ignore-robots"}, tt.args...), s.URL+"/")...)
		var rep struct{ Fetched, Failed int }
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Fetched != tt.fetched || rep.Failed != 0 {
			t.Errorf("%q: exit %d, %q, want %d fetched; %s", tt.args, r.code, r.stdout, tt.fetched, r.stderr)
		}
	}
}

// TestCrawlMirrorFlag: deref crawl --mirror (-m) writes into the current
// folder, as wget's, and run again asks If-Modified-Since and leaves the
// files (-N); -N without a folder to compare is refused.
func TestCrawlMirrorFlag(t *testing.T) {
	s, conditionals := twoFileSite(t)
	t.Chdir(t.TempDir())
	host := siteDir(strings.TrimPrefix(s.URL, "http://"))
	for run := range 2 {
		r := runDeref(t, "", "crawl", "-m", "-e", "robots=off", s.URL+"/")
		b, err := os.ReadFile(filepath.Join(host, "a.txt"))
		if r.code != 0 || err != nil || string(b) != "a\n" {
			t.Fatalf("run %d: exit %d, %q %v: %s", run, r.code, b, err, r.stderr)
		}
		if n, want := conditionals(), run*2; n != want || run == 1 && !strings.Contains(r.stderr, "2 of them no newer than their files") {
			t.Errorf("run %d: %d conditional requests (want %d): %s", run, n, want, r.stderr)
		}
	}
	if r := runDeref(t, "", "crawl", "-N", s.URL+"/"); r.code == 0 || !strings.Contains(r.stderr, "goes with --output-dir") {
		t.Errorf("-N alone: exit %d, %s", r.code, r.stderr)
	}
}

// TestCrawlMirrorWARC: with --warc-file, -N (and --mirror's) and -nc
// are off, as wget turns them off: run again into the same folder, the
// crawl fetches every URL without a condition and archives it, saying so.
func TestCrawlMirrorWARC(t *testing.T) {
	s, conditionals := twoFileSite(t)
	t.Chdir(t.TempDir())
	for run, flags := range [][]string{{"-m"}, {"-m"}, {"-r", "-nc", "-P", "."}} {
		name := "run" + strconv.Itoa(run)
		r := runDeref(t, "", append(append([]string{"crawl"}, flags...), "-e", "robots=off", "--warc-file", name, s.URL+"/")...)
		if r.code != 0 {
			t.Fatalf("run %d: exit %d: %s", run, r.code, r.stderr)
		}
		if warned := strings.Contains(r.stderr, "WARC output does not work with"); !warned {
			t.Errorf("run %d %q: no warning: %s", run, flags, r.stderr)
		}
		var got []string
		for _, rec := range readWARC(t, name+".warc.gz") {
			if rec.typ == gowarc.Response {
				got = append(got, strings.TrimPrefix(rec.h.Get(gowarc.WarcTargetURI), s.URL))
			}
		}
		if strings.Join(got, " ") != "/ /a.txt" {
			t.Errorf("run %d %q: responses archived: %q", run, flags, got)
		}
	}
	if n := conditionals(); n != 0 {
		t.Errorf("%d conditional requests", n)
	}
}

// twoFileSite serves a page linking a.txt, and counts the requests that
// ask If-Modified-Since.
func twoFileSite(t *testing.T) (*httptest.Server, func() int) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "index.html"), []byte(`<a href="a.txt">a</a>`), 0o644)
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644)
	var mu sync.Mutex
	var conditional int
	files := nethttp.FileServer(nethttp.Dir(root))
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		if r.Header.Get("If-Modified-Since") != "" {
			conditional++
		}
		mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s, func() int {
		mu.Lock()
		defer mu.Unlock()
		return conditional
	}
}

// TestCrawlInputFile: -i reads start URLs from a file, or standard
// input, as wget -i, beside those on the command line.
func TestCrawlInputFile(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		io.WriteString(w, "leaf "+r.URL.Path)
	}))
	defer s.Close()
	list := filepath.Join(t.TempDir(), "urls")
	os.WriteFile(list, []byte(s.URL+"/a\n\n"+s.URL+"/b\n"), 0o644)
	for _, tt := range []struct {
		stdin string
		args  []string
		want  int
	}{
		{"", []string{"-i", list, s.URL + "/c"}, 3},
		{s.URL + "/d\n", []string{"--input-file", "-"}, 1},
	} {
		r := runDeref(t, tt.stdin, append([]string{"crawl", "--json", "--ignore-robots"}, tt.args...)...)
		var rep struct{ Fetched int }
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Fetched != tt.want {
			t.Errorf("%q: exit %d, %q; %s", tt.args, r.code, r.stdout, r.stderr)
		}
	}
}

// TestCrawlLogFile: wget's -o and -a write what deref crawl says into a
// file (-a at its end), standard error left empty.
func TestCrawlLogFile(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		io.WriteString(w, "leaf")
	}))
	defer s.Close()
	log := filepath.Join(t.TempDir(), "log")
	for i, flag := range []string{"-o", "-a", "-o"} {
		r := runDeref(t, "", "crawl", "--ignore-robots", flag, log, s.URL+"/")
		b, _ := os.ReadFile(log)
		want := []int{1, 2, 1}[i]
		if r.code != 0 || r.stderr != "" || strings.Count(string(b), "deref crawl: 1 fetched") != want {
			t.Errorf("%s: exit %d, stderr %q, log %q", flag, r.code, r.stderr, b)
		}
	}
}

// TestCrawlServerResponse: wget's -S writes each reply's head, indented
// by two spaces, with the messages; -q (wget's --quiet) the summary not.
func TestCrawlServerResponse(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("X-Served", r.URL.Path)
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/" {
			io.WriteString(w, `<a href="leaf">leaf</a>`)
		}
	}))
	defer s.Close()
	r := runDeref(t, "", "crawl", "--ignore-robots", "-q", "-S", s.URL+"/")
	for _, want := range []string{"  HTTP/1.1 200 OK\n", "  X-Served: /\n", "  X-Served: /leaf\n"} {
		if r.code != 0 || !strings.Contains(r.stderr, want) {
			t.Errorf("exit %d, no %q in:\n%s", r.code, want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "deref crawl:") || strings.Contains(r.stderr, "> GET") {
		t.Errorf("more than the replies:\n%s", r.stderr)
	}
}

// The status lines count each server's URLs, bytes and errors and the
// queue; the summary has a line per server when there are several.
func TestCrawlStatus(t *testing.T) {
	var buf syncBuffer
	s := newCrawlStatus(context.Background(), &buf, mpb.WithAutoRefresh()) // as on a terminal
	s.event(crawl.Event{URL: "gopher://a/1/", Host: "gopher://a:70", Bytes: 2048, Queued: 5})
	s.event(crawl.Event{URL: "gopher://a/0/x", Host: "gopher://a:70", Err: errors.New("refused"), Queued: 4})
	s.event(crawl.Event{URL: "ftp://b/", Host: "ftp://b:21", Bytes: 1024, Queued: 3})
	s.wait()
	out := buf.String()
	for _, want := range []string{"total 2 fetched, 3.0 KiB, 1 failed, 3 queued", "gopher://a:70", "1 fetched, 2.0 KiB, 1 failed", "ftp://b:21", "1 fetched, 1.0 KiB"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the status:\n%s", want, out)
		}
	}
	sum := crawlSummary(&crawl.Report{Fetched: 2, Failed: 1, Bytes: 3072, Seconds: 1.5, Resumed: 7, Hosts: []crawl.HostReport{
		{Host: "ftp://b:21", Fetched: 1, Bytes: 1024}, {Host: "gopher://a:70", Fetched: 1, Failed: 1, Bytes: 2048}}})
	want := "  ftp://b:21: 1 fetched, 0 failed, 0 excluded, 1.0 KiB\n  gopher://a:70: 1 fetched, 1 failed, 0 excluded, 2.0 KiB\n" +
		"deref crawl: 2 fetched, 1 failed, 0 excluded by robots.txt, 3.0 KiB in 1.5 s (and 7 settled before, by --state)\n"
	if sum != want {
		t.Errorf("summary:\n%s\nwant:\n%s", sum, want)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCrawlDeleteAfter: wget's --delete-after fetches everything and
// keeps nothing, -P and -k with it or not.
func TestCrawlDeleteAfter(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/" {
			io.WriteString(w, `<a href="leaf">leaf</a>`)
		}
	}))
	defer s.Close()
	dir := filepath.Join(t.TempDir(), "d")
	r := runDeref(t, "", "crawl", "--json", "--ignore-robots", "--delete-after", "-k", "-P", dir, s.URL+"/")
	var rep struct{ Fetched int }
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 || rep.Fetched != 2 {
		t.Errorf("exit %d, %q %v; %s", r.code, r.stdout, err, r.stderr)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s: %v", dir, err)
	}
}

// TestCrawlSpider: wget's --spider keeps nothing and lists the broken
// links at the end, as wget does.
func TestCrawlSpider(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<a href="ok">ok</a> <a href="gone">gone</a> <a href="lost">lost</a>`)
		case "/ok":
			io.WriteString(w, "here")
		default:
			nethttp.NotFound(w, r)
		}
	}))
	defer s.Close()
	dir := filepath.Join(t.TempDir(), "d")
	r := runDeref(t, "", "crawl", "--spider", "-r", "--ignore-robots", "-P", dir, s.URL+"/")
	want := "Found 2 broken links.\n\n" + s.URL + "/gone\n" + s.URL + "/lost\n"
	if r.code != 4 || !strings.HasSuffix(r.stderr, want) { // 4: the first failure was a link to nothing
		t.Errorf("exit %d, stderr:\n%s\nwant it to end:\n%s", r.code, r.stderr, want)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s: %v", dir, err)
	}
}

// TestCrawlSessionCookies: as wget's, a crawl keeps the cookies servers
// set for the run and sends them back, without -b or -c; --no-cookies
// keeps none, and is refused beside -c.
func TestCrawlSessionCookies(t *testing.T) {
	var mu sync.Mutex
	withCookie := map[string]bool{}
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		_, err := r.Cookie("session")
		mu.Lock()
		withCookie[r.URL.Path] = err == nil
		mu.Unlock()
		if r.URL.Path == "/" {
			nethttp.SetCookie(w, &nethttp.Cookie{Name: "session", Value: "s1", Path: "/"})
			io.WriteString(w, `<a href="/leaf">leaf</a>`)
		}
	}))
	defer s.Close()
	for _, tt := range []struct {
		flags []string
		sent  bool
	}{{nil, true}, {[]string{"--no-cookies"}, false}} {
		withCookie = map[string]bool{}
		r := runDeref(t, "", append(append([]string{"crawl", "-s", "--ignore-robots"}, tt.flags...), s.URL+"/")...)
		if r.code != 0 || withCookie["/"] || withCookie["/leaf"] != tt.sent {
			t.Errorf("%q: exit %d, cookie sent %v; %s", tt.flags, r.code, withCookie, r.stderr)
		}
	}
	if r := runDeref(t, "", "crawl", "--no-cookies", "--cookie-jar", filepath.Join(t.TempDir(), "jar"), s.URL+"/"); r.code != 1 || !strings.Contains(r.stderr, "--no-cookies") {
		t.Errorf("--no-cookies -c: exit %d, %s", r.code, r.stderr)
	}
}

// TestCrawlCookies: a crawl sends the cookies of a -b file to their site,
// keeps the ones pages set, and writes them all with -c; mirror and crawl
// refuse -b NAME=VALUE, which would go to every host.
func TestCrawlCookies(t *testing.T) {
	var mu sync.Mutex
	var refused []string
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if c, err := r.Cookie("sid"); err != nil || c.Value != "abc" {
			mu.Lock()
			refused = append(refused, r.URL.Path)
			mu.Unlock()
			nethttp.Error(w, "members only", nethttp.StatusForbidden)
			return
		}
		switch r.URL.Path {
		case "/":
			nethttp.SetCookie(w, &nethttp.Cookie{Name: "seen", Value: "1", Path: "/", MaxAge: 3600})
			io.WriteString(w, `<a href="/a">a</a> <a href="/b">b</a>`)
		case "/a", "/b":
			if _, err := r.Cookie("seen"); err != nil {
				nethttp.Error(w, "no seen cookie", nethttp.StatusBadRequest)
				return
			}
			io.WriteString(w, "page")
		default:
			nethttp.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
	os.WriteFile(in, []byte("127.0.0.1\tFALSE\t/\tFALSE\t0\tsid\tabc\n"), 0o644)
	r := runDeref(t, "", "crawl", "--json", "--ignore-robots", "--cookie", in, "--cookie-jar", out, s.URL+"/")
	var rep struct{ Fetched, Failed int }
	if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil || rep.Fetched != 3 || rep.Failed != 0 {
		t.Errorf("exit %d, report %q, %s", r.code, r.stdout, r.stderr)
	}
	mu.Lock()
	if len(refused) != 0 {
		t.Errorf("refused without the cookie: %q", refused)
	}
	mu.Unlock()
	b, _ := os.ReadFile(out)
	if !strings.Contains(string(b), "\tsid\tabc\n") || !strings.Contains(string(b), "\tseen\t1\n") {
		t.Errorf("-c wrote:\n%s", b)
	}
	for _, args := range [][]string{{"crawl", "--cookie", "sid=abc", s.URL + "/"}, {"mirror", "-b", "sid=abc", s.URL + "/", dir}} {
		if r := runDeref(t, "", args...); r.code != 1 || !strings.Contains(r.stderr, "--cookie FILE") {
			t.Errorf("%q: exit %d, %s", args, r.code, r.stderr)
		}
	}
	// In deref crawl, -b and -c are wget's: --background (refused) and
	// --continue (what the crawl does), which take no argument.
	if r := runDeref(t, "", "crawl", "-b", "-r", s.URL+"/"); r.code != 1 || !strings.Contains(r.stderr, "foreground") {
		t.Errorf("crawl -b: exit %d, %s", r.code, r.stderr)
	}
	t.Chdir(t.TempDir())
	if r := runDeref(t, "", "crawl", "-c", "-r", "--cookie", in, "-e", "robots=off", "-P", "site", s.URL+"/"); r.code != 0 || !strings.Contains(r.stderr, "3 fetched") {
		t.Errorf("crawl -c -r: exit %d, %s", r.code, r.stderr)
	}
	if names, _ := os.ReadDir("."); len(names) != 1 || names[0].Name() != "site" {
		t.Errorf("crawl -c -r wrote %v", names)
	}
}

// siteDir is the folder deref crawl writes a site's files in: HOST:PORT,
// or on Windows HOST+PORT, as wget names them.
func siteDir(site string) string {
	if runtime.GOOS == "windows" {
		return strings.ReplaceAll(site, ":", "+")
	}
	return site
}

// TestWgetLine: -nv's line of a file, as wget -nv writes it: the size
// the server gave after the bytes, or the bytes alone; the path as the
// file was named, without "./".
func TestWgetLine(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the path's separators are backslashes there")
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.Local)
	for _, tt := range []struct {
		ev   crawl.Event
		dir  string
		want string
	}{
		{crawl.Event{URL: "http://h/a/", Bytes: 146, Size: 146, File: "h/a/index.html"}, "d", `2026-01-02 03:04:05 URL:http://h/a/ [146/146] -> "d/h/a/index.html" [1]`},
		{crawl.Event{URL: "http://h/b", Bytes: 7, Size: -1, File: "h/b"}, ".", `2026-01-02 03:04:05 URL:http://h/b [7] -> "h/b" [1]`},
	} {
		if got := wgetLine(at, tt.ev, tt.dir); got != tt.want {
			t.Errorf("%+v: %s, want %s", tt.ev, got, tt.want)
		}
	}
}

// TestCrawlKeepsNothing: a crawl without --warc-file or --output-dir says
// at its start that it keeps nothing; against a server that is down it
// exits 6, as the mirror does, not 1.
func TestCrawlKeepsNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	r := runDeref(t, "", "crawl", "gopher://"+addr+"/1/")
	if r.code != 6 || !strings.Contains(r.stderr, "neither --warc-file NAME nor --output-dir DIR given") {
		t.Errorf("a crawl of a server that is down: exit %d, %q", r.code, r.stderr)
	}
	r = runDeref(t, "", "crawl", "--warc-file", filepath.Join(t.TempDir(), "w"), "gopher://"+addr+"/1/")
	if strings.Contains(r.stderr, "neither --warc-file") {
		t.Errorf("with --warc-file: %q", r.stderr)
	}
}
