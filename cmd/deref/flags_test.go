package main

import (
	"crypto/md5"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/golden"
	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/internal/testserver/ftpd"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
	"github.com/urlderef/deref/internal/testserver/socks5"
)

var updateMan = flag.Bool("update-man", false, "rewrite deref.1")

// TestManPage: deref.1 is what the flag table makes (go generate, or
// go test -run TestManPage -update-man, rewrites it).
func TestManPage(t *testing.T) {
	got := manPage()
	if *updateMan || *golden.Update {
		if err := os.WriteFile("deref.1", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("deref.1")
	if err != nil || string(want) != got {
		t.Fatalf("deref.1 is stale (go generate ./cmd/deref rewrites it): %v", err)
	}
	for _, f := range visibleFlags(cmdBoth) {
		if !strings.Contains(got, `\-\-`+strings.ReplaceAll(f.long, "-", `\-`)+`\fR`) {
			t.Errorf("the man page lacks --%s", f.long)
		}
	}
	if man, err := exec.LookPath("man"); err == nil {
		cmd := exec.Command(man, "-l", "-Tutf8", "deref.1")
		cmd.Env = append(os.Environ(), "MANWIDTH=80")
		if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "warning") {
			t.Errorf("man -l deref.1: %v\n%s", err, out)
		}
	}
}

// TestParseFlags: the spellings a curl or wget user types.
func TestParseFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		pos  []string
		chk  func(o *options) bool
	}{
		{[]string{"-sO", "u"}, []string{"u"}, func(o *options) bool { return o.silent && o.remoteName }},
		{[]string{"-C-", "-o", "f", "u"}, []string{"u"}, func(o *options) bool { return o.resume == "-" && o.output == "f" }},
		{[]string{"-ofile", "u"}, []string{"u"}, func(o *options) bool { return o.output == "file" }},
		{[]string{"-sC", "6", "u"}, []string{"u"}, func(o *options) bool { return o.silent && o.resume == "6" }},
		{[]string{"u", "--max-time=2.5", "-max-time", "3"}, []string{"u"}, func(o *options) bool { return o.maxTime == 3 }},
		{[]string{"--ftp-timezone", "-03:00", "u"}, []string{"u"}, func(o *options) bool { return o.ftpTimeZone == "-03:00" }},
		{[]string{"-H", "A: 1", "--header=B: 2", "u"}, []string{"u"}, func(o *options) bool { return len(o.headers) == 2 && o.headers[1] == "B: 2" }},
		{[]string{"--", "-not-a-flag"}, []string{"-not-a-flag"}, func(o *options) bool { return true }},
		{[]string{"--limit-rate", "2M", "u"}, []string{"u"}, func(o *options) bool { return o.limitRate == 2<<20 }},
		{[]string{"--max-filesize", "1k", "u"}, []string{"u"}, func(o *options) bool { return o.maxBytes == 1024 }},
		// curl's -f, -S and -L ask for what deref does anyway.
		{[]string{"-fsSL", "u"}, []string{"u"}, func(o *options) bool { return o.silent && !o.remoteName }},
		{[]string{"-LO", "--fail", "--location", "--show-error", "u"}, []string{"u"}, func(o *options) bool { return o.remoteName && !o.silent }},
		// -R and -g too (deref keeps the server's time and never globs);
		// --no-progress-meter is -s; --url is a URL in its place.
		{[]string{"-RgO", "--remote-time", "--globoff", "u"}, []string{"u"}, func(o *options) bool { return o.remoteName && !o.silent }},
		{[]string{"--no-progress-meter", "u"}, []string{"u"}, func(o *options) bool { return o.silent }},
		{[]string{"-#O", "--progress-bar", "u"}, []string{"u"}, func(o *options) bool { return o.remoteName && !o.silent }},
		{[]string{"--netrc-optional", "--path-as-is", "--tcp-nodelay", "u"}, []string{"u"}, func(o *options) bool { return !o.silent }},
		{[]string{"--http1.1", "--http2", "--http3", "u"}, []string{"u"}, func(o *options) bool { return !o.silent }},
		{[]string{"--ssl-reqd", "u"}, []string{"u"}, func(o *options) bool { return o.ftpSSL && o.newsTLS }},
		{[]string{"--ftp-ssl-reqd", "--fail-early", "u"}, []string{"u"}, func(o *options) bool { return o.ftpSSL && !o.newsTLS && o.failEarly }},
		// -b NAME=VALUE, repeatable.
		{[]string{"-b", "a=1", "--cookie=b=2; c=3", "u"}, []string{"u"}, func(o *options) bool { return strings.Join(o.cookies, "|") == "a=1|b=2; c=3" }},
		{[]string{"-Y", "1k", "-y", "2.5", "u"}, []string{"u"}, func(o *options) bool { return o.speedLimit == 1024 && o.speedTime == 2.5 }},
		// -b FILE (no '='), -c FILE, -j; wget's --load-cookies.
		{[]string{"-b", "jar.txt", "-jc", "out.txt", "--load-cookies", "w.txt", "u"}, []string{"u"}, func(o *options) bool {
			return strings.Join(o.cookieFiles, "|") == "jar.txt|w.txt" && o.cookieJar == "out.txt" && o.junkSessions && !o.wgetJar && len(o.cookies) == 0
		}},
		// wget's long spellings.
		{[]string{"--no-check-certificate", "--timeout=7", "--tries", "3", "--continue", "-o", "f", "u"}, []string{"u"}, func(o *options) bool {
			return o.insecure && o.connectTimeout == 7 && o.idleTimeout == 7 && o.retry == 2 && o.resume == "-"
		}},
		{[]string{"--user=alice", "--password", "pw", "u"}, []string{"u"}, func(o *options) bool { return o.user == "alice" && o.password == "pw" }},
		// -4 and -6, the last winning as in curl; wget's spellings.
		{[]string{"-4", "u"}, []string{"u"}, func(o *options) bool { return o.network == "tcp4" }},
		{[]string{"-4s6", "u"}, []string{"u"}, func(o *options) bool { return o.network == "tcp6" && o.silent }},
		{[]string{"--inet6-only", "--ipv6=false", "u"}, []string{"u"}, func(o *options) bool { return o.network == "" }},
		{[]string{"--inet4-only", "--ipv6=false", "u"}, []string{"u"}, func(o *options) bool { return o.network == "tcp4" }},
		{[]string{"a", "--url", "b", "-o", "f", "--url=c", "d"}, []string{"a", "b", "c", "d"}, func(o *options) bool { return o.output == "f" }},
		// curl's --include is -D -; -E is --cert; -Z and --parallel-max set
		// --parallel; --proxy-basic, --ftp-pasv and --parallel-immediate are
		// what deref does.
		{[]string{"--include", "-E", "c.pem", "-Z", "--proxy-basic", "--ftp-pasv", "--parallel-immediate", "u"}, []string{"u"}, func(o *options) bool {
			return o.dumpHeader == "-" && o.cert == "c.pem" && o.parallel == 50
		}},
		{[]string{"--parallel-max", "7", "-Z", "u"}, []string{"u"}, func(o *options) bool { return o.parallel == 7 }},
	} {
		var o options
		pos, err := parseFlags(cmdGet, tt.args, &o)
		if err != nil || strings.Join(pos, " ") != strings.Join(tt.pos, " ") || !tt.chk(&o) {
			t.Errorf("%q: %v %q %+v", tt.args, err, pos, o)
		}
	}
	for _, args := range [][]string{{"--max-tiem", "2"}, {"-Z=no"}, {"-o"}, {"--retry", "many"}, {"--limit-rate", "fast"}, {"--location=false"}, {"--fail=no"}, {"-R=false"}, {"--globoff=0"}, {"--url"}, {"--tries=0"}, {"--timeout=soon"}} {
		var o options
		if _, err := parseFlags(cmdGet, args, &o); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
	var o options
	if _, err := parseFlags(cmdGet, []string{"--max-tiem", "2"}, &o); err == nil || !strings.Contains(err.Error(), "did you mean --max-time?") {
		t.Errorf("no suggestion: %v", err)
	}
	// What deref does not do is refused saying why, not as unknown; -X
	// GET asks for what it does. (-d without -G is refused once the
	// command line is read: TestQueryData.)
	for args, why := range map[string]string{"--post-data=a": "no request body", "-X POST": "not POST",
		"-F a=b": "no form", "-T f": "uploads nothing", "-J": "Content-Disposition", "--content-disposition": "Content-Disposition",
		"--http2-prior-knowledge": "HTTP/1.1 only", "--http3-only": "HTTP/1.1 only", "--http1.0": "HTTP/1.1 only"} {
		var o options
		if _, err := parseFlags(cmdGet, strings.Fields(args), &o); err == nil || !strings.Contains(err.Error(), why) || strings.Contains(err.Error(), "unknown") {
			t.Errorf("%s: %v", args, err)
		}
	}
	if pos, err := parseFlags(cmdGet, []string{"-X", "GET", "u"}, &o); err != nil || len(pos) != 1 {
		t.Errorf("-X GET: %v", err)
	}
}

