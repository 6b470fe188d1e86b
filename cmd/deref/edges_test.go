package main

import (
	"bufio"
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
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

	"github.com/urlderef/deref/internal/testserver"
)

// noRanges serves body with 200 whatever Range asks, as servers without
// byte ranges do, and counts its requests.
func noRanges(t *testing.T, body string) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		n.Add(1)
		w.Header().Set("Content-Length", "10")
		w.Write([]byte(body))
	}))
	t.Cleanup(s.Close)
	return s, &n
}

// TestResumeIgnoredByServer: -C 6 to standard output against a server that
// answers the range with the whole object prints the object from byte 6.
func TestResumeIgnoredByServer(t *testing.T) {
	s, _ := noRanges(t, "0123456789")
	r := runDeref(t, "", "-C", "6", s.URL+"/obj")
	if r.code != 0 || r.stdout != "6789" {
		t.Errorf("-C 6: exit %d, %q, %s", r.code, r.stdout, r.stderr)
	}
	r = runDeref(t, "", "-C", "20", s.URL+"/obj")
	if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, "beyond the end") {
		t.Errorf("-C 20: exit %d, %q, %s", r.code, r.stdout, r.stderr)
	}
}

// TestResumeFileIgnoredByServer: -C - of a file against a server that sends
// the whole object again starts over, and the file ends whole, never
// spliced onto the old bytes; the old copy stays under its name until the
// new one is complete.
func TestResumeFileIgnoredByServer(t *testing.T) {
	s, _ := noRanges(t, "0123456789")
	dir := t.TempDir()
	out := filepath.Join(dir, "obj")
	os.WriteFile(out, []byte("012345"), 0o644)
	r := runDeref(t, "", "-C", "-", "-o", out, s.URL+"/obj")
	if b, _ := os.ReadFile(out); r.code != 0 || string(b) != "0123456789" {
		t.Errorf("-C - -o: exit %d, file %q, %s", r.code, b, r.stderr)
	}
	if _, err := os.Stat(out + ".part"); !os.IsNotExist(err) {
		t.Errorf("a .part file is left: %v", err)
	}
}

// TestChecksBeforeConnecting: flag combinations that cannot work are
// refused before any connection, in one line and a pointer to the help.
func TestChecksBeforeConnecting(t *testing.T) {
	s, n := noRanges(t, "0123456789")
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-o", filepath.Join(dir, "f"), "-C", "6", s.URL + "/obj"},
		{"-O", "-C", "6", s.URL + "/obj"},
		{"-C", "six", s.URL + "/obj"},
		{"-I", "-o", filepath.Join(dir, "g"), s.URL + "/obj"},
		{"-o", filepath.Join(dir, "h"), s.URL + "/a", s.URL + "/b"},
		{"-o", filepath.Join(dir, "i"), s.URL + "/a", "-o", filepath.Join(dir, "j"), "-o", filepath.Join(dir, "k"), s.URL + "/b"},
		{"--parallel", "2", "-o", "-", s.URL + "/a", "-o", filepath.Join(dir, "l"), s.URL + "/b"},
		{"-D", filepath.Join(dir, "heads"), "--parallel", "2", "-O", "--output-dir", dir, s.URL + "/a", s.URL + "/b"},
		{"-r", "-0", s.URL + "/obj"},
		{"-r", "--5", s.URL + "/obj"},
		{"-r", "1-2,4-5", s.URL + "/obj"},
		{"-r", "5-2", s.URL + "/obj"},
		{"-r", "two", s.URL + "/obj"},
		{"-r", "0-1", "-C", "3", s.URL + "/obj"},
		{"-r", "0-1", "-O", s.URL + "/obj"},
		{"-r", "0-1", "--warc-file", filepath.Join(dir, "w"), s.URL + "/obj"},
		{"--parallel", "4", s.URL + "/a", s.URL + "/b"},
	} {
		r := runDeref(t, "", args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 1 || len(lines) != 2 || lines[1] != "see 'deref -h'" {
			t.Errorf("%q: exit %d, %q", args, r.code, r.stderr)
		}
	}
	if got := n.Load(); got != 0 {
		t.Errorf("%d requests made for refused flag combinations", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files left: %v", entries)
	}
}

// TestOutputPerURL: several -o pair with the URLs in order, as curl
// pairs them, the -i list's URLs after the command line's, with
// --parallel too; "-" is standard output; a config file's -o gives way
// to the command line's.
func TestOutputPerURL(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		io.WriteString(w, "object "+r.URL.Path)
	}))
	t.Cleanup(s.Close)
	dir := t.TempDir()
	at := func(n string) string { return filepath.Join(dir, n) }
	check := func(files map[string]string) {
		t.Helper()
		for n, want := range files {
			if b, err := os.ReadFile(at(n)); err != nil || string(b) != want {
				t.Errorf("%s: %q %v, want %q", n, b, err, want)
			}
		}
	}
	r := runDeref(t, "", "-o", at("A"), s.URL+"/a", "-o", at("B"), s.URL+"/b")
	if r.code != 0 || r.stdout != "" || r.stderr != "" {
		t.Errorf("exit %d, %q, %s", r.code, r.stdout, r.stderr)
	}
	check(map[string]string{"A": "object /a", "B": "object /b"})

	list := s.URL + "/d\n" + s.URL + "/e\n"
	r = runDeref(t, list, "--parallel", "3", "-i", "-", "-o", at("C"), "-o", at("D"), "-o", at("E"), s.URL+"/c")
	if r.code != 0 || r.stderr != "" {
		t.Errorf("-i --parallel: exit %d, %s", r.code, r.stderr)
	}
	check(map[string]string{"C": "object /c", "D": "object /d", "E": "object /e"})

	r = runDeref(t, "", "-o", "-", s.URL+"/f", "-o", at("G"), s.URL+"/g")
	if r.code != 0 || r.stdout != "object /f" {
		t.Errorf("-o -: exit %d, %q, %s", r.code, r.stdout, r.stderr)
	}
	check(map[string]string{"G": "object /g"})

	config := at("config")
	os.WriteFile(config, []byte("output = "+at("fromconfig")+"\n"), 0o644)
	r = runDeref(t, "", "-K", config, "-o", at("H"), s.URL+"/h")
	if _, err := os.Stat(at("fromconfig")); r.code != 0 || !os.IsNotExist(err) {
		t.Errorf("-K with -o: exit %d, %s, the config's file: %v", r.code, r.stderr, err)
	}
	check(map[string]string{"H": "object /h"})
}

