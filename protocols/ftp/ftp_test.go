package ftp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver/socks5"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// traced is a client that records the commands it sends.
type traced struct {
	*fetch.Client
	mu   sync.Mutex
	sent []string
	all  bytes.Buffer
}

func newTraced() *traced {
	t := &traced{Client: fetch.NewClient()}
	t.NetrcFile = ""
	t.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	t.FTP.AnonymousPassword = "tester@example.org"
	t.Trace = func(u *url.URL, ev fetch.TraceEvent) {
		t.mu.Lock()
		defer t.mu.Unlock()
		fmt.Fprintln(&t.all, ev.Text)
		if ev.Dir == protocols.TraceSend {
			t.sent = append(t.sent, ev.Text)
		}
	}
	return t
}

// commands returns the commands sent since the last call, without the
// login and feature negotiation.
func (t *traced) commands() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, c := range t.sent {
		verb, _, _ := strings.Cut(c, " ")
		switch verb {
		case "USER", "PASS", "FEAT", "OPTS", "EPSV", "PASV", "PWD", "QUIT":
			continue
		}
		out = append(out, c)
	}
	t.sent = nil
	return out
}

func (t *traced) get(tb testing.TB, u string) (string, *fetch.Response) {
	tb.Helper()
	resp, err := t.Get(context.Background(), u)
	if err != nil {
		tb.Fatalf("%s: %v", u, err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("%s: reading: %v", u, err)
	}
	if err := resp.Body.Close(); err != nil {
		tb.Fatalf("%s: close: %v", u, err)
	}
	return string(b), resp
}

func TestRetrieveSegmentBySegment(t *testing.T) {
	addr, _ := startServer(t, nil)
	c := newTraced()
	base := "ftp://" + addr
	for _, tt := range []struct {
		path, body string
		cmds       []string
	}{
		// RFC 1738 §3.2.2: one CWD per segment, then RETR the name; .txt is text: TYPE A after SIZE.
		{"/pub/nested/deep.txt", "deep\n", []string{"TYPE I", "CWD pub", "CWD nested", "SIZE deep.txt", "MDTM deep.txt", "TYPE A", "RETR deep.txt"}},
		// %2F inside a segment stays in the argument: an absolute CWD.
		{"/%2Fpub/README.txt;type=i", "the pub folder\n", []string{"CWD /", "CWD /pub", "TYPE I", "SIZE README.txt", "MDTM README.txt", "RETR README.txt"}},
		// Decoded segments: spaces, and a %3B that is part of the name.
		// EPSV has worked on the connection: a text file's MDTM goes with
		// its EPSV and RETR, after TYPE A.
		{"/pub/with%20space/a%20b.txt", "spaced\n", []string{"CWD /", "CWD pub", "CWD with space", "SIZE a b.txt", "TYPE A", "MDTM a b.txt", "RETR a b.txt"}},
		{"/pub/semi%3Bcolon.txt", "semicolon\n", []string{"CWD /", "CWD pub", "TYPE I", "SIZE semi;colon.txt", "TYPE A", "MDTM semi;colon.txt", "RETR semi;colon.txt"}},
		// Same directory as before: no CWD at all.
		{"/pub/data.bin", "\x00\x01\x02\r\n\x03binary\r\n", []string{"TYPE I", "SIZE data.bin", "MDTM data.bin", "RETR data.bin"}},
	} {
		body, resp := c.get(t, base+tt.path)
		if body != tt.body {
			t.Errorf("%s: body %q, want %q", tt.path, body, tt.body)
		}
		got := c.commands()
		if strings.Join(got, "|") != strings.Join(tt.cmds, "|") {
			t.Errorf("%s: sent\n  %q\nwant\n  %q", tt.path, got, tt.cmds)
		}
		if !resp.ModTime.Equal(fileTime) {
			t.Errorf("%s: modified %v", tt.path, resp.ModTime)
		}
	}
	if strings.Contains(c.all.String(), "tester@example.org") {
		t.Error("the trace shows the password")
	}
}

func TestTypeAConvertsCRLF(t *testing.T) {
	addr, _ := startServer(t, nil)
	c := newTraced()
	// The server sends TYPE A data with CRLF; the client turns it into LF.
	body, _ := c.get(t, "ftp://"+addr+"/hello.txt;type=a")
	if body != "hello\nworld\n" {
		t.Errorf("TYPE A body %q", body)
	}
	body, resp := c.get(t, "ftp://"+addr+"/pub/data.bin;type=i")
	if body != tree["pub/data.bin"] || resp.Size != int64(len(body)) {
		t.Errorf("TYPE I body %q size %d", body, resp.Size)
	}
}

func TestListings(t *testing.T) {
	addr, _ := startServer(t, nil)
	c := newTraced()
	_, resp := c.get(t, "ftp://"+addr+"/pub/")
	if resp.Kind != fetch.KindDirectory {
		t.Fatalf("kind %v", resp.Kind)
	}
	got := map[string]fetch.Entry{}
	for _, e := range resp.Entries {
		got[e.Name] = e
	}
	for name, kind := range map[string]fetch.Kind{"README.txt": fetch.KindFile, "nested": fetch.KindDirectory, "with space": fetch.KindDirectory, "semi;colon.txt": fetch.KindFile} {
		e, ok := got[name]
		if !ok || e.Kind != kind {
			t.Errorf("entry %q: %+v (present %v)", name, e, ok)
		}
	}
	if e := got["README.txt"]; e.Size != 15 || e.URL != "ftp://"+addr+"/pub/README.txt" {
		t.Errorf("README entry %+v", e)
	}
	if e := got["with space"]; e.URL != "ftp://"+addr+"/pub/with%20space/" {
		t.Errorf("spaced entry URL %q", e.URL)
	}
	if e := got["semi;colon.txt"]; e.URL != "ftp://"+addr+"/pub/semi%3Bcolon.txt" {
		t.Errorf("semicolon entry URL %q", e.URL)
	}
	// Every entry URL dereferences.
	for _, e := range resp.Entries {
		r, err := c.Get(context.Background(), e.URL)
		if err != nil {
			t.Errorf("entry %s: %v", e.URL, err)
			continue
		}
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	// ;type=d is NLST of the name.
	c.commands()
	_, resp = c.get(t, "ftp://"+addr+"/pub/nested;type=d")
	names := []string{}
	for _, e := range resp.Entries {
		names = append(names, e.Name)
	}
	if strings.Join(names, ",") != "deep.txt,deeper" && strings.Join(names, ",") != "deeper,deep.txt" {
		t.Errorf("NLST names %q", names)
	}
	if cmds := c.commands(); len(cmds) == 0 || cmds[len(cmds)-1] != "NLST nested" {
		t.Errorf("NLST commands %q", cmds)
	}
}

func TestErrors(t *testing.T) {
	addr, _ := startServer(t, nil)
	c := newTraced()
	for _, tt := range []struct {
		url  string
		want error
	}{
		{"ftp://" + addr + "/pub/nope.txt", fetch.ErrNotFound},
		{"ftp://" + addr + "/nodir/x.txt", fetch.ErrNotFound},
		{"ftp://alice:wrong@" + addr + "/hello.txt", fetch.ErrAuth},
		{"ftp://" + addr + "/a%0D%0ADELE%20hello.txt", fetch.ErrBadURL},
		{"ftp://" + strings.Replace(addr, "127.0.0.1", "127.0.0.1", 1) + "/hello.txt;type=x", fetch.ErrBadURL},
	} {
		_, err := c.Get(context.Background(), tt.url)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.url, err, tt.want)
		}
		if strings.Contains(fmt.Sprint(err), "wrong") {
			t.Errorf("error shows the password: %v", err)
		}
	}
	for _, cmd := range c.commands() {
		if strings.Contains(cmd, "DELE") {
			t.Errorf("an injected command reached the server: %q", cmd)
		}
	}
	// A user's login, then a wrong one.
	body, _ := c.get(t, "ftp://alice:secret@"+addr+"/hello.txt")
	if body != "hello\nworld\n" {
		t.Errorf("alice's body %q", body)
	}
}

