package mirror_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
	"github.com/urlderef/deref/internal/testserver/gopherd"
	"github.com/urlderef/deref/internal/testserver/nntpd"
)

// listing answers LIST with lines, as a hostile or broken server might.
func listing(lines ...string) ftpscript.Handler {
	return func(c *ftpscript.Conn, verb, arg string) bool {
		if verb != "LIST" && verb != "NLST" {
			return false
		}
		d, err := c.AcceptData()
		if err != nil {
			c.Reply("425 no data connection")
			return true
		}
		c.Reply("150 Here comes the directory listing.")
		for _, l := range lines {
			fmt.Fprintf(d, "%s\r\n", l)
		}
		d.Close()
		c.Reply("226 Directory send OK.")
		return true
	}
}

func ls(name string, size int) string {
	return fmt.Sprintf("-rw-r--r--    1 0        0        %8d Jan 02  2020 %s", size, name)
}

func TestHostileFTPListing(t *testing.T) {
	s := &ftpscript.Server{
		Files: map[string]string{
			"good.txt":      "good",
			"A.txt":         "upper",
			"a.txt":         "lower",
			"good.txt.part": "not ours",
			// What a client that trusted the names would fetch:
			"../x": "escaped", "/abs": "escaped", "a/../../b": "escaped", "etc": "escaped",
		},
		Handle: listing(
			ls("good.txt", 4),
			ls("../x", 7),
			ls("/abs", 7),
			ls("a/../../b", 7),
			ls("..", 7), // dropped by the listing parser as ls's own entry
			ls(`back\slash`, 7),
			ls("bell\x07and\rreturn", 7),
			"lrwxrwxrwx    1 0        0              4 Jan 02  2020 etc -> /etc",
			"lrwxrwxrwx    1 0        0              4 Jan 02  2020 up -> ../../outside",
			ls("A.txt", 5),
			ls("a.txt", 5),
			ls("good.txt.part", 8),
			"a line no parser understands",
		),
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := t.TempDir()
	dst := filepath.Join(base, "inner", "dst")
	rep := run(t, "ftp://"+s.Addr()+"/", dst, mirror.Options{FoldCase: true, FollowSymlinks: true})

	got := readTree(t, dst)
	if len(got) != 2 || got["good.txt"] != "good" || got["A.txt"] != "upper" {
		t.Errorf("mirrored %v, want good.txt and A.txt only", got)
	}
	if des, _ := os.ReadDir(filepath.Join(base, "inner")); len(des) != 1 {
		t.Errorf("entries beside the destination: %v", des)
	}
	if des, _ := os.ReadDir(base); len(des) != 1 {
		t.Errorf("entries above the destination: %v", des)
	}
	reasons := map[string]string{}
	for _, it := range rep.Items {
		if it.Action == mirror.ActionRefuse {
			reasons[it.Path] = it.Reason
		}
	}
	for _, want := range []string{"unsafe name \"../x\"", "unsafe name \"/abs\"", "unsafe name \"a/../../b\"", `unsafe name "back\\slash"`, `unsafe name "bell\aand\rreturn"`,
		"symbolic link to \"/etc\" outside", "symbolic link to \"../../outside\" outside", "collides with \"A.txt\"", "temporary name of \"good.txt\"", "not understood"} {
		found := false
		for _, r := range reasons {
			found = found || strings.Contains(r, want)
		}
		if !found {
			t.Errorf("no refusal %q among %q", want, reasons)
		}
	}
	if rep.Refused != 10 || rep.New != 2 || rep.Failed != 0 {
		t.Errorf("report %+v", rep)
	}
	cmds := s.Commands()
	for _, c := range cmds {
		if strings.HasPrefix(c, "RETR ") && c != "RETR good.txt" && c != "RETR A.txt" {
			t.Errorf("the server was asked for %q", c)
		}
	}
	// The listing gave the size (no SIZE needed) but only the day: each
	// new file's exact time is asked once, by its transfer (with its EPSV
	// and RETR where the connection is in use).
	if slices.Contains(cmds, "SIZE good.txt") {
		t.Errorf("commands %q", cmds)
	}
	mdtm := 0
	for _, c := range cmds {
		if strings.HasPrefix(c, "MDTM ") {
			mdtm++
		}
	}
	if mdtm != 2 || !slices.Contains(cmds, "MDTM good.txt") || !slices.Contains(cmds, "MDTM A.txt") {
		t.Errorf("MDTM: %q", cmds)
	}
}

// dropOnce serves files but cuts the first transfer of each after half
// its bytes, with a 426 reply, as a failing link would.
func dropOnce(files map[string]string) ftpscript.Handler {
	var mu sync.Mutex
	cut := map[string]bool{}
	return func(c *ftpscript.Conn, verb, arg string) bool {
		if verb != "RETR" {
			return false
		}
		f := files[c.Path(arg)]
		mu.Lock()
		first := !cut[arg]
		cut[arg] = true
		mu.Unlock()
		if !first {
			return false
		}
		d, err := c.AcceptData()
		if err != nil {
			c.Reply("425 no data connection")
			return true
		}
		c.Reply("150 Opening BINARY mode data connection for %s (%d bytes).", arg, len(f))
		d.Write([]byte(f[c.Rest : c.Rest+int64(len(f)-int(c.Rest))/2]))
		c.Rest = 0
		d.Close()
		c.Reply("426 Connection closed; transfer aborted.")
		return true
	}
}

func TestDroppedTransferResumes(t *testing.T) {
	files := map[string]string{"one.bin": strings.Repeat("1", 100000), "two.bin": strings.Repeat("2", 100000)}
	for _, retries := range []int{0, 2} {
		s := &ftpscript.Server{Files: files}
		drop := dropOnce(files)
		list := listing(ls("one.bin", 100000), ls("two.bin", 100000))
		s.Handle = func(c *ftpscript.Conn, verb, arg string) bool { return list(c, verb, arg) || drop(c, verb, arg) }
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		dst := t.TempDir()
		src := "ftp://" + s.Addr() + "/"
		rep := run(t, src, dst, mirror.Options{Retries: retries, RetryWait: time.Millisecond})
		if retries == 0 {
			if rep.Failed != 2 || rep.FirstError() == nil || !mirror.Temporary(rep.FirstError()) && !errors.Is(rep.FirstError(), fetch.ErrProtocol) {
				t.Fatalf("no retries: %+v", rep)
			}
			for name := range files {
				if _, err := os.Stat(filepath.Join(dst, name)); err == nil {
					t.Errorf("%s is under its final name after a dropped transfer", name)
				}
				if b, _ := os.ReadFile(filepath.Join(dst, name+".part")); len(b) != 50000 {
					t.Errorf("%s.part holds %d bytes, want 50000", name, len(b))
				}
			}
			rep = run(t, src, dst, mirror.Options{})
		}
		if rep.Failed != 0 || rep.New != 2 {
			t.Errorf("retries %d: %+v", retries, rep)
		}
		sameTree(t, readTree(t, dst), files)
		rest := 0
		for _, c := range s.Commands() {
			if c == "REST 50000" {
				rest++
			}
		}
		if rest != 2 {
			t.Errorf("retries %d: %d resumes with REST 50000, want 2: %q", retries, rest, s.Commands())
		}
	}
}

func TestHTTPIndexMirror(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, map[string]string{"pub/a.txt": "alpha", "pub/sub/b.txt": "beta", "pub/sp ace.txt": "space", "pub/hostile/ok.txt": "ok", "secret.txt": "not below the start"})
	var gets, notModified atomic.Int32
	var busy atomic.Int32
	busy.Store(1)
	files := nethttp.FileServer(nethttp.Dir(root))
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		switch r.URL.Path {
		case "/pub/hostile/":
			fmt.Fprint(w, `<html><a href="../../secret.txt">up</a> <a href="/secret.txt">abs</a> <a href="http://elsewhere.invalid/pub/hostile/x">other host</a>
<a href="..%2F..%2Fsecret.txt">encoded</a> <a href="%2E%2E/x">dots</a> <a href="?C=N;O=D">sort</a> <a href="ok.txt#frag">ok</a></html>`)
			return
		case "/pub/sub/b.txt":
			if busy.Add(-1) >= 0 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(503)
				return
			}
		}
		gets.Add(1)
		rec := &statusRecorder{ResponseWriter: w}
		files.ServeHTTP(rec, r)
		if rec.code == 304 {
			notModified.Add(1)
		}
	}))
	defer srv.Close()
	dst := t.TempDir()
	var ev events
	rep := run(t, srv.URL+"/pub/", dst, mirror.Options{Retries: 1, RetryWait: time.Millisecond, Events: ev.add})
	sameTree(t, readTree(t, dst), map[string]string{"a.txt": "alpha", "sub/b.txt": "beta", "sp ace.txt": "space", "hostile/ok.txt": "ok"})
	if rep.Failed != 0 || len(ev.of(mirror.EventRetry)) != 1 {
		t.Errorf("report %+v, %d retries", rep, len(ev.of(mirror.EventRetry)))
	}

	// A dry run cannot know what the server will say to
	// If-Modified-Since: it says "check", not "update".
	gets.Store(0)
	rep = run(t, srv.URL+"/pub/", dst, mirror.Options{OnlyNewer: true, DryRun: true})
	if rep.Updated != 0 || rep.Checked != 4 || rep.Items[0].Action != mirror.ActionCheck || rep.Items[0].Action.String() != "check" {
		t.Errorf("dry run: %+v", rep)
	}
	if gets.Load() != 2 {
		t.Errorf("the dry run made %d requests; want the two index pages", gets.Load())
	}

	rep = run(t, srv.URL+"/pub/", dst, mirror.Options{OnlyNewer: true})
	if rep.New+rep.Updated != 0 || rep.Unchanged != 4 || notModified.Load() != 4 {
		t.Errorf("second run: %+v, %d requests answered 304", rep, notModified.Load())
	}
}