// headServer records the last request's header and answers with body.
func headServer(t *testing.T, body string) (*httptest.Server, func() nethttp.Header) {
	var last atomic.Value
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		last.Store(r.Header.Clone())
		w.Write([]byte(body))
	}))
	t.Cleanup(s.Close)
	return s, func() nethttp.Header { h, _ := last.Load().(nethttp.Header); return h }
}

// TestHTTPFlags: -H, -A, -e and -u reach the server; the default
// User-Agent is deref/VERSION.
func TestHTTPFlags(t *testing.T) {
	s, last := headServer(t, "ok")
	if r := runDeref(t, "", s.URL+"/"); r.code != 0 || !strings.HasPrefix(last().Get("User-Agent"), "deref/") {
		t.Errorf("default User-Agent %q", last().Get("User-Agent"))
	}
	r := runDeref(t, "", "-A", "agent/1", "-e", "http://from.example/", "-H", "X-One: 1", "-H", "X-One: 2", "-H", "Accept:", "-u", "joe:se:cret", s.URL+"/")
	h := last()
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("joe:se:cret"))
	if r.code != 0 || h.Get("User-Agent") != "agent/1" || h.Get("Referer") != "http://from.example/" || strings.Join(h.Values("X-One"), ",") != "1,2" ||
		h.Get("Accept") != "" || h.Get("Authorization") != auth {
		t.Errorf("exit %d, header %v", r.code, h)
	}
	// Referer leaves out a user, a password and a fragment (RFC 9110).
	r = runDeref(t, "", "-v", "-e", "http://alice:s3cret@from.example/page#part", s.URL+"/")
	if got := last().Get("Referer"); r.code != 0 || got != "http://from.example/page" || strings.Contains(r.stderr, "s3cret") {
		t.Errorf("Referer %q, exit %d, trace %q", got, r.code, r.stderr)
	}
	for _, bad := range [][]string{{"-H", "no colon"}, {"-H", "X: a\rb"}, {"-u", ":pw"}} {
		if r := runDeref(t, "", append(bad, s.URL+"/")...); r.code != 1 || !strings.HasSuffix(r.stderr, "see 'deref -h'\n") {
			t.Errorf("%q: exit %d %q", bad, r.code, r.stderr)
		}
	}
}

// TestUserNotSentAcrossSites: -u goes to the site asked for, not to
// another one a redirect names.
func TestUserNotSentAcrossSites(t *testing.T) {
	other, last := headServer(t, "elsewhere")
	redir := httptest.NewServer(nethttp.RedirectHandler(other.URL+"/x", nethttp.StatusFound))
	t.Cleanup(redir.Close)
	r := runDeref(t, "", "-u", "joe:pw", redir.URL+"/")
	if r.code != 0 || r.stdout != "elsewhere" || last().Get("Authorization") != "" {
		t.Errorf("exit %d %q, Authorization %q", r.code, r.stdout, last().Get("Authorization"))
	}
}

// TestFTPUser: -u logs in to FTP too, and gives its password to a URL
// that names its user without one (as a listing's URLs do: they leave
// the password out), not to one that names another user.
func TestFTPUser(t *testing.T) {
	s := &ftpscript.Server{Files: map[string]string{"f": "x"}}
	start(t, s.Start, s.Close)
	r := runDeref(t, "", "-u", "alice:wonder", "ftp://"+s.Addr()+"/f")
	cmds := strings.Join(s.Commands(), "|")
	if r.code != 0 || !strings.Contains(cmds, "USER alice|PASS wonder") {
		t.Errorf("exit %d, sent %q", r.code, cmds)
	}
	r = runDeref(t, "", "-u", "alice:wonder", "ftp://alice@"+s.Addr()+"/f")
	if cmds := strings.Join(s.Commands(), "|"); r.code != 0 || strings.Count(cmds, "USER alice|PASS wonder") != 2 {
		t.Errorf("ftp://alice@...: exit %d, sent %q", r.code, cmds)
	}
	r = runDeref(t, "", "-u", "alice:wonder", "ftp://bob@"+s.Addr()+"/f")
	if cmds := strings.Join(s.Commands(), "|"); strings.Contains(cmds, "USER bob|PASS wonder") {
		t.Errorf("ftp://bob@...: alice's password sent for bob: %q", cmds)
	}
}

// TestDisableEPSV: curl's --disable-epsv asks for data connections with
// PASV only; without it EPSV comes first.
func TestDisableEPSV(t *testing.T) {
	for _, tt := range []struct {
		args []string
		epsv bool
	}{{nil, true}, {[]string{"--disable-epsv"}, false}} {
		s := &ftpscript.Server{Files: map[string]string{"f": "x"}}
		start(t, s.Start, s.Close)
		r := runDeref(t, "", append(tt.args, "ftp://"+s.Addr()+"/f")...)
		cmds := strings.Join(s.Commands(), "|")
		if r.code != 0 || r.stdout != "x" || strings.Contains(cmds, "EPSV") != tt.epsv || !tt.epsv && !strings.Contains(cmds, "PASV") {
			t.Errorf("%q: exit %d, %q, sent %q; %s", tt.args, r.code, r.stdout, cmds, r.stderr)
		}
	}
}

// TestListingURLsWithoutPassword: a listing's URLs name the user of the
// URL listed but not its password, in either form.
func TestListingURLsWithoutPassword(t *testing.T) {
	s := startFTPD(t, "f")
	for _, args := range [][]string{{"ftp://alice:wonder@" + s.Addr() + "/"}, {"--json", "ftp://alice:wonder@" + s.Addr() + "/"}} {
		r := runDeref(t, "", args...)
		if r.code != 0 || strings.Contains(r.stdout, "wonder") || !strings.Contains(r.stdout, "ftp://alice@"+s.Addr()+"/f") {
			t.Errorf("listing %q: exit %d, %q %q", args, r.code, r.stdout, r.stderr)
		}
	}
}

// TestParallelWorkers: --parallel starts no more workers than there are
// URLs: deref --parallel 1000000 -O URL took 2.7 GB and 27 s for one
// URL, most of it goroutines waiting for URLs that never came.
func TestParallelWorkers(t *testing.T) {
	base := runtime.NumGoroutine()
	var seen atomic.Int64
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		seen.Store(int64(runtime.NumGoroutine() - base))
		io.WriteString(w, "x")
	}))
	t.Cleanup(s.Close)
	r := runDeref(t, "", "-s", "--parallel", "100000", "-O", "--output-dir", t.TempDir(), s.URL+"/f")
	if r.code != 0 || seen.Load() > 100 {
		t.Errorf("exit %d (%s), %d goroutines more while the one URL was fetched", r.code, r.stderr, seen.Load())
	}
}