func TestResumeAndPool(t *testing.T) {
	addr, d := startServer(t, nil)
	c := newTraced()
	u := url.MustParse("ftp://" + addr + "/pub/big.bin")
	resp, err := c.Fetch(context.Background(), u, 1000000)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(b) != 3<<20-1000000 || b[0] != byte(1000000*7%256) || resp.Offset != 1000000 {
		t.Errorf("resume: %d bytes, offset %d, %v", len(b), resp.Offset, err)
	}
	cmds := c.commands()
	if !contains(cmds, "REST 1000000") {
		t.Errorf("no REST in %q", cmds)
	}
	// At the end: nothing fetched, no error; beyond: an error.
	resp, err = c.Fetch(context.Background(), u, 3<<20)
	if err != nil {
		t.Fatalf("resume at the end: %v", err)
	}
	if b, _ := io.ReadAll(resp.Body); len(b) != 0 {
		t.Errorf("resume at the end gave %d bytes", len(b))
	}
	resp.Body.Close()
	if _, err := c.Fetch(context.Background(), u, 3<<20+1); !errors.Is(err, fetch.ErrRangeNotSatisfied) {
		t.Errorf("resume beyond the end: %v", err)
	}
	// All of it over one control connection, returning to the login
	// directory between URLs.
	before := d.conns.Load()
	c.get(t, "ftp://"+addr+"/pub/nested/deep.txt")
	c.get(t, "ftp://"+addr+"/pub/nested/deep.txt")
	c.get(t, "ftp://"+addr+"/hello.txt")
	if n := d.conns.Load() - before; n != 0 {
		t.Errorf("%d new connections for three URLs to a pooled server", n)
	}
	cmds = c.commands()
	if n := count(cmds, "CWD pub"); n != 1 {
		t.Errorf("same directory twice: CWD pub sent %d times in %q", n, cmds)
	}
	if !contains(cmds, "CWD /") {
		t.Errorf("no return to the login directory in %q", cmds)
	}
	// Reading on after the end gives EOF again, not an error.
	resp, _ = c.Get(context.Background(), "ftp://"+addr+"/hello.txt;type=i")
	io.ReadAll(resp.Body)
	if n, err := resp.Body.Read(make([]byte, 10)); n != 0 || err != io.EOF {
		t.Errorf("read after the end: %d, %v", n, err)
	}
	resp.Body.Close()
	// A body closed early does not poison the pool.
	resp, _ = c.Get(context.Background(), "ftp://"+addr+"/pub/big.bin")
	resp.Body.Read(make([]byte, 10))
	if err := resp.Body.Close(); err != nil {
		t.Errorf("early close: %v", err)
	}
	if body, _ := c.get(t, "ftp://"+addr+"/hello.txt"); body != "hello\nworld\n" {
		t.Errorf("after an early close: %q", body)
	}
}