// TestRange: -r FIRST-LAST asks an HTTP server for those bytes only (a
// Range with its last byte) and prints them; from a server that ignores
// ranges, deref skips and stops itself; FIRST- is the rest; -o FILE gets
// the range, and a failure leaves nothing in the folder.
func TestRange(t *testing.T) {
	var asked atomic.Value
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		asked.Store(r.Header.Get("Range"))
		if r.URL.Path == "/missing" {
			nethttp.NotFound(w, r)
			return
		}
		nethttp.ServeContent(w, r, "obj", time.Time{}, strings.NewReader("0123456789"))
	}))
	t.Cleanup(s.Close)
	r := runDeref(t, "", "-r", "2-5", s.URL+"/obj")
	if r.code != 0 || r.stdout != "2345" || asked.Load() != "bytes=2-5" {
		t.Errorf("-r 2-5: exit %d, %q, asked %q, %s", r.code, r.stdout, asked.Load(), r.stderr)
	}
	ignoring, _ := noRanges(t, "0123456789")
	for rng, want := range map[string]string{"2-5": "2345", "0-2": "012", "3-": "3456789", "8-20": "89"} {
		if r := runDeref(t, "", "-r", rng, ignoring.URL+"/obj"); r.code != 0 || r.stdout != want {
			t.Errorf("-r %s, the range ignored: exit %d, %q, want %q, %s", rng, r.code, r.stdout, want, r.stderr)
		}
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "part")
	r = runDeref(t, "", "-r", "4-6", "-o", out, s.URL+"/obj")
	if b, err := os.ReadFile(out); r.code != 0 || string(b) != "456" {
		t.Errorf("-r -o: exit %d, %q %v, %s", r.code, b, err, r.stderr)
	}
	r = runDeref(t, "", "-r", "4-6", "-o", filepath.Join(dir, "never"), s.URL+"/missing")
	if entries, _ := os.ReadDir(dir); r.code != 4 || len(entries) != 1 {
		t.Errorf("-r -o of a missing object: exit %d, files %v", r.code, entries)
	}
	// -r -N: the last N bytes, after asking the size; all of a smaller
	// object; from a server that ignores ranges too, and from a file.
	for rng, want := range map[string]string{"-3": "789", "-10": "0123456789", "-50": "0123456789"} {
		if r := runDeref(t, "", "-r", rng, s.URL+"/obj"); r.code != 0 || r.stdout != want {
			t.Errorf("-r %s: exit %d, %q, want %q, %s", rng, r.code, r.stdout, want, r.stderr)
		}
		if rng == "-50" && asked.Load() != "bytes=0-9" {
			t.Errorf("-r -50 asked for %q", asked.Load())
		}
		if r := runDeref(t, "", "-r", rng, ignoring.URL+"/obj"); r.code != 0 || r.stdout != want {
			t.Errorf("-r %s, the range ignored: exit %d, %q, want %q, %s", rng, r.code, r.stdout, want, r.stderr)
		}
	}
	local := filepath.Join(dir, "local.txt")
	os.WriteFile(local, []byte("0123456789"), 0o644)
	out = filepath.Join(dir, "tail")
	if r := runDeref(t, "", "-r", "-4", "-o", out, "file://"+filepath.ToSlash(local)); r.code != 0 {
		t.Errorf("-r -4 -o of a file: URL: exit %d, %s", r.code, r.stderr)
	} else if b, _ := os.ReadFile(out); string(b) != "6789" {
		t.Errorf("-r -4 -o of a file: URL: %q", b)
	}
}

// TestCompressedFlag: --compressed asks for gzip, and standard output and
// -o get the object decoded; without it deref asks for no coding.
func TestCompressedFlag(t *testing.T) {
	text := strings.Repeat("words to compress\n", 100)
	var asked atomic.Value
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		asked.Store(r.Header.Get("Accept-Encoding"))
		if r.Header.Get("Accept-Encoding") != "gzip" {
			io.WriteString(w, text)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, text)
		zw.Close()
	}))
	t.Cleanup(s.Close)
	r := runDeref(t, "", "--compressed", s.URL+"/t")
	if r.code != 0 || r.stdout != text || asked.Load() != "gzip" {
		t.Errorf("--compressed: exit %d, %d bytes, asked %q, %s", r.code, len(r.stdout), asked.Load(), r.stderr)
	}
	out := filepath.Join(t.TempDir(), "t")
	r = runDeref(t, "", "--compressed", "-o", out, s.URL+"/t")
	if b, _ := os.ReadFile(out); r.code != 0 || string(b) != text {
		t.Errorf("--compressed -o: exit %d, %d bytes, %s", r.code, len(b), r.stderr)
	}
	if r = runDeref(t, "", s.URL+"/t"); r.stdout != text || asked.Load() != "" {
		t.Errorf("without --compressed: %d bytes, asked %q", len(r.stdout), asked.Load())
	}
}

// TestOutputDirMade: -i with -O into a missing --output-dir makes the
// folder once and fetches every URL into it.
func TestOutputDirMade(t *testing.T) {
	s, _ := noRanges(t, "0123456789")
	dir := filepath.Join(t.TempDir(), "many", "levels")
	list := s.URL + "/a\n" + s.URL + "/b\n" + s.URL + "/c\n"
	r := runDeref(t, list, "-i", "-", "-O", "--output-dir", dir)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, n := range []string{"a", "b", "c"} {
		if b, err := os.ReadFile(filepath.Join(dir, n)); err != nil || string(b) != "0123456789" {
			t.Errorf("%s: %q %v", n, b, err)
		}
	}
	// A folder that cannot be made fails once, not once per URL.
	file := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(file, nil, 0o644)
	r = runDeref(t, list, "-i", "-", "-O", "--output-dir", filepath.Join(file, "sub"))
	if r.code != 8 || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("unmakeable folder: exit %d, %q", r.code, r.stderr)
	}
}