type statusRecorder struct {
	nethttp.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}

func TestGopherMirror(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, map[string]string{"pub/a.txt": "alpha\r\n", "pub/b.bin": "\x00\x01", "pub/sub/c.txt": "gamma\r\n", "other.txt": "not below"})
	s := &gopherd.Server{Root: root}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dst := t.TempDir()
	rep := run(t, "gopher://"+s.Addr()+"/1/pub", dst, mirror.Options{})
	got := readTree(t, dst)
	if rep.New != 3 || rep.Failed != 0 || got["b.bin"] != "\x00\x01" || !strings.HasPrefix(got["sub/c.txt"], "gamma") || len(got) != 3 {
		t.Errorf("report %+v, tree %q", rep, got)
	}
}

// TestGophernicusNames mirrors menus written the way gophernicus writes
// them (replies as it sent them for the interoperability tree): selectors
// with '#' and three octal digits for some bytes, the display string
// padded and followed by date and size, and the items of an escaped
// folder below its unescaped path. Local names are the unescaped ones
// where the display string shows them, the selector's own otherwise, and
// an unescaped name that is not one safe element is refused.
func TestGophernicusNames(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	item := func(typ byte, display, sel string) string {
		return fmt.Sprintf("%c%-35s   2020-Jan-02 03:04     0.0 KB\t%s\t%s\t%s\r\n", typ, display, sel, host, port)
	}
	replies := map[string]string{
		"/pub/": "i[/pub/]\tTITLE\tnull.host\t1\r\n" +
			item('1', "nested", "/pub/nested/") +
			item('0', "with space.txt", "/pub/with#040space.txt") +
			item('0', "percent%sign.txt", "/pub/percent#045sign.txt") +
			item('0', "Literal name", "/pub/lit#040eral.txt") +
			item('0', "a/b.txt", "/pub/a#057b.txt") + ".\r\n",
		"/pub/nested/":                  item('1', "with space", "/pub/nested/with#040space/") + ".\r\n",
		"/pub/nested/with#040space/":    item('0', "x y", "/pub/nested/with space/x#040y") + ".\r\n",
		"/pub/with#040space.txt":        "one\r\n.\r\n",
		"/pub/percent#045sign.txt":      "two\r\n.\r\n",
		"/pub/lit#040eral.txt":          "three\r\n.\r\n",
		"/pub/a#057b.txt":               "four\r\n.\r\n",
		"/pub/nested/with space/x#040y": "five\r\n.\r\n",
	}
	var asked sync.Map
	go testserver.Serve(ln, func(c net.Conn) {
		defer c.Close()
		buf := make([]byte, 1024)
		n, _ := c.Read(buf)
		sel := strings.TrimRight(string(buf[:n]), "\r\n")
		asked.Store(sel, true)
		r, ok := replies[sel]
		if !ok {
			r = "3 not found\t\terror.host\t1\r\n.\r\n"
		}
		c.Write([]byte(r))
	})
	dst := t.TempDir()
	rep := run(t, "gopher://"+ln.Addr().String()+"/1/pub/", dst, mirror.Options{})
	got := readTree(t, dst)
	want := map[string]string{"with space.txt": "one\n", "percent%sign.txt": "two\n", "lit#040eral.txt": "three\n", "nested/with space/x y": "five\n"}
	if len(got) != len(want) {
		t.Errorf("tree %q, want %q", got, want)
	}
	for name, body := range want {
		if got[name] != body {
			t.Errorf("%s: %q, want %q (tree %q)", name, got[name], body, got)
		}
	}
	if rep.Refused != 1 || rep.Failed != 0 {
		t.Errorf("report %+v: want a/b.txt refused and nothing failed", rep)
	}
	if _, ok := asked.Load("/pub/a#057b.txt"); ok {
		t.Error("the refused item was fetched")
	}
}