// startFTPD serves a folder holding the files named, each holding "x",
// from the FTP server of ftpserverlib, which takes any login.
func startFTPD(t *testing.T, names ...string) *ftpd.Server {
	t.Helper()
	root := t.TempDir()
	for _, n := range names {
		os.WriteFile(filepath.Join(root, n), []byte("x"), 0o644)
	}
	s, err := ftpd.Start(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestRetry: temporary failures are tried again, with the wait the server
// asks for; a transfer to standard output that broke goes on where it
// stopped, and -w reports the attempts.
func TestRetry(t *testing.T) {
	flaky := &testserver.Flaky{Unavailable: 1, Body: "0123456789"}
	s := httptest.NewServer(flaky)
	t.Cleanup(s.Close)
	r := runDeref(t, "", "--retry", "3", "--retry-delay", "0.01", "-w", "%{num_retries} %{exitcode}\\n", s.URL+"/o")
	if r.code != 0 || r.stdout != "0123456789"+"2 0\n" || strings.Count(r.stderr, "trying again") != 2 {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if ranges := flaky.Ranges(); len(ranges) != 3 || ranges[2] != "bytes=5-" {
		t.Errorf("ranges %q: the retry to standard output should go on from byte 5", ranges)
	}
	// A permanent failure is not tried again.
	notFound := httptest.NewServer(nethttp.NotFoundHandler())
	t.Cleanup(notFound.Close)
	r = runDeref(t, "", "--retry", "3", notFound.URL+"/")
	if r.code != 4 || strings.Contains(r.stderr, "trying again") {
		t.Errorf("404: exit %d, %q", r.code, r.stderr)
	}
	// wget's --retry-on-http-error: a 404 that becomes the file, as one
	// still being published does.
	var asked atomic.Int32
	late := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if asked.Add(1) < 3 {
			nethttp.NotFound(w, r)
			return
		}
		io.WriteString(w, "published")
	}))
	t.Cleanup(late.Close)
	r = runDeref(t, "", "--tries", "5", "--retry-delay", "0.01", "--retry-on-http-error", "403, 404", late.URL+"/")
	if r.code != 0 || r.stdout != "published" || asked.Load() != 3 {
		t.Errorf("--retry-on-http-error 404: exit %d, %q after %d requests, %s", r.code, r.stdout, asked.Load(), r.stderr)
	}
	for _, bad := range []string{"4o4", "99", "404,"} {
		var o options
		if _, err := parseFlags(cmdGet, []string{"--retry-on-http-error", bad, "u"}, &o); err == nil {
			t.Errorf("--retry-on-http-error %q accepted", bad)
		}
	}
}

// TestRetryConnRefused: a refused connection is not tried again, as curl
// and wget have it, unless --retry-connrefused says so; either way it
// exits 6, a network failure.
func TestRetryConnRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := "http://" + l.Addr().String() + "/o"
	l.Close() // nothing listens there now
	r := runDeref(t, "", "--retry", "2", "--retry-delay", "0.01", target)
	if r.code != 6 || strings.Contains(r.stderr, "trying again") || !strings.Contains(r.stderr, "connection refused") {
		t.Errorf("exit %d, %q: want 6 and no retry", r.code, r.stderr)
	}
	r = runDeref(t, "", "--retry", "2", "--retry-delay", "0.01", "--retry-connrefused", target)
	if r.code != 6 || strings.Count(r.stderr, "trying again") != 2 {
		t.Errorf("--retry-connrefused: exit %d, %q: want 6 after two retries", r.code, r.stderr)
	}
}

// TestLimitRate: 64 KiB at 128 KiB/s take at least the half second the
// rate allows.
func TestLimitRate(t *testing.T) {
	s, _ := headServer(t, strings.Repeat("x", 64<<10))
	start := time.Now()
	r := runDeref(t, "", "--limit-rate", "128k", s.URL+"/")
	if r.code != 0 || len(r.stdout) != 64<<10 {
		t.Fatalf("exit %d, %d bytes", r.code, len(r.stdout))
	}
	if d := time.Since(start); d < 400*time.Millisecond {
		t.Errorf("64 KiB at 128 KiB/s took %v", d)
	}
}

// TestOnlyNewer: -N leaves a file as new as the server's (HTTP 304; FTP by
// MDTM and SIZE, without RETR) and fetches one that changed.
func TestOnlyNewer(t *testing.T) {
	mod := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	var gets, notMod atomic.Int32
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		gets.Add(1)
		if r.Header.Get("If-Modified-Since") != "" {
			notMod.Add(1)
		}
		nethttp.ServeContent(w, r, "f", mod, strings.NewReader("web\n"))
	}))
	t.Cleanup(s.Close)
	dir := t.TempDir()
	out := filepath.Join(dir, "f")
	if r := runDeref(t, "", "-N", "-o", out, s.URL+"/f"); r.code != 0 {
		t.Fatalf("first: %+v", r)
	}
	os.WriteFile(out, []byte("mine"), 0o644) // same time after this:
	os.Chtimes(out, mod, mod)
	r := runDeref(t, "", "-N", "-o", out, s.URL+"/f")
	if b, _ := os.ReadFile(out); r.code != 0 || string(b) != "mine" || notMod.Load() != 1 {
		t.Errorf("unchanged: exit %d, file %q, %d conditional requests", r.code, b, notMod.Load())
	}
	older := mod.Add(-time.Hour)
	os.Chtimes(out, older, older)
	if r := runDeref(t, "", "-N", "-o", out, s.URL+"/f"); r.code != 0 {
		t.Errorf("changed: %+v", r)
	}
	if b, _ := os.ReadFile(out); string(b) != "web\n" {
		t.Errorf("the newer copy was not fetched: %q", b)
	}

	f := &ftpscript.Server{Files: map[string]string{"pub/g.bin": "0123456789"}}
	start(t, f.Start, f.Close)
	ftpOut := filepath.Join(dir, "g.bin")
	os.WriteFile(ftpOut, []byte("0123456789"), 0o644)
	os.Chtimes(ftpOut, mod, mod) // ftpscript's MDTM is 20200102030405
	r = runDeref(t, "", "-N", "-O", "--output-dir", dir, "ftp://"+f.Addr()+"/pub/g.bin")
	if cmds := strings.Join(f.Commands(), "|"); r.code != 0 || strings.Contains(cmds, "RETR") || !strings.Contains(cmds, "MDTM g.bin") {
		t.Errorf("FTP unchanged: exit %d, sent %q", r.code, cmds)
	}
	os.WriteFile(ftpOut, []byte("01234"), 0o644) // another size: fetched
	os.Chtimes(ftpOut, mod, mod)
	r = runDeref(t, "", "-N", "-O", "--output-dir", dir, "ftp://"+f.Addr()+"/pub/g.bin")
	if b, _ := os.ReadFile(ftpOut); r.code != 0 || string(b) != "0123456789" {
		t.Errorf("FTP size differs: exit %d, %q", r.code, b)
	}
}

// TestWriteOut: -w with curl's variables, and json, one per URL of -i.
func TestWriteOut(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		switch r.URL.Path {
		case "/missing":
			nethttp.NotFound(w, r)
			return
		case "/old":
			nethttp.Redirect(w, r, "/d.txt", nethttp.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("hello"))
	}))
	t.Cleanup(s.Close)
	dir := t.TempDir()
	list := s.URL + "/a.txt\n" + s.URL + "/missing\n"
	r := runDeref(t, list, "-i", "-", "-O", "--output-dir", dir, "-w", "json")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 4 || len(lines) != 2 {
		t.Fatalf("exit %d, %q", r.code, r.stdout)
	}
	byURL := map[string]map[string]any{}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		byURL[m["url"].(string)] = m
	}
	a, m := byURL[s.URL+"/a.txt"], byURL[s.URL+"/missing"]
	if a["exitcode"] != 0.0 || a["size_download"] != 5.0 || a["content_type"] != "" && a["content_type"] != "text/plain" || a["filename_effective"] != filepath.Join(dir, "a.txt") {
		t.Errorf("a.txt: %v", a)
	}
	if m["exitcode"] != 4.0 || !strings.Contains(m["errormsg"].(string), "not found") {
		t.Errorf("missing: %v", m)
	}
	// A device is the file curl names (curl -o /dev/null -w %{filename_effective}).
	if _, err := os.Stat(os.DevNull); err == nil {
		if r := runDeref(t, "", "-s", "-o", os.DevNull, "-w", "%{filename_effective}", s.URL+"/a.txt"); r.code != 0 || r.stdout != os.DevNull {
			t.Errorf("-o %s: exit %d, %q", os.DevNull, r.code, r.stdout)
		}
	}
	r = runDeref(t, "", "-w", "%{url} %{size_download} %{content_type} %%\\n", s.URL+"/a.txt")
	if r.stdout != "hello"+s.URL+"/a.txt 5 text/plain %\n" {
		t.Errorf("-w FORMAT: %q", r.stdout)
	}
	// curl's habit: the status code of a URL, and where its redirects led.
	r = runDeref(t, "", "-w", "%{http_code} %{response_code} %{num_redirects} %{url_effective}\\n", "-o", os.DevNull, s.URL+"/old", "-o", os.DevNull, s.URL+"/missing")
	if r.stdout != "200 200 1 "+s.URL+"/d.txt\n404 404 0 "+s.URL+"/missing\n" {
		t.Errorf("-w %%{http_code}: %q", r.stdout)
	}
	r = runDeref(t, "", "-o", filepath.Join(dir, "f"), "-w", "%{http_code} %{time_starttransfer}", s.URL+"/a.txt")
	if code, start, _ := strings.Cut(r.stdout, " "); code != "200" || start == "0.000000" {
		t.Errorf("-w to a file: %q", r.stdout)
	}
	if r = runDeref(t, "", "-w", "%{http_code}", "http://127.0.0.1:1/"); r.stdout != "000" {
		t.Errorf("-w with no reply: %q", r.stdout)
	}
}