// rawHTTP answers every request on a loopback port with reply, and
// records each request head as it came.
func rawHTTP(t *testing.T, reply string) (addr string, heads func() []string) {
	var mu sync.Mutex
	var got []string
	ln, err := testserver.Listen(func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for {
			var head strings.Builder
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				head.WriteString(line)
				if line == "\r\n" {
					break
				}
			}
			mu.Lock()
			got = append(got, head.String())
			mu.Unlock()
			c.Write([]byte(reply))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// TestHeadAndTrace: -I sends HEAD and reads no body; -I --json prints one
// JSON object; -v shows the connection before the request, and the header
// lines in the order they went over the wire each way.
func TestHeadAndTrace(t *testing.T) {
	const reply = "HTTP/1.1 200 OK\r\nZeta: last-alphabetically\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nAlpha: first-alphabetically\r\nLast-Modified: Thu, 02 Jan 2020 03:04:05 GMT\r\n\r\n"
	addr, heads := rawHTTP(t, reply)
	u := "http://" + addr + "/obj.txt"

	r := runDeref(t, "", "-I", "--json", u)
	var meta map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &meta); r.code != 0 || err != nil || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("-I --json: exit %d, %v, %q %s", r.code, err, r.stdout, r.stderr)
	}
	if meta["kind"] != "file" || meta["size"] != 5.0 || meta["type"] != "text/plain" || meta["modified"] != "2020-01-02T03:04:05Z" || meta["url"] != u {
		t.Errorf("-I --json: %v", meta)
	}
	if h := heads(); len(h) != 1 || !strings.HasPrefix(h[0], "HEAD /obj.txt HTTP/1.1\r\n") {
		t.Errorf("-I sent %q", h)
	}

	r = runDeref(t, "", "-v", "-I", u)
	var trace []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if l != "" {
			trace = append(trace, l)
		}
	}
	sent := heads()[1]
	var want []string
	want = append(want, "* connecting to "+addr, "* connected to "+addr)
	if len(trace) > 2 && strings.HasPrefix(trace[2], "* local address 127.0.0.1:") {
		trace = slices.Delete(trace, 2, 3) // its port is the system's choice
	}
	for _, l := range strings.Split(strings.TrimSuffix(sent, "\r\n\r\n"), "\r\n") {
		want = append(want, "> "+l)
	}
	for _, l := range strings.Split(strings.TrimSuffix(reply, "\r\n\r\n"), "\r\n") {
		want = append(want, "< "+l)
	}
	if strings.Join(trace, "\n") != strings.Join(want, "\n") {
		t.Errorf("-v:\n%s\nwant:\n%s", strings.Join(trace, "\n"), strings.Join(want, "\n"))
	}
}

// TestErrorLines: every error is one line naming the URL, in plain words,
// and server text reaches the terminal with its control characters
// escaped, in errors, traces and listings alike.
func TestErrorLines(t *testing.T) {
	addr, _ := rawHTTP(t, "HTTP/1.1 404 Not\x1b]0;pwned\x07Found\r\nContent-Length: 0\r\n\r\n")
	u := "http://" + addr + "/x"
	r := runDeref(t, "", "-v", u)
	if r.code != 4 || strings.ContainsAny(r.stderr, "\x1b\x07") || !strings.Contains(r.stderr, `Not\x1b]0;pwned\x07Found`) || strings.Count(r.stderr, `\x1b]0;pwned`) != 2 {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if last := strings.Split(strings.TrimSpace(r.stderr), "\n"); !strings.HasPrefix(last[len(last)-1], "deref: get "+u+": ") {
		t.Errorf("the error line does not name the URL: %q", last[len(last)-1])
	}

	// A trickling server and --max-time: plain words, and the URL.
	slow, _ := rawHTTP(t, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nx")
	r = runDeref(t, "", "--max-time", "0.3", "http://"+slow+"/s")
	if r.code != 6 || r.stderr != "deref: get http://"+slow+"/s: timed out after 0.3 s (--max-time)\n" &&
		r.stderr != "deref: read http://"+slow+"/s: timed out after 0.3 s (--max-time)\n" {
		t.Errorf("--max-time: exit %d, %q", r.code, r.stderr)
	}

	// A write error on standard output names the URL.
	var errb strings.Builder
	ok, _ := rawHTTP(t, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	code := run([]string{"http://" + ok + "/w"}, strings.NewReader(""), failingWriter{}, &errb)
	if code != 8 || !strings.Contains(errb.String(), "http://"+ok+"/w: ") || strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("write error: exit %d, %q", code, errb.String())
	}
}

// TestListingEscaped: names in a listing printed as text have their
// control characters escaped; --json has them as JSON escapes; the raw
// listing is the server's bytes.
func TestListingEscaped(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "evil\x1b[2Jname"), nil, 0o644); err != nil {
		t.Skip("this file system takes no ESC in names")
	}
	r := runDeref(t, "", "file://"+filepath.ToSlash(dir)+"/")
	if r.code != 0 || strings.Contains(r.stdout, "\x1b") || !strings.Contains(r.stdout, `evil\x1b[2Jname`) {
		t.Errorf("listing: %q", r.stdout)
	}
	r = runDeref(t, "", "--json", "file://"+filepath.ToSlash(dir)+"/")
	if r.code != 0 || strings.Contains(r.stdout, "\x1b") || !strings.Contains(r.stdout, `evil\u001b[2Jname`) {
		t.Errorf("--json: %q", r.stdout)
	}
}

// TestHTTPSTraceOrder: over HTTPS too, -v shows the TLS connection before
// the request, and the response's header lines in the order they came.
func TestHTTPSTraceOrder(t *testing.T) {
	s := httptest.NewTLSServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		conn, bw, _ := w.(nethttp.Hijacker).Hijack()
		bw.WriteString("HTTP/1.1 200 OK\r\nZeta: 1\r\nContent-Length: 2\r\nAlpha: 2\r\n\r\nok")
		bw.Flush()
		conn.Close()
	}))
	t.Cleanup(s.Close)
	r := runDeref(t, "", "-k", "-v", s.URL+"/x")
	tls := strings.Index(r.stderr, "* TLS ")
	get := strings.Index(r.stderr, "> GET /x HTTP/1.1")
	zeta, alpha := strings.Index(r.stderr, "< Zeta: 1"), strings.Index(r.stderr, "< Alpha: 2")
	if r.code != 0 || r.stdout != "ok" || tls < 0 || get < tls || zeta < get || alpha < zeta {
		t.Errorf("exit %d %q, trace:\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestCACert: a server whose certificate the system does not know is
// refused, and reached with --cacert naming its certificate (wget's
// --ca-certificate too); a --cacert file without one is a usage error.
func TestCACert(t *testing.T) {
	s := httptest.NewTLSServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) { io.WriteString(w, "trusted") }))
	t.Cleanup(s.Close)
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}), 0o644)
	if r := runDeref(t, "", s.URL+"/x"); r.code == 0 || r.stdout != "" {
		t.Errorf("unknown certificate: exit %d, %q", r.code, r.stdout)
	}
	for _, flag := range []string{"--cacert", "--ca-certificate"} {
		if r := runDeref(t, "", flag, ca, s.URL+"/x"); r.code != 0 || r.stdout != "trusted" {
			t.Errorf("%s: exit %d, %q, %s", flag, r.code, r.stdout, r.stderr)
		}
	}
	empty := filepath.Join(dir, "empty.pem")
	os.WriteFile(empty, []byte("no certificate here\n"), 0o644)
	if r := runDeref(t, "", "--cacert", empty, s.URL+"/x"); r.code != 1 || !strings.Contains(r.stderr, "holds no PEM certificate") {
		t.Errorf("--cacert without a certificate: exit %d, %s", r.code, r.stderr)
	}
	// curl's --capath: the certificates of a folder's files; a folder
	// without any is a usage error.
	if r := runDeref(t, "", "--capath", dir, s.URL+"/x"); r.code != 0 || r.stdout != "trusted" {
		t.Errorf("--capath: exit %d, %q, %s", r.code, r.stdout, r.stderr)
	}
	os.Remove(ca)
	if r := runDeref(t, "", "--capath", dir, s.URL+"/x"); r.code != 1 || !strings.Contains(r.stderr, "holds no PEM certificate") {
		t.Errorf("--capath without a certificate: exit %d, %s", r.code, r.stderr)
	}
}

