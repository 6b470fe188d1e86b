package fetch_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"io/fs"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/fetch/gateway"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/internal/testserver/geminid"
)

// geminiClient is a Client whose keys trusted on first use go to a
// file of the test's own.
func geminiClient(t testing.TB) *fetch.Client {
	c := newClient()
	c.Gemini.KnownHosts = filepath.Join(t.TempDir(), "known_hosts")
	return c
}

// A capsule crawled into WARC as the Gemini archivers write it, replayed
// as pages with their links kept in the archive, and shown live by the
// gateway: gemtext as a page, a question as a form whose answer is the
// URL's query.
func TestGeminiEverywhere(t *testing.T) {
	s := &geminid.Server{Pages: map[string]string{
		"/":           "20 text/gemini\r\n# Home\n=> a.txt A text\n=> /ask A question\n* item\n```\n=> kept\n```\n",
		"/a.txt":      "20 text/plain\r\nalpha\n",
		"/ask":        "10 Your name?\r\n",
		"/robots.txt": "20 text/plain\r\nUser-agent: archiver\nDisallow: /ask\n",
	}}
	startOrFail(t, s.Start, s.Close)
	base := "gemini://" + s.Addr()
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "g"), warc.Options{Software: "deref/test", CDX: true})
	if err != nil {
		t.Fatal(err)
	}
	c := geminiClient(t)
	c.Recorder = &warc.Recorder{W: w}
	rep, err := crawl.Run(context.Background(), c, []string{base + "/"}, crawl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if rep.Fetched != 2 || rep.Excluded != 1 { // / and a.txt; /ask excluded for archivers
		t.Errorf("crawl: %+v", rep)
	}
	a, err := warc.Open(filepath.Join(dir, "g.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	caps := a.Captures(base + "/a.txt")
	if len(caps) != 1 || caps[0].Type != "response" || caps[0].Status != "20" || caps[0].Mime != "text/plain" || caps[0].Protocol != "gemini,tls/1.3" {
		t.Fatalf("captures: %+v", caps)
	}
	p, err := a.Open(caps[0])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(p)
	p.Close()
	if string(b) != "alpha\n" {
		t.Errorf("payload %q", b)
	}

	replay := httptest.NewServer(gateway.Archive(map[string]*warc.Archive{"g": a}, gateway.Options{Schemes: newClient()}))
	defer replay.Close()
	ts := a.Captures(base + "/")[0].Timestamp()
	code, page := httpGet(t, replay.URL+"/g/"+ts+"/"+base+"/", "")
	if code != 200 || !strings.Contains(page, `href="/g/`+ts+`/`+base+`/a.txt"`) || !strings.Contains(page, "<ul><li>item</li></ul>") || !strings.Contains(page, "<pre>=&gt; kept\n</pre>") {
		t.Errorf("replayed page: %d\n%s", code, page)
	}

	live := httptest.NewServer(gateway.Handler(geminiClient(t), gateway.Options{AllowPrivate: true}))
	defer live.Close()
	path := "/gemini/" + s.Addr()
	code, page = httpGet(t, live.URL+path+"/", "")
	if code != 200 || !strings.Contains(page, `<h2>Home</h2>`) || !strings.Contains(page, `href="`+path+`/a.txt"`) {
		t.Errorf("live page: %d\n%s", code, page)
	}
	code, page = httpGet(t, live.URL+path+"/ask", "")
	if code != 200 || !strings.Contains(page, `name="input"`) || !strings.Contains(page, "Your name?") {
		t.Errorf("the question's form: %d\n%s", code, page)
	}

	// A capsule's folder as a file system, and its files through net/http.
	fsys, err := fetch.NewFS(context.Background(), geminiClient(t), base+"/")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := fs.ReadFile(fsys, "a.txt"); err != nil || string(b) != "alpha\n" {
		t.Errorf("NewFS: %q %v", b, err)
	}
	tr := &nethttp.Transport{}
	tr.RegisterProtocol("gemini", fetch.NewTransport(geminiClient(t)))
	hresp, err := (&nethttp.Client{Transport: tr}).Get(base + "/a.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(hresp.Body)
	hresp.Body.Close()
	if hresp.StatusCode != 200 || string(b) != "alpha\n" || hresp.Header.Get("Content-Type") != "text/plain" {
		t.Errorf("NewTransport: %d %q %v", hresp.StatusCode, b, hresp.Header)
	}
}

// 44 SLOW DOWN is waited for as asked, then the request made again,
// within the retries allowed.
func TestGeminiSlowDown(t *testing.T) {
	var n atomic.Int32
	s := &geminid.Server{Handler: func(c *geminid.Conn, line string) {
		if n.Add(1) == 1 {
			io.WriteString(c, "44 1\r\n")
			return
		}
		io.WriteString(c, "20 text/plain\r\nnow\n")
	}}
	startOrFail(t, s.Start, s.Close)
	c := geminiClient(t)
	c.Retry = &fetch.Retry{Attempts: 2, Wait: time.Millisecond}
	start := time.Now()
	if got, err := body(t, c, "gemini://"+s.Addr()+"/"); err != nil || got != "now\n" || n.Load() != 2 {
		t.Fatalf("%q %v after %d requests", got, err, n.Load())
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("asked to wait 1 s, waited %v", waited)
	}
}

// finger and Nex are archived as request and response records of their
// own names, the response the answer alone, and read back.
func TestSmallWebRecords(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			if strings.TrimSpace(line) == "" {
				io.WriteString(c, "=> a.txt\n") // nex's root folder
			} else {
				io.WriteString(c, "answer to "+line)
			}
			c.Close()
		}
	}()
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "s"), warc.Options{Software: "deref/test", CDX: true})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient()
	c.Recorder = &warc.Recorder{W: w}
	c.AllowPorts = []int{79, 1900}
	addr := ln.Addr().String()
	for _, u := range []string{"finger://" + addr + "/gus", "nex://" + addr + "/", "nex://" + addr + "/a.txt"} {
		if _, err := body(t, c, u); err != nil {
			t.Fatal(u, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "s.warc.gz"))
	zr, _ := gzip.NewReader(bytes.NewReader(raw))
	all, _ := io.ReadAll(zr)
	for _, want := range []string{"Content-Type: application/finger; msgtype=request\r\n", "Content-Type: application/finger; msgtype=response\r\n",
		"Content-Type: application/nex; msgtype=response\r\n", "WARC-Identified-Payload-Type: text/x-nex-directory\r\n"} {
		if !bytes.Contains(bytes.ToLower(all), bytes.ToLower([]byte(want))) {
			t.Errorf("no %q in the records", want)
		}
	}
	for _, idx := range []bool{true, false} { // with deref's index, and by reading the records
		if !idx {
			os.Remove(filepath.Join(dir, "s.cdxj"))
		}
		a, err := warc.Open(filepath.Join(dir, "s.warc.gz"))
		if err != nil {
			t.Fatal(err)
		}
		for u, want := range map[string][2]string{
			"finger://" + addr + "/gus": {"text/plain", "answer to gus\r\n"},
			"nex://" + addr + "/":       {"text/x-nex-directory", "=> a.txt\n"},
			"nex://" + addr + "/a.txt":  {"text/plain", "answer to a.txt\r\n"},
		} {
			caps := a.Captures(u)
			if len(caps) != 1 || caps[0].Mime != want[0] || caps[0].Protocol != strings.Split(u, ":")[0] {
				t.Fatalf("%s (index %v): %+v", u, idx, caps)
			}
			p, err := a.Open(caps[0])
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(p)
			p.Close()
			if string(b) != want[1] {
				t.Errorf("%s: %q", u, b)
			}
		}
		a.Close()
	}
}