// TestReplyCode: the reply codes -w reports, from the lines servers send.
func TestReplyCode(t *testing.T) {
	for line, want := range map[string]int{
		"HTTP/1.1 404 Not Found": 404, "HTTP/2 200": 200, "226 Transfer complete.": 226, "211-Features:": 211,
		" EPSV": 0, "Content-Length: 200": 0, "200": 0, "2000 x": 0, "abc def": 0, "": 0, "HTTP/1.1": 0,
	} {
		if got := replyCode(line); got != want {
			t.Errorf("%q: %d, want %d", line, got, want)
		}
	}
}

// TestConfigFile: the default config file sets flags, -q skips it, -K adds
// one, the command line wins, and a bad line is an error naming it.
func TestConfigFile(t *testing.T) {
	s, last := headServer(t, "ok")
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	os.MkdirAll(filepath.Join(xdg, "deref"), 0o755)
	os.WriteFile(filepath.Join(xdg, "deref", "config"), []byte("# mine\nuser-agent = \"from config\"\n--referer http://r.example/\nsilent\nmax-redirs=3\nretries 9\n"), 0o644)
	if r := runDeref(t, "", s.URL+"/"); r.code != 0 || last().Get("User-Agent") != "from config" || last().Get("Referer") != "http://r.example/" {
		t.Errorf("config: exit %d %q, %v", r.code, r.stderr, last())
	}
	if r := runDeref(t, "", "-A", "from flag", s.URL+"/"); r.code != 0 || last().Get("User-Agent") != "from flag" {
		t.Errorf("flag over config: %v", last())
	}
	if r := runDeref(t, "", "-q", s.URL+"/"); r.code != 0 || !strings.HasPrefix(last().Get("User-Agent"), "deref/") {
		t.Errorf("-q: %v", last())
	}
	extra := filepath.Join(t.TempDir(), "extra")
	os.WriteFile(extra, []byte("user-agent 'from -K'\n"), 0o644)
	if r := runDeref(t, "", "-K", extra, s.URL+"/"); r.code != 0 || last().Get("User-Agent") != "from -K" {
		t.Errorf("-K: %v", last())
	}
	os.WriteFile(extra, []byte("\nno-such-flag 1\n"), 0o644)
	if r := runDeref(t, "", "-K", extra, s.URL+"/"); r.code != 1 || !strings.Contains(r.stderr, extra+":2: unknown flag") {
		t.Errorf("bad line: exit %d %q", r.code, r.stderr)
	}
}

// TestVersionAndCompletion: --version (-V) names the version and the schemes;
// the completion scripts name the flags, and bash reads its script.
func TestVersionAndCompletion(t *testing.T) {
	// -V too, as curl and wget spell it, in every command.
	for _, args := range [][]string{{"--version"}, {"-V"}, {"crawl", "-V"}, {"mirror", "--version"}, {"serve", "-V"}} {
		r := runDeref(t, "", args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "deref ") || !strings.Contains(r.stdout, "schemes: ") || !strings.Contains(r.stdout, " gopher ") {
			t.Errorf("%q: %+v", args, r)
		}
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		r := runDeref(t, "", "completion", sh)
		if r.code != 0 || !strings.Contains(r.stdout, "only-newer") || !strings.Contains(r.stdout, "ftp-timezone") {
			t.Errorf("completion %s: exit %d", sh, r.code)
			continue
		}
		if bin, err := exec.LookPath(sh); err == nil {
			check := exec.Command(bin, "-n")
			if sh == "fish" {
				check = exec.Command(bin, "--no-execute")
			}
			check.Stdin = strings.NewReader(r.stdout)
			if out, err := check.CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s", sh, err, out)
			}
		}
	}
	if r := runDeref(t, "", "completion", "tcsh"); r.code != 1 {
		t.Errorf("completion tcsh: %+v", r)
	}
}

// A length of time is seconds, or a number and a unit as wget and Go
// write them; nothing negative, not a number or past about 31 years.
func TestParseSeconds(t *testing.T) {
	for v, want := range map[string]float64{
		"0": 0, "1.5": 1.5, "500ms": 0.5, "2m": 120, "1m30s": 90, "1h": 3600, "1d": 86400, "0.5w": 302400, "250us": 0.00025,
	} {
		if got, err := parseSeconds(v); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"", "-1", "-2m", "NaN", "Inf", "+Inf", "1e300", "2000000000", "40000d", "1x", "0x10", "m", "d"} {
		if got, err := parseSeconds(v); err == nil {
			t.Errorf("%q: %v, no error", v, got)
		}
	}
}