// TestWgetPassword: wget's --user and --password log in together; a
// --password alone, or beside a --user that names one, is a usage error.
func TestWgetPassword(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "wonder" {
			w.WriteHeader(401)
			return
		}
		io.WriteString(w, "welcome")
	}))
	t.Cleanup(s.Close)
	if r := runDeref(t, "", "--no-netrc", "--user=alice", "--password=wonder", s.URL+"/x"); r.code != 0 || r.stdout != "welcome" {
		t.Errorf("--user --password: exit %d, %q, %s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"--password=wonder"}, {"--user=alice:other", "--password=wonder"}} {
		if r := runDeref(t, "", append(args, "--no-netrc", s.URL+"/x")...); r.code != 1 || strings.Contains(r.stderr, "wonder") {
			t.Errorf("%q: exit %d, %s", args, r.code, r.stderr)
		}
	}
}

// TestCookieFlag: -b sends its cookies, joined, in one Cookie field.
func TestCookieFlag(t *testing.T) {
	s, last := headServer(t, "ok")
	if r := runDeref(t, "", "-b", "a=1", "-b", "b=2; c=3", s.URL+"/x"); r.code != 0 || last().Get("Cookie") != "a=1; b=2; c=3" {
		t.Errorf("exit %d, Cookie %q, %s", r.code, last().Get("Cookie"), r.stderr)
	}
}

// TestCookieFiles: -c keeps the cookies a login sets on its way (a
// redirect) and writes them to a file that -b reads back, as curl's
// "-b jar -c jar" does; a -b file not there yet holds none; a bad one is
// refused naming its line; wget's --save-cookies leaves out session
// cookies unless --keep-session-cookies.
func TestCookieFiles(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("Cookie"))
		mu.Unlock()
		switch r.URL.Path {
		case "/login":
			nethttp.SetCookie(w, &nethttp.Cookie{Name: "sid", Value: "abc", Path: "/", HttpOnly: true})
			nethttp.SetCookie(w, &nethttp.Cookie{Name: "theme", Value: "dark", Path: "/", MaxAge: 3600})
			nethttp.Redirect(w, r, "/home", nethttp.StatusFound)
		default:
			if c, err := r.Cookie("sid"); err != nil || c.Value != "abc" {
				nethttp.Error(w, "log in first", nethttp.StatusForbidden)
				return
			}
			io.WriteString(w, "welcome")
		}
	}))
	t.Cleanup(s.Close)
	dir := t.TempDir()
	jar := filepath.Join(dir, "jar.txt")
	r := runDeref(t, "", "-b", jar, "-c", jar, s.URL+"/login")
	if r.code != 0 || r.stdout != "welcome" {
		t.Fatalf("the login: exit %d, %q, %s", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(jar)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "#HttpOnly_127.0.0.1\tFALSE\t/\tFALSE\t0\tsid\tabc\n") || !strings.Contains(string(b), "\ttheme\tdark\n") {
		t.Errorf("the jar:\n%s", b)
	}
	if r := runDeref(t, "", "-b", jar, "-b", "x=1", s.URL+"/home"); r.code != 0 || r.stdout != "welcome" {
		t.Errorf("with the jar: exit %d, %q, %s", r.code, r.stdout, r.stderr)
	}
	mu.Lock()
	if got := seen[len(seen)-1]; got != "/home x=1; sid=abc; theme=dark" {
		t.Errorf("sent %q", got)
	}
	mu.Unlock()
	// -j leaves out the session cookie: the login is forgotten.
	if r := runDeref(t, "", "-j", "-b", jar, s.URL+"/home"); r.code != 5 || !strings.Contains(r.stderr, "403") {
		t.Errorf("-j: exit %d, %s", r.code, r.stderr)
	}
	// wget's --save-cookies keeps no session cookie without --keep-session-cookies.
	out := filepath.Join(dir, "wget.txt")
	for _, args := range [][]string{{"--save-cookies", out}, {"--keep-session-cookies", "--save-cookies", out}} {
		if r := runDeref(t, "", append(args, s.URL+"/login")...); r.code != 0 {
			t.Fatalf("%q: exit %d, %s", args, r.code, r.stderr)
		}
		b, _ := os.ReadFile(out)
		if strings.Contains(string(b), "\tsid\t") != (len(args) == 3) || !strings.Contains(string(b), "\ttheme\t") {
			t.Errorf("%q wrote:\n%s", args, b)
		}
	}
	// -c - writes the jar after the object.
	if r := runDeref(t, "", "-c", "-", s.URL+"/login"); r.code != 0 || !strings.HasPrefix(r.stdout, "welcome# Netscape HTTP Cookie File\n") {
		t.Errorf("-c -: exit %d, %q", r.code, r.stdout)
	}
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("# cookies\nexample.com\tTRUE\n"), 0o644)
	if r := runDeref(t, "", "-b", bad, s.URL+"/home"); r.code != 1 || !strings.Contains(r.stderr, "bad.txt: line 2: 2 fields") {
		t.Errorf("a bad file: exit %d, %s", r.code, r.stderr)
	}
	if len(seen) != 10 {
		t.Errorf("%d requests, want 10 (the bad file's run makes none): %q", len(seen), seen)
	}
	// A value is sent as the file has it, quotes and spaces too.
	quoted := filepath.Join(dir, "quoted.txt")
	os.WriteFile(quoted, []byte("127.0.0.1\tFALSE\t/\tFALSE\t0\tsid\tabc\n127.0.0.1\tFALSE\t/\tFALSE\t0\tq\t\"a b\\\"\n"), 0o644)
	r = runDeref(t, "", "-b", quoted, s.URL+"/home")
	mu.Lock()
	if got := seen[len(seen)-1]; r.code != 0 || got != `/home sid=abc; q="a b\"` || r.stderr != "" {
		t.Errorf("exit %d, sent %q, %s", r.code, got, r.stderr)
	}
	mu.Unlock()
}