func TestNewsgroupMirror(t *testing.T) {
	s := nntpd.New()
	s.AddGroup("local.test", "tests")
	for i := range 3 {
		s.Post("local.test", fmt.Sprintf("<m%d@example>", i), []string{"Subject: s" + fmt.Sprint(i), "From: a@example", "Date: Mon, 02 Jan 2006 15:04:05 +0000"}, fmt.Sprintf("body %d\r\n", i))
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dst := t.TempDir()
	src := "nntp://" + s.Addr() + "/local.test"
	rep := run(t, src, dst, mirror.Options{})
	got := readTree(t, dst)
	if rep.New != 3 || len(got) != 3 || !strings.Contains(got["2"], "body 1") || !strings.Contains(got["2"], "Message-ID: <m1@example>") {
		t.Errorf("report %+v, tree %q", rep, got)
	}
	s.Post("local.test", "<m3@example>", []string{"Subject: new"}, "body 3\r\n")
	rep = run(t, src, dst, mirror.Options{OnlyNewer: true})
	if rep.New != 1 || rep.Unchanged != 3 {
		t.Errorf("second run %+v", rep)
	}
}

func TestRateLimit(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, map[string]string{"f": strings.Repeat("x", 300<<10)})
	start := time.Now()
	run(t, "file://"+filepath.ToSlash(root)+"/", t.TempDir(), mirror.Options{LimitRate: 1 << 20})
	// The limiter starts with a full burst (64 KiB), the rest at 1 MiB/s.
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("300 KiB at 1 MiB/s took %v", d)
	}
}

func TestStartErrors(t *testing.T) {
	c := fetch.NewClient()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	for _, tc := range []struct {
		src  string
		want error
	}{
		{"ftp://" + addr + "/", fetch.ErrNetwork},
		{"ftp://h/a%0Ab/", fetch.ErrBadURL},
		{"mailto:a@b", fetch.ErrUnsupportedScheme},
		{"gopher://h/0file", fetch.ErrBadURL},
	} {
		_, err := mirror.Run(context.Background(), c, tc.src, t.TempDir(), mirror.Options{})
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.src, err, tc.want)
		}
	}
}