func TestDownloadSplice(t *testing.T) {
	addr, _ := startServer(t, nil)
	c := newTraced()
	dir := t.TempDir()
	p, err := c.Download(context.Background(), "ftp://"+addr+"/pub/big.bin", dir)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if len(got) != 3<<20 || got[12345] != byte(12345*7%256) {
		t.Errorf("downloaded %d bytes", len(got))
	}
	st, _ := os.Stat(p)
	if !st.ModTime().Equal(st.ModTime().Truncate(0)) || filepath.Base(p) != "big.bin" {
		t.Errorf("download %s", p)
	}
}

func TestMethods(t *testing.T) {
	addr, _ := startServer(t, nil)
	for _, tt := range []struct {
		method string
		cmds   []string
	}{
		{"single", []string{"TYPE I", "CWD pub/nested", "SIZE deep.txt", "MDTM deep.txt", "TYPE A", "RETR deep.txt"}},
		{"none", []string{"TYPE I", "SIZE pub/nested/deep.txt", "MDTM pub/nested/deep.txt", "TYPE A", "RETR pub/nested/deep.txt"}},
		{"auto", []string{"TYPE I", "SIZE pub/nested/deep.txt", "MDTM pub/nested/deep.txt", "TYPE A", "RETR pub/nested/deep.txt"}},
	} {
		c := newTraced()
		c.FTP.Method = tt.method
		body, _ := c.get(t, "ftp://"+addr+"/pub/nested/deep.txt")
		if got := c.commands(); body != "deep\n" || strings.Join(got, "|") != strings.Join(tt.cmds, "|") {
			t.Errorf("method %s: %q\n  sent %q\n  want %q", tt.method, body, got, tt.cmds)
		}
	}
	// auto falls back to the CWDs when the direct path fails.
	c := newTraced()
	c.FTP.Method = "auto"
	if _, err := c.Get(context.Background(), "ftp://"+addr+"/pub/nested/none.txt"); !errors.Is(err, fetch.ErrNotFound) {
		t.Errorf("auto, missing: %v", err)
	}
	if cmds := c.commands(); !contains(cmds, "CWD nested") {
		t.Errorf("auto did not fall back: %q", cmds)
	}
}

// TestFileOtherHost checks that file://host/path names a file on another
// machine, reached by FTP (the 1993 URL draft; lynx does the same).
func TestFileOtherHost(t *testing.T) {
	addr, _ := startServer(t, nil)
	c := newTraced()
	body, _ := c.get(t, "file://"+addr+"/pub/nested/deep.txt")
	if body != "deep\n" {
		t.Errorf("file: through FTP gave %q", body)
	}
	if cmds := c.commands(); !contains(cmds, "RETR deep.txt") {
		t.Errorf("no RETR in %q", cmds)
	}
}

// TestSOCKS checks FTP through a SOCKS5 proxy: the control and the data
// connections both go through it, to the server's own address.
func TestSOCKS(t *testing.T) {
	addr, _ := startServer(t, nil)
	sp, err := socks5.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	c := newTraced()
	pu := url.MustParse("socks5://" + sp.Addr())
	c.Proxy = func(*url.URL) (*url.URL, error) { return pu, nil }
	body, _ := c.get(t, "ftp://"+addr+"/pub/nested/deep.txt")
	if body != "deep\n" {
		t.Errorf("through SOCKS: %q", body)
	}
	if tg := sp.Targets(); len(tg) < 2 || tg[0] != addr {
		t.Errorf("SOCKS targets %q", tg)
	}
}

func contains(list []string, s string) bool { return count(list, s) > 0 }

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