// closingServer answers /from with a redirect to /to and /to with "ok",
// and closes each connection without saying so (no Connection: close):
// the next request finds its kept connection closed.
func closingServer(t *testing.T) *httptest.Server {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		conn, bw, _ := w.(nethttp.Hijacker).Hijack()
		if r.URL.Path == "/from" {
			bw.WriteString("HTTP/1.1 302 Found\r\nLocation: /to\r\nContent-Length: 0\r\n\r\n")
		} else {
			bw.WriteString("HTTP/1.1 200 OK\r\nZeta: 1\r\nContent-Length: 2\r\n\r\nok")
		}
		bw.Flush()
		conn.Close()
	}))
	t.Cleanup(s.Close)
	return s
}

// TestStaleConnectionTrace: a kept connection the server had closed is
// dialled again, and -v shows no empty received line for it.
func TestStaleConnectionTrace(t *testing.T) {
	s := closingServer(t)
	r := runDeref(t, "", "-v", s.URL+"/from")
	if r.code != 0 || r.stdout != "ok" || strings.Contains(r.stderr, "\n< \n") || strings.Count(r.stderr, "* connecting") != 2 {
		t.Errorf("exit %d, %q, trace:\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestDumpHeader: -D writes each HTTP head received (a redirect's, then
// the object's), CRLF lines and a blank line after each, into its file,
// or onto standard output before the object.
func TestDumpHeader(t *testing.T) {
	s := closingServer(t)
	want := "HTTP/1.1 302 Found\r\nLocation: /to\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\nZeta: 1\r\nContent-Length: 2\r\n\r\n"
	heads := filepath.Join(t.TempDir(), "heads")
	r := runDeref(t, "", "-D", heads, s.URL+"/from")
	if b, _ := os.ReadFile(heads); r.code != 0 || r.stdout != "ok" || string(b) != want {
		t.Errorf("-D FILE: exit %d, %q, file %q", r.code, r.stdout, b)
	}
	if r := runDeref(t, "", "-D", "-", s.URL+"/from"); r.code != 0 || r.stdout != want+"ok" {
		t.Errorf("-D -: exit %d, %q", r.code, r.stdout)
	}
}

// TestTimeCond: -z DATE or FILE fetches only an object newer than it,
// from a server that answers the condition (304) and from one that
// ignores it (its Last-Modified is read); an older one is skipped with
// exit 0 and no file; a bad -z is a usage error.
func TestTimeCond(t *testing.T) {
	modified := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.URL.Path == "/ignoring" {
			w.Header().Set("Last-Modified", modified.Format(nethttp.TimeFormat))
			io.WriteString(w, "object")
			return
		}
		nethttp.ServeContent(w, r, "obj", modified, strings.NewReader("object"))
	}))
	t.Cleanup(s.Close)
	dir := t.TempDir()
	newer := filepath.Join(dir, "newer")
	os.WriteFile(newer, nil, 0o644)
	os.Chtimes(newer, modified.AddDate(1, 0, 0), modified.AddDate(1, 0, 0))
	for _, path := range []string{"/obj", "/ignoring"} {
		if r := runDeref(t, "", "-z", "2019-06-01", s.URL+path); r.code != 0 || r.stdout != "object" {
			t.Errorf("%s -z before: exit %d, %q, %s", path, r.code, r.stdout, r.stderr)
		}
		for _, cond := range []string{"2021-01-01", "Fri, 01 Jan 2021 00:00:00 GMT", newer} {
			if r := runDeref(t, "", "-z", cond, s.URL+path); r.code != 0 || r.stdout != "" || r.stderr != "" {
				t.Errorf("%s -z %s: exit %d, %q, %s", path, cond, r.code, r.stdout, r.stderr)
			}
			out := filepath.Join(dir, "out")
			if r := runDeref(t, "", "-z", cond, "-o", out, s.URL+path); r.code != 0 {
				t.Errorf("%s -z %s -o: exit %d, %s", path, cond, r.code, r.stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s -z %s -o: a file was written: %v", path, cond, err)
			}
		}
	}
	for _, cond := range []string{"soon", "-2021-01-01"} {
		if r := runDeref(t, "", "-z", cond, s.URL+"/obj"); r.code != 1 {
			t.Errorf("-z %s: exit %d, %s", cond, r.code, r.stderr)
		}
	}
}

// TestResolve: --resolve sends a host's connections to the address
// given, the request still naming the host; a bad entry is a usage
// error.
func TestResolve(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) { io.WriteString(w, "host "+r.Host) }))
	t.Cleanup(s.Close)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.URL, "http://"))
	r := runDeref(t, "", "--resolve", "Nowhere.invalid:"+port+":127.0.0.1", "http://nowhere.invalid:"+port+"/x")
	if r.code != 0 || r.stdout != "host nowhere.invalid:"+port {
		t.Errorf("exit %d, %q, %s", r.code, r.stdout, r.stderr)
	}
	for _, bad := range []string{"nowhere.invalid", "h:port:127.0.0.1", "h:80:nowhere", ":80:127.0.0.1"} {
		if r := runDeref(t, "", "--resolve", bad, s.URL+"/x"); r.code != 1 {
			t.Errorf("--resolve %s: exit %d", bad, r.code)
		}
	}
}