// TestWgetSpellings: the wget flags a wget user types, read as deref's
// own or refused saying what to use instead, and what they do.
func TestWgetSpellings(t *testing.T) {
	for _, tt := range []struct {
		cmd  command
		args []string
		chk  func(o *options) bool
	}{
		{cmdGet, []string{"--quiet"}, func(o *options) bool { return o.silent }},
		{cmdGet, []string{"-nv"}, func(o *options) bool { return o.silent && !o.verbose }},
		{cmdMirror, []string{"--no-verbose"}, func(o *options) bool { return o.silent }},
		{cmdGet, []string{"--output-document=f"}, func(o *options) bool { return o.output == "f" && len(o.outputs) == 1 }},
		{cmdGet, []string{"--timestamping"}, func(o *options) bool { return o.onlyNewer }},
		{cmdGet, []string{"-nc"}, func(o *options) bool { return o.skipExisting }},
		{cmdMirror, []string{"--timestamping"}, func(o *options) bool { return o.m.opts.OnlyNewer }},
		{cmdGet, []string{"--max-redirect", "3", "--read-timeout=5"}, func(o *options) bool { return o.maxRedirs == 3 && o.idleTimeout == 5 }},
		{cmdGet, []string{"-x", "http://p.example:3128", "--no-proxy"}, func(o *options) bool { return o.proxy == "-" }},
		{cmdGet, []string{"--no-cache"}, func(o *options) bool {
			return strings.Join(o.headers, "|") == "Cache-Control: no-cache|Pragma: no-cache"
		}},
		{cmdGet, []string{"--progress=dot:mega", "--show-progress", "--method", "GET"}, func(o *options) bool { return !o.silent }},
		{cmdGet, []string{"--directory-prefix", "d"}, func(o *options) bool { return o.outputDir == "d" && o.wgetDir }},
		{cmdCrawl, []string{"-P", "d", "-r", "--recursive"}, func(o *options) bool { return o.c.opts.OutputDir == "d" }},
		// -e robots=off: wgetrc's command, where curl's -e is a referer.
		{cmdCrawl, []string{"-e", "robots=off"}, func(o *options) bool { return o.c.opts.IgnoreRobots && o.referer == "" }},
		{cmdCrawl, []string{"--execute", "robots = on"}, func(o *options) bool { return !o.c.opts.IgnoreRobots }},
		{cmdCrawl, []string{"-e", "http://from.example/a=b"}, func(o *options) bool { return o.referer == "http://from.example/a=b" }},
		{cmdCrawl, []string{"--level", "inf"}, func(o *options) bool { return o.c.opts.MaxDepth == 0 }},
		{cmdCrawl, []string{"-r", "-q"}, func(o *options) bool { return o.silent && !o.noConfig }},
		{cmdGet, []string{"--http-user=a", "--http-password=b", "--compression=gzip", "--debug", "--no-hsts", "--dns-timeout=2"}, func(o *options) bool {
			return o.user == "a" && o.password == "b" && o.compressed && o.verbose
		}},
		// lftp's mirror letters.
		{cmdMirror, []string{"-c", "-e", "-n", "-P", "3", "-r", "-L", "--use-pget-n=2", "--cookie-jar", "j", "--proxy", "http://p.example/"}, func(o *options) bool {
			m := o.m.opts
			return m.Delete && m.OnlyNewer && o.parallel == 3 && m.MaxDepth == 1 && m.FollowSymlinks && o.segments == 2 && o.cookieJar == "j" && o.proxy == "http://p.example/"
		}},
		{cmdMirror, []string{"--only-missing", "--size-range=1k-2M", "--newer-than=now-7days", "--older-than=2020-01-02"}, func(o *options) bool {
			m := o.m.opts
			week := time.Since(m.NewerThan)
			return m.OnlyMissing && m.MinSize == 1024 && m.MaxSize == 2<<20 && week > 167*time.Hour && week < 169*time.Hour &&
				m.OlderThan.Equal(time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC))
		}},
		{cmdMirror, []string{"-i", "a$", "-x", "^b/", "-I", "*.c", "-X", "d*"}, func(o *options) bool {
			r := o.m.opts.Rules
			return len(r) == 4 && r[0].Include && r[0].Regex.String() == "a$" && !r[1].Include && r[1].Regex != nil &&
				r[2].Include && r[2].Glob == "*.c" && !r[3].Include && r[3].Glob == "d*"
		}},
		{cmdCrawl, []string{"-nd", "-x", "--proxy", "http://p.example:3128"}, func(o *options) bool {
			return !o.c.opts.NoDirectories && o.proxy == "http://p.example:3128"
		}},
		{cmdCrawl, []string{"--html-extension", "--http-user=a", "--http-password=b"}, func(o *options) bool {
			return o.c.opts.AdjustExtension && o.user == "a" && o.password == "b"
		}},
		{cmdCrawl, []string{"-Q", "10m", "--https-only", "-L", "--trust-server-names", "--default-page=home.htm", "--protocol-directories"}, func(o *options) bool {
			c := o.c.opts
			return c.Quota == 10<<20 && c.HTTPSOnly && c.RelativeOnly && c.TrustServerNames && c.DefaultPage == "home.htm" && c.ProtocolDirs
		}},
		{cmdCrawl, []string{"-d", "--delete-after", "--retry-on-http-error=404,503"}, func(o *options) bool {
			return o.verbose && o.c.deleteAfter && slices.Equal(o.retryStatuses, []int{404, 503})
		}},
		{cmdCrawl, []string{"--secure-protocol=TLSv1_3", "--no-hsts", "--follow-ftp", "--dns-timeout=3"}, func(o *options) bool {
			return o.tlsMin == tls.VersionTLS13 && o.tlsMax == tls.VersionTLS13
		}},
		{cmdCrawl, []string{"--restrict-file-names=windows,lowercase"}, func(o *options) bool {
			return o.c.opts.FileNames.System == "windows" && o.c.opts.FileNames.Case == "lower"
		}},
		{cmdCrawl, []string{"-rl2", "-np"}, func(o *options) bool { return o.c.opts.MaxDepth == 2 && o.c.scope == "prefix" }},
		{cmdCrawl, []string{"--no-parent"}, func(o *options) bool { return o.c.scope == "prefix" }},
		{cmdCrawl, []string{"-nH", "--cut-dirs=2", "-E"}, func(o *options) bool {
			return o.c.opts.NoHostDirs && o.c.opts.CutDirs == 2 && o.c.opts.AdjustExtension
		}},
		{cmdCrawl, []string{"--no-host-directories", "--cut-dirs", "1"}, func(o *options) bool { return o.c.opts.NoHostDirs && o.c.opts.CutDirs == 1 }},
		// wget's -k converts links; it must not turn TLS verification off.
		{cmdCrawl, []string{"-k"}, func(o *options) bool { return o.c.opts.ConvertLinks && !o.insecure }},
		{cmdCrawl, []string{"--insecure"}, func(o *options) bool { return o.insecure && !o.c.opts.ConvertLinks }},
		{cmdGet, []string{"-k"}, func(o *options) bool { return o.insecure }},
		{cmdMirror, []string{"-l", "3", "-np", "--no-parent"}, func(o *options) bool { return o.m.opts.MaxDepth == 3 }},
		// In deref crawl, -A and -R are wget's accept and reject lists;
		// elsewhere -A is curl's user agent.
		{cmdCrawl, []string{"-nd", "-A", "pdf,*.ps", "-A", "txt", "--reject", "a*,b"}, func(o *options) bool {
			return o.c.opts.NoDirectories && strings.Join(o.c.opts.Accept, "|") == "pdf|*.ps|txt" && strings.Join(o.c.opts.Reject, "|") == "a*|b" && o.userAgent == ""
		}},
		{cmdCrawl, []string{"--no-directories", "--user-agent", "ua/1"}, func(o *options) bool { return o.c.opts.NoDirectories && o.userAgent == "ua/1" }},
		{cmdGet, []string{"-A", "pdf"}, func(o *options) bool { return o.userAgent == "pdf" }},
		// wget's famous line, bundled: -m -k -E -p -np.
		{cmdCrawl, []string{"-mkEpnp"}, func(o *options) bool {
			c := o.c.opts
			return o.c.recursive && c.OnlyNewer && c.MaxDepth == 0 && c.ConvertLinks && c.AdjustExtension && c.PageRequisites && o.c.scope == "prefix" && o.maxTime == 0
		}},
		{cmdCrawl, []string{"-l", "2", "--mirror"}, func(o *options) bool { return o.c.opts.MaxDepth == 0 && o.c.opts.OnlyNewer }},
		{cmdCrawl, []string{"--mirror", "-l", "2", "-rnH", "-np"}, func(o *options) bool {
			return o.c.opts.MaxDepth == 2 && o.c.opts.NoHostDirs && o.c.scope == "prefix"
		}},
		{cmdCrawl, []string{"-N", "--max-time", "9"}, func(o *options) bool { return o.c.opts.OnlyNewer && o.maxTime == 9 && !o.c.recursive }},
		{cmdGet, []string{"-m", "9"}, func(o *options) bool { return o.maxTime == 9 }},
		// More of wget's crawl flags, where curl's letters mean otherwise.
		{cmdCrawl, []string{"-w", "2", "--random-wait", "-t", "3", "-T", "5", "--waitretry=4", "-U", "agent/1"}, func(o *options) bool {
			return o.c.wait == 2 && o.c.opts.RandomWait && o.c.opts.Retries == 2 && o.connectTimeout == 5 && o.idleTimeout == 5 && o.c.waitRetry == 4 && o.userAgent == "agent/1" && o.proxyUser == ""
		}},
		{cmdCrawl, []string{"-t", "inf"}, func(o *options) bool { return o.c.opts.Retries == 1000 }},
		{cmdCrawl, []string{"-nc", "--limit-rate", "200k", "-a", "log"}, func(o *options) bool {
			return o.c.opts.NoClobber && o.limitRate == 200<<10 && o.stderrFile == "log" && o.stderrAppend
		}},
		{cmdCrawl, []string{"--no-clobber", "-o", "log"}, func(o *options) bool { return o.c.opts.NoClobber && o.stderrFile == "log" && !o.stderrAppend }},
		{cmdCrawl, []string{"-mkKEpnp"}, func(o *options) bool { return o.c.opts.BackupConverted && o.c.opts.ConvertLinks && o.c.opts.OnlyNewer }},
		{cmdCrawl, []string{"-H", "-D", "a.example,b.example", "--exclude-domains", "c.a.example", "--header", "X-A: 1"}, func(o *options) bool {
			return o.c.opts.SpanHosts && o.c.domains == "a.example,b.example" && slices.Equal(o.c.opts.ExcludeDomains, []string{"c.a.example"}) && slices.Equal(o.headers, []string{"X-A: 1"})
		}},
		{cmdCrawl, []string{"-I", "/docs,/img", "-X", "/docs/old", "--accept-regex", `\.pdf$`, "--reject-regex=\\?", "--regex-type", "posix", "--ignore-case"}, func(o *options) bool {
			c := o.c.opts
			return slices.Equal(c.IncludeDirs, []string{"/docs", "/img"}) && slices.Equal(c.ExcludeDirs, []string{"/docs/old"}) && c.AcceptRegex.MatchString("a.pdf") && c.RejectRegex.MatchString("a?b") && c.IgnoreCase
		}},
		{cmdGet, []string{"-H", "X-B: 2", "-U", "p:w"}, func(o *options) bool { return slices.Equal(o.headers, []string{"X-B: 2"}) && o.proxyUser == "p:w" }},
		{cmdMirror, []string{"-A", "ua/2"}, func(o *options) bool { return o.userAgent == "ua/2" }},
	} {
		var o options
		if pos, err := parseFlags(tt.cmd, append(tt.args, "u"), &o); err != nil || len(pos) != 1 || !tt.chk(&o) {
			t.Errorf("%s %q: %v %+v", commandNames[tt.cmd], tt.args, err, o)
		}
	}
	for _, tt := range []struct {
		cmd  command
		args string
		why  string
	}{
		{cmdGet, "--recursive", "deref crawl URL"},
		{cmdGet, "--mirror", "deref mirror URL DIR"},
		{cmdGet, "--no-clobber", "-N skips"},
		{cmdGet, "--method=POST", "not POST"},
		{cmdGet, "--body-data=a", "no request body"},
		{cmdGet, "--progress=bars", "not bar or dot"},
		{cmdCrawl, "--execute=timeout=3", `no wgetrc command but robots=off, not "timeout=3"`},
		{cmdGet, "-e timeout=3", "no wgetrc command"},
		{cmdCrawl, "-A [a", "not a pattern"},
		{cmdCrawl, "-mnx", "unknown flag -nx"},
		{cmdCrawl, "-mn", "unknown flag -n"},
		{cmdGet, "--location-trusted", "never after a redirect to another"},
		{cmdCrawl, "--accept-regex=(", "not a regular expression"},
		{cmdCrawl, "--regex-type=glob", "not posix or pcre"},
		{cmdCrawl, "-t -1", "not a number of tries"},
		{cmdCrawl, "--level=deep", "not a count"},
		{cmdGet, "--compression=br", "not auto, gzip or none"},
		{cmdGet, "--no-passive-ftp", "passive FTP only"},
		{cmdMirror, "--size-range=5-1", "MIN is above MAX"},
		{cmdMirror, "--size-range=-", "not MIN-MAX"},
		{cmdMirror, "--newer-than=yesterday", "neither a date"},
		{cmdMirror, "--newer-than=now-3fortnights", "not now-N"},
		{cmdMirror, "-R", "uploads nothing"},
		{cmdMirror, "-x (", "not a regular expression"},
		{cmdMirror, "-X [", "not a glob"},
		{cmdCrawl, "--content-disposition", "never after what the server says"},
		{cmdCrawl, "--post-data=a", "no request body"},
		{cmdCrawl, "--no-passive-ftp", "passive FTP only"},
		{cmdCrawl, "--default-page=a/b", "not one file name"},
		{cmdCrawl, "--secure-protocol=SSLv3", "TLS 1.2 and 1.3"},
		{cmdCrawl, "--restrict-file-names=vms", "not unix, windows"},
		{cmdCrawl, "--dns-timeout=soon", "not a number of seconds"},
	} {
		var o options
		if _, err := parseFlags(tt.cmd, append(strings.Fields(tt.args), "u"), &o); err == nil || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("%s %s: %v", commandNames[tt.cmd], tt.args, err)
		}
	}

	var sent atomic.Value
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		sent.Store(r.Header.Clone())
		w.Header().Set("X-Answer", "yes")
		io.WriteString(w, "the object\n")
	}))
	t.Cleanup(s.Close)
	dir := t.TempDir()
	// --directory-prefix writes a file named after the URL, as wget does.
	r := runDeref(t, "", "-nv", "--directory-prefix", filepath.Join(dir, "d"), s.URL+"/a/x.txt")
	if b, err := os.ReadFile(filepath.Join(dir, "d", "x.txt")); r.code != 0 || err != nil || string(b) != "the object\n" || r.stdout != "" {
		t.Errorf("--directory-prefix: exit %d, %q %v, stdout %q", r.code, b, err, r.stdout)
	}
	// --server-response: the answer's head on standard error, the object
	// on standard output; --no-cache's fields sent.
	r = runDeref(t, "", "--server-response", "--no-cache", s.URL+"/")
	h := sent.Load().(nethttp.Header)
	if r.code != 0 || r.stdout != "the object\n" || !strings.Contains(r.stderr, "HTTP/1.1 200 OK\r\n") || !strings.Contains(r.stderr, "X-Answer: yes") ||
		h.Get("Cache-Control") != "no-cache" || h.Get("Pragma") != "no-cache" {
		t.Errorf("exit %d, stdout %q, stderr %q, sent %v", r.code, r.stdout, r.stderr, h)
	}
	// --append-output adds to the log; --output-file starts it anew.
	log := filepath.Join(dir, "log")
	for _, flag := range []string{"--output-file", "--append-output", "--append-output"} {
		if r := runDeref(t, "", "-v", flag, log, "-o", filepath.Join(dir, "o"), s.URL+"/"); r.code != 0 || r.stderr != "" {
			t.Errorf("%s: exit %d, stderr %q", flag, r.code, r.stderr)
		}
	}
	if b, _ := os.ReadFile(log); strings.Count(string(b), "> GET / HTTP/1.1") != 3 {
		t.Errorf("log after --output-file and two --append-output:\n%s", b)
	}
	os.WriteFile(log, []byte("old\n"), 0o644)
	runDeref(t, "", "-v", "--output-file", log, "-o", filepath.Join(dir, "o"), s.URL+"/")
	if b, _ := os.ReadFile(log); strings.Contains(string(b), "old") || !strings.Contains(string(b), "> GET /") {
		t.Errorf("--output-file kept the old log:\n%s", b)
	}
}

