package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

type runResult struct {
	code           int
	stdout, stderr string
}

func runDeref(t *testing.T, stdin string, args ...string) runResult {
	t.Helper()
	t.Setenv("NETRC", filepath.Join(t.TempDir(), "none"))
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return runResult{code, out.String(), errb.String()}
}

func server(t *testing.T) *httptest.Server {
	mux := nethttp.NewServeMux()
	mux.HandleFunc("/", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		nethttp.ServeContent(w, r, "x.txt", time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC), strings.NewReader("web object\n"))
	})
	mux.HandleFunc("/secret", func(w nethttp.ResponseWriter, r *nethttp.Request) { w.WriteHeader(401) })
	mux.HandleFunc("/nope", func(w nethttp.ResponseWriter, r *nethttp.Request) { nethttp.Error(w, "an error page", 404) })
	mux.HandleFunc("/short", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		conn, bw, _ := w.(nethttp.Hijacker).Hijack()
		bw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
		bw.Flush()
		conn.Close()
	})
	mux.HandleFunc("/slow", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		// A byte every tenth of a second, of 1000 promised.
		w.Header().Set("Content-Length", "1000")
		for range 50 {
			w.Write([]byte("x"))
			w.(nethttp.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func TestExitCodes(t *testing.T) {
	s := server(t)
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"http://h/%zz"}, 2, `url-path: malformed escape "%zz" at offset 9`},
		{[]string{"ftp://joe:pw@h:25/x"}, 2, "port 25 belongs to smtp"},
		{[]string{"x-unknown:thing"}, 3, "unsupported scheme"},
		{[]string{"mailto:joe@example.com"}, 3, "mailbox"},
		{[]string{"file://" + dir + "/nope"}, 4, "not found"},
		{[]string{"-fsSL", s.URL + "/nope"}, 4, "not found"}, // curl's habit: the error shown despite -s
		{[]string{s.URL + "/secret"}, 5, "login refused"},
		{[]string{"http://127.0.0.1:1/"}, 6, "connection refused"},
		{[]string{s.URL + "/short"}, 7, "object ended early"},
		{[]string{}, 1, "no URL given"},
		{[]string{"--no-such-flag", "http://h/"}, 1, "unknown flag --no-such-flag"},
	} {
		r := runDeref(t, "", tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.msg) {
			t.Errorf("deref %q: exit %d, stderr %q; want exit %d and %q", tt.args, r.code, r.stderr, tt.code, tt.msg)
		}
		if strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 && tt.code != 1 {
			t.Errorf("deref %q: more than one line on stderr: %q", tt.args, r.stderr)
		}
		if strings.Contains(r.stderr, ":pw@") {
			t.Errorf("password shown: %q", r.stderr)
		}
		if (tt.code == 4 || tt.code == 5) && r.stdout != "" {
			t.Errorf("deref %q: wrote %q, the server's error page", tt.args, r.stdout)
		}
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteErrorExit(t *testing.T) {
	s := server(t)
	t.Setenv("NETRC", "")
	var errb bytes.Buffer
	code := run([]string{s.URL + "/x"}, nil, failingWriter{}, &errb)
	if code != 8 || !strings.Contains(errb.String(), "disk full") {
		t.Errorf("write error: exit %d, %q", code, errb.String())
	}
}

func TestOutputs(t *testing.T) {
	s := server(t)
	dir := t.TempDir()
	r := runDeref(t, "", s.URL+"/x.txt")
	if r.code != 0 || r.stdout != "web object\n" {
		t.Errorf("stdout: %+v", r)
	}
	// Flags may follow the URL; -o writes a file and nothing to stdout.
	out := filepath.Join(dir, "got.txt")
	r = runDeref(t, "", s.URL+"/x.txt", "-o", out)
	if b, _ := os.ReadFile(out); r.code != 0 || string(b) != "web object\n" || r.stdout != "" {
		t.Errorf("-o: %+v %q", r, b)
	}
	// -O names the file after the URL, in --output-dir.
	r = runDeref(t, "", "-O", "--output-dir", dir, s.URL+"/dir/named.txt")
	if b, _ := os.ReadFile(filepath.Join(dir, "named.txt")); r.code != 0 || string(b) != "web object\n" {
		t.Errorf("-O: %+v", r)
	}
	// A failed -o leaves nothing under the final name.
	r = runDeref(t, "", "-o", filepath.Join(dir, "short.bin"), s.URL+"/short")
	if _, err := os.Stat(filepath.Join(dir, "short.bin")); r.code != 7 || !os.IsNotExist(err) {
		t.Errorf("failed -o: %+v %v", r, err)
	}
	// -o naming a folder is refused before anything is fetched.
	r = runDeref(t, "", "-o", dir, s.URL+"/x.txt")
	if r.code != 8 || !strings.Contains(r.stderr, "is a folder") {
		t.Errorf("-o folder: %+v", r)
	}
	if _, err := os.Stat(dir + ".part"); !os.IsNotExist(err) {
		t.Errorf("-o folder left %s.part", dir)
	}
	// -o /dev/null and other devices are written directly.
	r = runDeref(t, "", "-o", os.DevNull, s.URL+"/x.txt")
	if st, err := os.Stat(os.DevNull); r.code != 0 || err != nil || st.Mode().IsRegular() {
		t.Errorf("-o /dev/null: %+v", r)
	}
	// -C OFFSET to stdout.
	r = runDeref(t, "", "-C", "4", s.URL+"/x.txt")
	if r.stdout != "object\n" {
		t.Errorf("-C 4: %+v", r)
	}
	// -C - continues a file.
	part := filepath.Join(dir, "cont.txt")
	os.WriteFile(part, []byte("web "), 0o644)
	r = runDeref(t, "", "-C", "-", "-o", part, s.URL+"/x.txt")
	if b, _ := os.ReadFile(part); r.code != 0 || string(b) != "web object\n" {
		t.Errorf("-C -: %+v %q", r, b)
	}
	// The wrappers of RFC 1738's appendix are accepted.
	for _, w := range []string{"<URL:" + s.URL + "/x.txt>", "<" + s.URL + "/x.txt>", "URL:" + s.URL + "/x.txt"} {
		if r = runDeref(t, "", w); r.code != 0 || r.stdout != "web object\n" {
			t.Errorf("%s: %+v", w, r)
		}
	}
	// -I prints the head, as curl -I does; -I --json deref's fields.
	r = runDeref(t, "", "-I", s.URL+"/x.txt")
	for _, want := range []string{"HTTP/1.1 200 OK\r\n", "Content-Length: 11\r\n", "Content-Type: text/plain; charset=utf-8\r\n", "Last-Modified: Thu, 02 Jan 2020 03:04:05 GMT\r\n"} {
		if !strings.HasSuffix(r.stdout, "\r\n\r\n") || !strings.Contains(r.stdout, want) {
			t.Errorf("-I lacks %q: %q", want, r.stdout)
		}
	}
	r = runDeref(t, "", "-I", "--json", s.URL+"/x.txt")
	for _, want := range []string{`"kind":"file"`, `"size":11`, `"modified":"2020-01-02T03:04:05Z"`, `"name":"x.txt"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("-I --json lacks %q: %q", want, r.stdout)
		}
	}
	// -i reads a list; -v traces to stderr.
	r = runDeref(t, s.URL+"/a\n# comment\n\n"+s.URL+"/b\n", "-v", "-i", "-")
	if r.code != 0 || r.stdout != "web object\nweb object\n" || !strings.Contains(r.stderr, "> GET /a HTTP/1.1") || !strings.Contains(r.stderr, "< HTTP/1.1 200 OK") {
		t.Errorf("-i - -v: %+v", r)
	}
}

func TestListings(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte("12345"), 0o644)
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	u := "file://" + dir + "/"
	r := runDeref(t, "", u)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "directory\t-\t") || !strings.HasSuffix(lines[0], "\td\t"+u+"d/") ||
		!strings.HasPrefix(lines[1], "file\t5\t") || !strings.HasSuffix(lines[1], "\tf.txt\t"+u+"f.txt") {
		t.Errorf("listing: %q", r.stdout)
	}
	r = runDeref(t, "", "--json", u)
	var e struct {
		Kind, Name, URL string
		Size            int64
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.Decode(&e)
	dec.Decode(&e)
	if e.Kind != "file" || e.Name != "f.txt" || e.Size != 5 || e.URL != u+"f.txt" {
		t.Errorf("--json: %q", r.stdout)
	}
	if err := dec.Decode(&e); err != io.EOF {
		t.Errorf("--json: more than two objects: %q", r.stdout)
	}
}

func TestGuessScheme(t *testing.T) {
	for in, want := range map[string]string{
		"example.com/a":       "http://example.com/a",
		"localhost:8080/x":    "http://localhost:8080/x",
		"127.0.0.1:99":        "http://127.0.0.1:99",
		"ftp.example.org/pub": "ftp://ftp.example.org/pub",
		"localhost":           "http://localhost",
		"ftp://h/x":           "ftp://h/x",
		"news:comp.lang.go":   "news:comp.lang.go",
		"mailto:a@b":          "mailto:a@b",
		"x-thing:stuff":       "x-thing:stuff",
		"/etc/motd":           "/etc/motd",
		"justaword":           "justaword",
	} {
		if got := guessScheme(in); got != want {
			t.Errorf("guessScheme(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHelp(t *testing.T) {
	r := runDeref(t, "", "-h")
	if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "Exit codes:") || !strings.Contains(r.stdout, "130  interrupted") {
		t.Errorf("-h: %+v", r)
	}
	// Grouped, with placeholders and two dashes, in 80 columns.
	for _, want := range []string{"\nOutput:\n", "\nConnection:\n", "\nHTTP:\n", "\nFTP:\n", "\nNews:\n", "\nTelnet and mail:\n",
		"  -o, --output FILE ", "      --idle-timeout SECONDS", "  -H, --header 'NAME: VALUE'"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("-h lacks %q", want)
		}
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		if len([]rune(l)) > 80 {
			t.Errorf("-h line over 80 columns: %q", l)
		}
	}
	if r2 := runDeref(t, "", "--help"); r2.stdout != r.stdout {
		t.Error("--help differs from -h")
	}
	r = runDeref(t, "", "mirror", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "usage: deref mirror") || !strings.Contains(r.stdout, "\nMirror:\n") || strings.Contains(r.stdout, "--output FILE") {
		t.Errorf("mirror --help: %+v", r)
	}
}

// TestOneProcessor: the transfers of deref URL URL... and deref mirror
// are run on one processor; one URL, --segments, crawl and serve keep them
// all.
func TestOneProcessor(t *testing.T) {
	s := server(t)
	var set []int
	setProcessors = func(n int) int { set = append(set, n); return 0 }
	defer func() { setProcessors = nil }()
	dir := t.TempDir()
	for _, tt := range []struct {
		args  []string
		want  []int
		stdin string
	}{
		{[]string{"-s", s.URL + "/x.txt"}, nil, ""},
		{[]string{"-s", s.URL + "/x.txt", s.URL + "/x.txt"}, []int{1}, ""},
		{[]string{"-s", "-i", "-"}, []int{1}, s.URL + "/x.txt\n" + s.URL + "/x.txt\n"},
		{[]string{"-s", "--segments", "2", "-o", filepath.Join(dir, "x"), s.URL + "/x.txt"}, nil, ""},
		{[]string{"mirror", "-s", s.URL + "/x.txt", filepath.Join(dir, "m")}, []int{1}, ""},
		{[]string{"crawl", "-s", "--depth", "0", s.URL + "/x.txt"}, nil, ""},
		{[]string{"serve", "--no-such-flag"}, nil, ""},
	} {
		set = nil
		runDeref(t, tt.stdin, tt.args...)
		if !slices.Equal(set, tt.want) {
			t.Errorf("%q: processors set %v, want %v", tt.args, set, tt.want)
		}
	}
}