// TestClientCert: a TLS server that asks for a client certificate gets
// the one of --cert (its key from --key, or from the same file; wget's
// spellings too) and refuses deref without it.
func TestClientCert(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "deref client"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	clientCert, _ := x509.ParseCertificate(der)
	kb, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
	certFile, keyFile, both := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem"), filepath.Join(dir, "both.pem")
	os.WriteFile(certFile, certPEM, 0o644)
	os.WriteFile(keyFile, keyPEM, 0o600)
	os.WriteFile(both, append(append([]byte{}, certPEM...), keyPEM...), 0o600)

	s := httptest.NewUnstartedServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		io.WriteString(w, "hello "+r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	pool := x509.NewCertPool()
	pool.AddCert(clientCert)
	s.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	s.StartTLS()
	t.Cleanup(s.Close)
	for _, args := range [][]string{{"--cert", certFile, "--key", keyFile}, {"--cert", both}, {"--certificate", certFile, "--private-key", keyFile}} {
		if r := runDeref(t, "", append(args, "-k", s.URL+"/x")...); r.code != 0 || r.stdout != "hello deref client" {
			t.Errorf("%q: exit %d, %q, %s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := runDeref(t, "", "-k", s.URL+"/x"); r.code == 0 {
		t.Errorf("no client certificate: exit 0, %q", r.stdout)
	}
	if r := runDeref(t, "", "--cert", keyFile, s.URL+"/x"); r.code != 1 {
		t.Errorf("--cert of a key file: exit %d, %s", r.code, r.stderr)
	}
}

// TestFailEarly: --fail-early starts no URL after one has failed;
// without it every URL is tried.
func TestFailEarly(t *testing.T) {
	var asked atomic.Int32
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		asked.Add(1)
		if r.URL.Path == "/missing" {
			nethttp.NotFound(w, r)
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(s.Close)
	if r := runDeref(t, "", "--fail-early", s.URL+"/missing", s.URL+"/a", s.URL+"/b"); r.code != 4 || r.stdout != "" || asked.Load() != 1 {
		t.Errorf("--fail-early: exit %d, %q, %d asked", r.code, r.stdout, asked.Load())
	}
	asked.Store(0)
	if r := runDeref(t, "", s.URL+"/missing", s.URL+"/a", s.URL+"/b"); r.code != 4 || r.stdout != "okok" || asked.Load() != 3 {
		t.Errorf("without it: exit %d, %q, %d asked", r.code, r.stdout, asked.Load())
	}
}

// TestChunkedTraceOnce: a chunked response's head is traced once, as it
// came.
func TestChunkedTraceOnce(t *testing.T) {
	addr, _ := rawHTTP(t, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nZeta: 1\r\n\r\n2\r\nok\r\n0\r\n\r\n")
	r := runDeref(t, "", "-v", "http://"+addr+"/c")
	if r.code != 0 || r.stdout != "ok" || strings.Count(r.stderr, "< HTTP/1.1 200 OK") != 1 || strings.Count(r.stderr, "< Zeta: 1") != 1 {
		t.Errorf("exit %d %q, trace:\n%s", r.code, r.stdout, r.stderr)
	}
}

// A --max-time that runs out before a URL begins fails the run with the
// URL named; it is not a success that fetched nothing.
func TestMaxTimeBeforeAnyURL(t *testing.T) {
	s := server(t)
	defer s.Close()
	r := runDeref(t, "", "-m", "1e-12", s.URL+"/x.txt")
	if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, s.URL+"/x.txt: timed out after") {
		t.Errorf("%d %q %q", r.code, r.stdout, r.stderr)
	}
	// The crawl and the mirror say so in the same words, not Go's.
	for _, args := range [][]string{{"crawl", "--max-time", "1e-12", s.URL + "/"}, {"mirror", "-m", "1e-12", s.URL + "/", t.TempDir()}} {
		r := runDeref(t, "", args...)
		if r.code == 0 || !strings.Contains(r.stderr, "timed out after 0.000000000001 s (--max-time)") || strings.Contains(r.stderr, "deadline") {
			t.Errorf("%s: %d %q", args[0], r.code, r.stderr)
		}
	}
}

// TestProtoSet: curl's --proto syntax.
func TestProtoSet(t *testing.T) {
	all := []string{"file", "ftp", "ftps", "gopher", "http", "https"}
	for _, c := range []struct{ expr, want string }{
		{"=https", "https"},
		{"-all,+https,+http", "http,https"},
		{"-ftp,-ftps", "file,gopher,http,https"},
		{"=http,=https", "https"},
		{"=HTTPS, +gopher", "gopher,https"},
		{"=ldap", "ldap"}, // kept, and never matches
		{"=", ""},
	} {
		if got := strings.Join(protoSet(c.expr, all, all), ","); got != c.want {
			t.Errorf("%q: %q, want %q", c.expr, got, c.want)
		}
	}
	if got := strings.Join(protoSet("-ftp", []string{"http", "https", "ftp", "ftps"}, all), ","); got != "ftps,http,https" {
		t.Errorf("-ftp from the redirect set: %q", got)
	}
}

// TestProtoAndTLSFlags: rustup's install line (--proto '=https' --tlsv1.2
// -sSf) is taken; --proto refuses another scheme before connecting,
// --proto-redir a redirect; --tlsv1.3 and --tls-max reach the handshake;
// --stderr takes the messages.
func TestProtoAndTLSFlags(t *testing.T) {
	var asked atomic.Int32
	h := nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		asked.Add(1)
		if r.URL.Path == "/away" {
			nethttp.Redirect(w, r, "/here", nethttp.StatusFound)
			return
		}
		io.WriteString(w, "script")
	})
	plain := httptest.NewServer(h)
	t.Cleanup(plain.Close)
	tls13 := httptest.NewUnstartedServer(h)
	tls13.TLS = &tls.Config{MinVersion: tls.VersionTLS13}
	tls13.StartTLS()
	t.Cleanup(tls13.Close)
	if r := runDeref(t, "", "--proto", "=https", "--tlsv1.2", "-sSfk", tls13.URL+"/"); r.code != 0 || r.stdout != "script" {
		t.Errorf("rustup's line: exit %d, %q, %s", r.code, r.stdout, r.stderr)
	}
	n := asked.Load()
	if r := runDeref(t, "", "--proto", "=https", plain.URL+"/"); r.code != 3 || !strings.Contains(r.stderr, "http: not among the schemes allowed (https)") || asked.Load() != n {
		t.Errorf("--proto =https, an http URL: exit %d, %s", r.code, r.stderr)
	}
	if r := runDeref(t, "", "--proto-redir", "=https", plain.URL+"/away"); r.code == 0 || !strings.Contains(r.stderr, "redirect") {
		t.Errorf("--proto-redir =https, a redirect to http: exit %d, %s", r.code, r.stderr)
	}
	if r := runDeref(t, "", "-k", "--tlsv1.3", tls13.URL+"/"); r.code != 0 {
		t.Errorf("--tlsv1.3: exit %d, %s", r.code, r.stderr)
	}
	if r := runDeref(t, "", "-k", "--tls-max", "1.2", tls13.URL+"/"); r.code != 6 || !strings.Contains(r.stderr, "version") {
		t.Errorf("--tls-max 1.2 to a TLS 1.3 server: exit %d, %s", r.code, r.stderr)
	}
	if r := runDeref(t, "", "--tlsv1.3", "--tls-max", "1.2", tls13.URL+"/"); r.code != 1 || !strings.Contains(r.stderr, "--tls-max") {
		t.Errorf("--tls-max below --tlsv1.3: exit %d, %s", r.code, r.stderr)
	}
	log := filepath.Join(t.TempDir(), "log")
	if r := runDeref(t, "", "--stderr", log, plain.URL+"/nope/../away?x", "--proto", "=ftp"); r.code != 3 || r.stderr != "" {
		t.Errorf("--stderr: exit %d, stderr %q", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(log); !strings.Contains(string(b), "not among the schemes allowed (ftp)") {
		t.Errorf("--stderr wrote %q", b)
	}
	if r := runDeref(t, "", "--stderr", "-", "--proto", "=ftp", plain.URL+"/"); r.code != 3 || !strings.Contains(r.stdout, "not among the schemes") {
		t.Errorf("--stderr -: exit %d, stdout %q", r.code, r.stdout)
	}
}

// TestAuthHabits: --oauth2-bearer sends its token (hidden in -v's
// trace), --proxy-user logs in to -x's proxy and to the environment's,
// --basic is taken, --digest refused saying why, and --remote-name-all
// is -O.
func TestAuthHabits(t *testing.T) {
	s, last := headServer(t, "ok")
	r := runDeref(t, "", "-v", "--basic", "--oauth2-bearer", "tok123", s.URL+"/x")
	if r.code != 0 || last().Get("Authorization") != "Bearer tok123" || strings.Contains(r.stderr, "tok123") {
		t.Errorf("--oauth2-bearer: exit %d, Authorization %q, trace:\n%s", r.code, last().Get("Authorization"), r.stderr)
	}
	var proxyAuth atomic.Value
	proxy := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		proxyAuth.Store(r.Header.Get("Proxy-Authorization") + " " + r.URL.String())
		io.WriteString(w, "via proxy")
	}))
	t.Cleanup(proxy.Close)
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("pu:ppw")) + " http://example.invalid/y"
	if r := runDeref(t, "", "-x", proxy.URL, "-U", "pu:ppw", "http://example.invalid/y"); r.code != 0 || r.stdout != "via proxy" || proxyAuth.Load() != want {
		t.Errorf("-x with -U: exit %d, %q, the proxy saw %q, %s", r.code, r.stdout, proxyAuth.Load(), r.stderr)
	}
	proxyAuth.Store("")
	t.Setenv("http_proxy", proxy.URL)
	if r := runDeref(t, "", "--proxy-user", "pu", "--proxy-password", "ppw", "http://example.invalid/y"); r.code != 0 || proxyAuth.Load() != want {
		t.Errorf("http_proxy with wget's --proxy-user and --proxy-password: exit %d, the proxy saw %q, %s", r.code, proxyAuth.Load(), r.stderr)
	}
	if r := runDeref(t, "", "--ntlm", "-u", "a:b", "--noproxy", "*", s.URL+"/x"); r.code != 1 || !strings.Contains(r.stderr, "Basic and Digest only") {
		t.Errorf("--ntlm: exit %d, %s", r.code, r.stderr)
	}
	dir := t.TempDir()
	if r := runDeref(t, "", "--noproxy", "*", "--remote-name-all", "--output-dir", dir, s.URL+"/a.txt", s.URL+"/b.txt"); r.code != 0 {
		t.Errorf("--remote-name-all: exit %d, %s", r.code, r.stderr)
	}
	for _, name := range []string{"a.txt", "b.txt"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != "ok" {
			t.Errorf("--remote-name-all: %s: %q %v", name, b, err)
		}
	}
}