// TestETag: --etag-save writes the server's entity tag, --etag-compare
// sends it back and leaves the copy alone on a 304 (exit 0), and a
// changed object is fetched and its new tag saved.
func TestETag(t *testing.T) {
	var version atomic.Int32
	var conditional atomic.Int32
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.Header.Get("If-None-Match") != "" {
			conditional.Add(1)
		}
		v := version.Load()
		if r.URL.Path != "/none" {
			w.Header().Set("ETag", fmt.Sprintf(`"v%d"`, v))
		}
		nethttp.ServeContent(w, r, "", time.Time{}, strings.NewReader(fmt.Sprintf("version %d\n", v)))
	}))
	t.Cleanup(s.Close)
	dir := t.TempDir()
	tags, out := filepath.Join(dir, "etag"), filepath.Join(dir, "out")
	get := func(args ...string) runResult {
		return runDeref(t, "", append(append([]string{"--etag-compare", tags, "--etag-save", tags}, args...), s.URL+"/o")...)
	}
	// No file yet: no condition; the object and its tag are kept.
	if r := get("-o", out); r.code != 0 || conditional.Load() != 0 {
		t.Fatalf("first run: exit %d, %s, %d conditional", r.code, r.stderr, conditional.Load())
	}
	if b, _ := os.ReadFile(tags); string(b) != "\"v0\"\n" {
		t.Errorf("--etag-save wrote %q", b)
	}
	os.WriteFile(out, []byte("kept"), 0o644)
	for _, args := range [][]string{{"-o", out}, {}} {
		r := get(args...)
		if b, _ := os.ReadFile(out); r.code != 0 || r.stdout != "" || string(b) != "kept" {
			t.Errorf("%q unchanged: exit %d, stdout %q, file %q, %s", args, r.code, r.stdout, b, r.stderr)
		}
	}
	if conditional.Load() != 2 {
		t.Errorf("%d conditional requests, want 2", conditional.Load())
	}
	version.Store(1)
	if r := get("-o", out); r.code != 0 {
		t.Errorf("changed: exit %d, %s", r.code, r.stderr)
	}
	b, _ := os.ReadFile(out)
	tag, _ := os.ReadFile(tags)
	if string(b) != "version 1\n" || string(tag) != "\"v1\"\n" {
		t.Errorf("after the change: file %q, tag %q", b, tag)
	}
	// To standard output too; a server without ETag leaves an empty file.
	if r := runDeref(t, "", "--etag-save", tags, s.URL+"/none"); r.code != 0 || r.stdout != "version 1\n" {
		t.Errorf("no ETag: exit %d, %q", r.code, r.stdout)
	}
	if b, err := os.ReadFile(tags); err != nil || len(b) != 0 {
		t.Errorf("no ETag: %q %v", b, err)
	}
	// A tag with a control character never reaches the request; one tag
	// file does not go with several URLs.
	os.WriteFile(tags, []byte("\"a\rb\"\n"), 0o644)
	if r := runDeref(t, "", "--etag-compare", tags, s.URL+"/o"); r.code != 1 || !strings.Contains(r.stderr, "control character") {
		t.Errorf("control character: exit %d, %s", r.code, r.stderr)
	}
	if r := runDeref(t, "", "--etag-save", tags, "-O", "--output-dir", dir, s.URL+"/a", s.URL+"/b"); r.code != 1 || !strings.Contains(r.stderr, "one URL") {
		t.Errorf("two URLs: exit %d, %s", r.code, r.stderr)
	}
}

// TestDigest: -u answers a Digest challenge (after the Basic curl sends
// too); --digest sends nothing before the challenge, so the password
// never goes out; --anyauth answers a Basic-only server with Basic; a
// wrong password is exit 5. The server checks responses as RFC 7616
// computes them (MD5, qop=auth).
func TestDigest(t *testing.T) {
	const realm, nonce = "deref test", "c2VydmVyIG5vbmNl"
	var mu sync.Mutex
	var seen []string // each request's Authorization scheme, or "-"
	md5hex := func(s string) string { return fmt.Sprintf("%x", md5.Sum([]byte(s))) }
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		auth := r.Header.Get("Authorization")
		scheme, params, _ := strings.Cut(auth, " ")
		mu.Lock()
		seen = append(seen, map[bool]string{true: "-", false: scheme}[auth == ""])
		mu.Unlock()
		if r.URL.Path == "/basic" {
			if u, p, ok := r.BasicAuth(); ok && u == "joe" && p == "se:cret" {
				io.WriteString(w, "basic ok")
				return
			}
			w.Header().Set("WWW-Authenticate", `Basic realm="b"`)
			w.WriteHeader(401)
			return
		}
		if scheme == "Digest" {
			f := map[string]string{}
			for _, kv := range strings.Split(params, ", ") {
				k, v, _ := strings.Cut(kv, "=")
				f[k] = strings.Trim(v, `"`)
			}
			ha1 := md5hex("joe:" + realm + ":se:cret")
			ha2 := md5hex(r.Method + ":" + r.URL.RequestURI())
			want := md5hex(ha1 + ":" + nonce + ":" + f["nc"] + ":" + f["cnonce"] + ":auth:" + ha2)
			_, err := r.Cookie("session")
			if f["username"] == "joe" && f["uri"] == r.URL.RequestURI() && f["qop"] == "auth" && f["opaque"] == "op" && f["response"] == want &&
				(r.URL.Path != "/session" || err == nil) {
				io.WriteString(w, "digest ok")
				return
			}
		}
		if r.URL.Path == "/session" {
			// A server that ties its nonce to a session the challenge begins.
			nethttp.SetCookie(w, &nethttp.Cookie{Name: "session", Value: "s1"})
		}
		w.Header().Add("WWW-Authenticate", `Basic realm="`+realm+`"`)
		w.Header().Add("WWW-Authenticate", `Digest realm="`+realm+`", nonce="`+nonce+`", qop="auth", opaque="op"`)
		w.WriteHeader(401)
	}))
	t.Cleanup(s.Close)
	for _, tt := range []struct {
		args  []string
		path  string
		out   string
		code  int
		sends string
	}{
		{nil, "/d?x=1", "digest ok", 0, "Basic Digest"},
		{[]string{"--digest"}, "/d?x=1", "digest ok", 0, "- Digest"},
		{[]string{"--anyauth"}, "/d", "digest ok", 0, "- Digest"},
		{[]string{"--anyauth"}, "/basic", "basic ok", 0, "- Basic"},
		{[]string{"--digest"}, "/basic", "", 5, "-"},
		{[]string{"--digest", "--basic"}, "/basic", "basic ok", 0, "Basic"},
		{[]string{"-u", "joe:wrong", "--digest"}, "/d", "", 5, "- Digest"},
		// With a cookie jar, the cookie the challenge set goes with the answer.
		{[]string{"--digest", "-c", filepath.Join(t.TempDir(), "jar")}, "/session", "digest ok", 0, "- Digest"},
	} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		args := append([]string{"-u", "joe:se:cret"}, tt.args...)
		r := runDeref(t, "", append(args, s.URL+tt.path)...)
		mu.Lock()
		sends := strings.Join(seen, " ")
		mu.Unlock()
		if r.code != tt.code || r.stdout != tt.out || sends != tt.sends {
			t.Errorf("%q %s: exit %d, %q, sent %q (want %d, %q, %q); %s", tt.args, tt.path, r.code, r.stdout, sends, tt.code, tt.out, tt.sends, r.stderr)
		}
	}
	// -v hides the Digest field as it hides Basic.
	r := runDeref(t, "", "-v", "--digest", "-u", "joe:se:cret", s.URL+"/d")
	if r.code != 0 || !strings.Contains(r.stderr, "> Authorization: xxxxx") || strings.Contains(r.stderr, "response=") {
		t.Errorf("trace: %s", r.stderr)
	}
}

// TestSOCKSFlags: curl's --socks5-hostname (and --socks5) is -x
// socks5h://: the proxy gets the host's name, never an address deref
// looked up; port 1080 unless given; SOCKS4 is refused.
func TestSOCKSFlags(t *testing.T) {
	for args, want := range map[string]string{
		"--socks5-hostname p.example":       "socks5h://p.example:1080",
		"--socks5-hostname p.example:9050":  "socks5h://p.example:9050",
		"--socks5 [::1]":                    "socks5://[::1]:1080",
		"-x http://h:1 --socks5-hostname q": "socks5h://q:1080",
	} {
		var o options
		if _, err := parseFlags(cmdGet, append(strings.Fields(args), "u"), &o); err != nil || o.proxy != want {
			t.Errorf("%s: %q %v, want %q", args, o.proxy, err, want)
		}
	}
	for _, args := range []string{"--socks4 h:1", "--socks4a h", "--socks5-hostname http://h/"} {
		var o options
		if _, err := parseFlags(cmdGet, append(strings.Fields(args), "u"), &o); err == nil {
			t.Errorf("%s accepted", args)
		}
	}
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) { io.WriteString(w, "through") }))
	t.Cleanup(s.Close)
	sp, err := socks5.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	r := runDeref(t, "", "--socks5-hostname", sp.Addr(), "http://localhost:"+port+"/")
	if tg := sp.Targets(); r.code != 0 || r.stdout != "through" || len(tg) != 1 || tg[0] != "localhost:"+port {
		t.Errorf("exit %d, %q, the proxy was asked for %q; %s", r.code, r.stdout, tg, r.stderr)
	}
}

// TestInterface: --interface (and wget's --bind-address) connects from
// the address given, an interface's, or a host's; an interface that is
// not there is refused before anything is fetched.
func TestInterface(t *testing.T) {
	probe, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skip("no 127.0.0.2 to connect from here:", err)
	}
	probe.Close()
	var from atomic.Value
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		from.Store(host)
		io.WriteString(w, "ok")
	}))
	t.Cleanup(s.Close)
	for _, args := range [][]string{{"--interface", "127.0.0.2"}, {"--bind-address=127.0.0.2"}, {"--interface", "host!127.0.0.2"}} {
		from.Store("")
		if r := runDeref(t, "", append(args, s.URL+"/")...); r.code != 0 || r.stdout != "ok" || from.Load() != "127.0.0.2" {
			t.Errorf("%q: exit %d, %q, connected from %q; %s", args, r.code, r.stdout, from.Load(), r.stderr)
		}
	}
	if lo, err := net.InterfaceByName("lo"); err == nil && lo.Flags&net.FlagLoopback != 0 {
		from.Store("")
		if r := runDeref(t, "", "--interface", "if!lo", s.URL+"/"); r.code != 0 || from.Load() != "127.0.0.1" {
			t.Errorf("if!lo: exit %d, connected from %q; %s", r.code, from.Load(), r.stderr)
		}
	}
	if r := runDeref(t, "", "--interface", "if!no-such-interface0", s.URL+"/"); r.code != 1 || !strings.Contains(r.stderr, "--interface") {
		t.Errorf("a missing interface: exit %d, %s", r.code, r.stderr)
	}
}