// TestSpeedLimit: -y and -Y end a transfer that trickles (exit 6), with
// the reason, where the idle time-out would wait for ever.
func TestSpeedLimit(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Content-Length", "100")
		for range 100 {
			w.Write([]byte("x"))
			w.(nethttp.Flusher).Flush()
			select {
			case <-time.After(100 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
	}))
	t.Cleanup(s.Close)
	r := runDeref(t, "", "-s", "-y", "1", "-Y", "100", s.URL+"/trickle")
	if r.code != 6 || !strings.Contains(r.stderr, "fewer than 100 bytes a second for 1s") {
		t.Errorf("exit %d, %s", r.code, r.stderr)
	}
}

// TestTraceFile: --trace-ascii FILE (and --trace) writes -v's trace to
// FILE, and not to standard error; passwords stay hidden; --no-buffer
// is taken.
func TestTraceFile(t *testing.T) {
	s, _ := headServer(t, "ok")
	for _, flag := range []string{"--trace-ascii", "--trace"} {
		file := filepath.Join(t.TempDir(), "trace")
		r := runDeref(t, "", flag, file, "--no-buffer", "-u", "alice:sesame", s.URL+"/x")
		b, _ := os.ReadFile(file)
		if r.code != 0 || r.stdout != "ok" || r.stderr != "" || !strings.Contains(string(b), "> GET /x HTTP/1.1\n") || !strings.Contains(string(b), "< HTTP/1.1 200 OK\n") || strings.Contains(string(b), "sesame") {
			t.Errorf("%s: exit %d, %q, stderr %q, trace:\n%s", flag, r.code, r.stdout, r.stderr, b)
		}
	}
	if r := runDeref(t, "", "--trace-ascii", "-", s.URL+"/x"); r.code != 0 || !strings.HasPrefix(r.stdout, "* ") || !strings.HasSuffix(r.stdout, "ok") {
		t.Errorf("--trace-ascii -: exit %d, %q", r.code, r.stdout)
	}
}

// TestFailWithBody: --fail-with-body writes a 404's page to standard
// output or -o's file and exits as the 404 does; without it nothing is
// written; with -C it is refused before connecting.
func TestFailWithBody(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		nethttp.Error(w, "no such page", nethttp.StatusNotFound)
	}))
	t.Cleanup(s.Close)
	if r := runDeref(t, "", "--fail-with-body", s.URL+"/gone"); r.code != 4 || r.stdout != "no such page\n" || !strings.Contains(r.stderr, "404") {
		t.Errorf("to standard output: exit %d, %q, %s", r.code, r.stdout, r.stderr)
	}
	if r := runDeref(t, "", s.URL+"/gone"); r.code != 4 || r.stdout != "" {
		t.Errorf("without it: exit %d, %q", r.code, r.stdout)
	}
	out := filepath.Join(t.TempDir(), "page")
	r := runDeref(t, "", "--content-on-error", "-o", out, s.URL+"/gone")
	if b, err := os.ReadFile(out); r.code != 4 || string(b) != "no such page\n" {
		t.Errorf("-o: exit %d, %q %v, %s", r.code, b, err, r.stderr)
	}
	if r := runDeref(t, "", "--fail-with-body", "-C", "-", "-o", out, s.URL+"/gone"); r.code != 1 || !strings.Contains(r.stderr, "--fail-with-body") {
		t.Errorf("with -C: exit %d, %s", r.code, r.stderr)
	}
}

// TestRemoveOnError: a transfer cut short leaves NAME.part (for -C - to
// continue), which --remove-on-error removes, as curl removes its file;
// with --fail-with-body the error page written as NAME goes too; a file
// already under the name the failed retrieval did not write stays.
func TestRemoveOnError(t *testing.T) {
	ln, err := testserver.Listen(func(c net.Conn) {
		defer c.Close() // after ten bytes of a thousand
		br := bufio.NewReader(c)
		for line := ""; line != "\r\n"; {
			var err error
			if line, err = br.ReadString('\n'); err != nil {
				return
			}
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\nonly ten b")
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	short := ln.Addr().String()
	missing, _ := rawHTTP(t, "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot here\n")
	for _, tt := range []struct {
		args []string
		left []string
	}{
		{[]string{"-o", "f", "http://" + short + "/f"}, []string{"f.part"}},
		{[]string{"--remove-on-error", "-o", "f", "http://" + short + "/f"}, nil},
		{[]string{"--remove-on-error", "-O", "http://" + short + "/g.bin"}, nil},
		{[]string{"--fail-with-body", "-o", "f", "http://" + missing + "/f"}, []string{"f"}},
		{[]string{"--fail-with-body", "--remove-on-error", "-o", "f", "http://" + missing + "/f"}, nil},
		{[]string{"--remove-on-error", "-o", "kept", "http://" + missing + "/f"}, []string{"kept"}},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "kept"), []byte("an earlier copy"), 0o644)
		r := runDeref(t, "", append([]string{"--output-dir", dir}, tt.args...)...)
		entries, _ := os.ReadDir(dir)
		var left []string
		for _, e := range entries {
			if e.Name() != "kept" || slices.Contains(tt.args, "kept") {
				left = append(left, e.Name())
			}
		}
		if r.code == 0 || !slices.Equal(left, tt.left) {
			t.Errorf("%q: exit %d, left %q, want %q; %s", tt.args, r.code, left, tt.left, r.stderr)
		}
	}
}

// TestUnixSocket: --unix-socket sends every connection to the socket,
// whatever the URL's host, as curl's does; the request still names it.
func TestUnixSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "sock") // a short path: socket names are bounded
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no Unix sockets here: %v", err)
	}
	srv := &nethttp.Server{Handler: nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		io.WriteString(w, "over the socket: "+r.Host+r.URL.Path)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	r := runDeref(t, "", "--unix-socket", sock, "http://docker.example/v1/version")
	if r.code != 0 || r.stdout != "over the socket: docker.example/v1/version" {
		t.Errorf("exit %d, %q: %s", r.code, r.stdout, r.stderr)
	}
	if r := runDeref(t, "", "--unix-socket", filepath.Join(dir, "none"), "http://h/x"); r.code == 0 {
		t.Errorf("a missing socket: exit 0, %q", r.stdout)
	}
	if r := runDeref(t, "", "--unix-socket", sock, "--interface", "127.0.0.1", "http://h/x"); r.code == 0 || !strings.Contains(r.stderr, "do not go together") {
		t.Errorf("with --interface: exit %d, %s", r.code, r.stderr)
	}
}

// TestConnectTo: curl's --connect-to sends HOST1:PORT1's connections to
// HOST2:PORT2 (HOST1's or PORT1's where empty), the request still naming
// HOST1; curl's "any host" and "any port" are refused.
func TestConnectTo(t *testing.T) {
	for v, want := range map[string][2]string{
		"example.test:80:127.0.0.1:8080": {"example.test:80", "127.0.0.1:8080"},
		"Example.Test:443::8443":         {"example.test:443", "Example.Test:8443"},
		"[::1]:80:[::2]:":                {"[::1]:80", "[::2]:80"},
		"h:80:other.test:":               {"h:80", "other.test:80"},
	} {
		hp, to, err := connectToEntry(v)
		if err != nil || hp != want[0] || to != want[1] {
			t.Errorf("%s: %q %q %v, want %q", v, hp, to, err, want)
		}
	}
	for _, v := range []string{"::127.0.0.1:80", "h::a:1", "h:80:a", "h:x:a:1", "[::1:80:a:1", "h:80:a:1:2"} {
		if _, _, err := connectToEntry(v); err == nil {
			t.Errorf("%s taken", v)
		}
	}
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		io.WriteString(w, "host "+r.Host)
	}))
	defer s.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.URL, "http://"))
	r := runDeref(t, "", "--connect-to", "example.test:80:127.0.0.1:"+port, "http://example.test/x")
	if r.code != 0 || r.stdout != "host example.test" {
		t.Errorf("exit %d, %q: %s", r.code, r.stdout, r.stderr)
	}
}

// TestWriteOutConnection: curl's -w variables of the connection, the
// heads and the timings, %header{name}, %{header_json}, %{json},
// %{onerror} and %{stderr}, from a server whose exact reply is known.
func TestWriteOutConnection(t *testing.T) {
	const head = "HTTP/1.1 200 OK\r\nX-A: one\r\nX-A: two\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\n"
	addr, heads := rawHTTP(t, head+"ok")
	u := "http://" + addr + "/x"
	format := "%{scheme} %{method} %{http_version} %{remote_ip}:%{remote_port} %{local_ip} %{num_connects} %{num_headers} [%header{x-a}] %{size_header} %{size_request} %{urlnum}\n"
	r := runDeref(t, "", "-s", "-o", os.DevNull, "-w", format, u)
	host, port, _ := net.SplitHostPort(addr)
	want := fmt.Sprintf("HTTP GET 1.1 %s:%s 127.0.0.1 1 4 [one, two] %d %d 0\n", host, port, len(head), len(heads()[0]))
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, %q, want %q; %s", r.code, r.stdout, want, r.stderr)
	}
	r = runDeref(t, "", "-s", "-w", "%{time_namelookup} %{time_connect} %{time_pretransfer} %{time_starttransfer} %{time_total} %{urlnum}\n", u, u)
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(r.stdout, "ok", "")), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[1], " 1") {
		t.Fatalf("two URLs: %q", r.stdout)
	}
	var times [5]float64
	fmt.Sscan(lines[0], &times[0], &times[1], &times[2], &times[3], &times[4])
	for i := 1; i < len(times); i++ {
		if times[i] < times[i-1] || times[0] <= 0 {
			t.Errorf("times out of order: %v", times)
		}
	}
	r = runDeref(t, "", "-s", "-o", os.DevNull, "-w", "%{header_json}|%{json}", u)
	hj, js, _ := strings.Cut(r.stdout, "|")
	var fields map[string][]string
	var all map[string]any
	if err := json.Unmarshal([]byte(hj), &fields); err != nil || strings.Join(fields["x-a"], ",") != "one,two" {
		t.Errorf("header_json %q: %v", hj, err)
	}
	if err := json.Unmarshal([]byte(js), &all); err != nil || all["remote_port"] == nil || all["http_version"] != "1.1" {
		t.Errorf("json %q: %v", js, err)
	}
	r = runDeref(t, "", "-s", "-o", os.DevNull, "-w", "done%{onerror} failed%{stderr} %{exitcode}\n", u)
	if r.stdout != "done" || r.stderr != "" {
		t.Errorf("onerror, success: %q %q", r.stdout, r.stderr)
	}
	r = runDeref(t, "", "-s", "-o", os.DevNull, "-w", "done%{onerror} failed%{stderr} %{exitcode}\n", "http://127.0.0.1:1/")
	if r.stdout != "done failed" || !strings.HasSuffix(r.stderr, " 6\n") {
		t.Errorf("onerror, failure: %q %q", r.stdout, r.stderr)
	}
}