// TestSpider: wget's --spider asks with HEAD, prints nothing, and says by
// its exit code whether each URL is there.
func TestSpider(t *testing.T) {
	var methods atomic.Value
	methods.Store("")
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		methods.Store(methods.Load().(string) + r.Method + " ")
		if r.URL.Path == "/gone" {
			nethttp.NotFound(w, r)
			return
		}
		io.WriteString(w, "page")
	}))
	t.Cleanup(s.Close)
	if r := runDeref(t, "", "--spider", s.URL+"/a", s.URL+"/b"); r.code != 0 || r.stdout != "" || methods.Load() != "HEAD HEAD " {
		t.Errorf("there: exit %d, stdout %q, methods %q, %s", r.code, r.stdout, methods.Load(), r.stderr)
	}
	if r := runDeref(t, "", "--spider", s.URL+"/gone"); r.code != 4 || r.stdout != "" {
		t.Errorf("gone: exit %d, stdout %q", r.code, r.stdout)
	}
	// deref crawl keeps nothing unless asked: --spider is taken as it is.
	if r := runDeref(t, "", "crawl", "--spider", "-s", s.URL+"/a"); r.code != 0 || r.stdout != "" {
		t.Errorf("crawl --spider: exit %d, stdout %q, %s", r.code, r.stdout, r.stderr)
	}
}

// TestSkipExisting: --skip-existing (wget's -nc) leaves a file that is
// there as it is and asks the server nothing; a missing one is fetched.
func TestSkipExisting(t *testing.T) {
	var asked atomic.Int32
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		asked.Add(1)
		io.WriteString(w, "new")
	}))
	t.Cleanup(s.Close)
	dir := t.TempDir()
	kept := filepath.Join(dir, "kept.txt")
	os.WriteFile(kept, []byte("mine"), 0o644)
	r := runDeref(t, "", "--skip-existing", "-o", kept, s.URL+"/kept.txt")
	if b, _ := os.ReadFile(kept); r.code != 0 || string(b) != "mine" || asked.Load() != 0 {
		t.Errorf("there: exit %d, file %q, %d requests; %s", r.code, b, asked.Load(), r.stderr)
	}
	r = runDeref(t, "", "-nc", "-O", "--output-dir", dir, s.URL+"/kept.txt", s.URL+"/fresh.txt")
	b, _ := os.ReadFile(kept)
	fresh, _ := os.ReadFile(filepath.Join(dir, "fresh.txt"))
	if r.code != 0 || string(b) != "mine" || string(fresh) != "new" || asked.Load() != 1 {
		t.Errorf("-nc -O: exit %d, kept %q, fresh %q, %d requests; %s", r.code, b, fresh, asked.Load(), r.stderr)
	}
	if r := runDeref(t, "", "--skip-existing", s.URL+"/x"); r.code != 1 || !strings.Contains(r.stderr, "goes with -o or -O") {
		t.Errorf("to standard output: exit %d, %s", r.code, r.stderr)
	}
}

// Every short name -h, the manual and the completions show for a command
// is the flag the command takes it for: deref crawl's -K is wget's
// --backup-converted, and its -q wget's --quiet, not --config and
// --disable.
func TestShownShortNames(t *testing.T) {
	for _, cmd := range []command{cmdGet, cmdMirror, cmdCrawl, cmdServe} {
		shown := map[string]string{}
		for _, f := range visibleFlags(cmd) {
			if f.short == "" {
				continue
			}
			if g := lookup(cmd, f.short, true); g == nil || g.long != f.long {
				t.Errorf("command %d shows -%s for --%s", cmd, f.short, f.long)
			}
			if other, ok := shown[f.short]; ok {
				t.Errorf("command %d shows -%s for --%s and --%s", cmd, f.short, other, f.long)
			}
			shown[f.short] = f.long
		}
	}
	var b strings.Builder
	writeHelp(&b, cmdCrawl, "")
	if strings.Contains(b.String(), "-K, --config") || strings.Contains(b.String(), "-q, --disable") || !strings.Contains(b.String(), "-K, --backup-converted") {
		t.Errorf("deref crawl -h:\n%s", b.String())
	}
}

// TestCurlLetters: curl's -i (--include) before a URL or last, where
// -i FILE reads a list of URLs (a file that is there, a name without a
// scheme); -n (--netrc); -l (--list-only) prints a listing's names.
func TestCurlLetters(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("X-Path", r.URL.Path)
		io.WriteString(w, "body of "+r.URL.Path+"\n")
	}))
	defer s.Close()
	for _, args := range [][]string{{"-i", s.URL + "/a"}, {"-si", s.URL + "/a"}, {s.URL + "/a", "-i"}} {
		r := runDeref(t, "", args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "HTTP/1.1 200 OK\r\n") || !strings.Contains(r.stdout, "X-Path: /a\r\n") || !strings.HasSuffix(r.stdout, "\r\n\r\nbody of /a\n") {
			t.Errorf("%q: exit %d, %q; %s", args, r.code, r.stdout, r.stderr)
		}
	}
	dir := t.TempDir()
	list := filepath.Join(dir, "urls")
	os.WriteFile(list, []byte(s.URL+"/b\n"), 0o644)
	if r := runDeref(t, "", "-i", list); r.code != 0 || r.stdout != "body of /b\n" {
		t.Errorf("-i FILE: exit %d, %q; %s", r.code, r.stdout, r.stderr)
	}
	var o options
	if _, err := parseFlags(cmdGet, []string{"-n", "-l", "u"}, &o); err != nil || !o.netrc || !o.listOnly {
		t.Errorf("-n -l: %v %+v", err, o.netrc)
	}
	for _, name := range []string{"b.txt", "a.txt", "sub"} {
		os.Mkdir(filepath.Join(dir, "d"), 0o755)
		os.WriteFile(filepath.Join(dir, "d", name), nil, 0o644)
	}
	u := "file://" + filepath.ToSlash(filepath.Join(dir, "d")) + "/"
	if runtime.GOOS == "windows" {
		u = "file:///" + filepath.ToSlash(filepath.Join(dir, "d")) + "/"
	}
	if r := runDeref(t, "", "-l", u); r.code != 0 || r.stdout != "a.txt\nb.txt\nsub\n" {
		t.Errorf("-l: exit %d, %q; %s", r.code, r.stdout, r.stderr)
	}
}

// TestEveryFlagShown: every flag a command's parser takes is in its -h,
// the manual and the completion scripts, or is refused whatever its
// value (-d and --data-urlencode worked, named in -h's prose only).
func TestEveryFlagShown(t *testing.T) {
	man := manPage()
	scripts := bashCompletion() + zshCompletion() + fishCompletion()
	for _, c := range []struct {
		name string
		cmd  command
	}{{"deref", cmdGet}, {"deref mirror", cmdMirror}, {"deref crawl", cmdCrawl}, {"deref serve", cmdServe}} {
		var help strings.Builder
		writeHelp(&help, c.cmd, "")
		spelled := strings.Join(spellings(c.cmd), " ") + " "
		for _, f := range flagTable {
			if f.cmds&c.cmd == 0 || isRefused(f) {
				continue
			}
			if !strings.Contains(help.String(), "--"+f.long+" ") && !strings.Contains(help.String(), "--"+f.long+"\n") {
				t.Errorf("%s -h lacks --%s", c.name, f.long)
			}
			if !strings.Contains(man, `\-\-`+strings.ReplaceAll(f.long, "-", `\-`)+`\fR`) {
				t.Errorf("the manual lacks --%s", f.long)
			}
			if !strings.Contains(spelled, "--"+f.long+" ") || !strings.Contains(scripts, f.long) {
				t.Errorf("%s's completions lack --%s", c.name, f.long)
			}
		}
	}
	if r := runDeref(t, "", "-h"); !strings.Contains(r.stdout, "-d, --data DATA") || !strings.Contains(r.stdout, "--data-urlencode DATA") {
		t.Errorf("deref -h:\n%s", r.stdout)
	}
}
