//go:build interop

package interop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/url"
)

var modTime = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

func env(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set: start the daemons with .ci/interop/start first", name)
	}
	return v
}

func client() *fetch.Client {
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	return c
}

// treeFiles lists the regular files of the tree as slash paths.
func treeFiles(t *testing.T, root string) []string {
	var out []string
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if len(out) == 0 {
		t.Fatalf("no files under %s", root)
	}
	return out
}

func urlPath(rel string) string {
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		segs[i] = url.EscapeSegment(s)
	}
	return strings.Join(segs, "/")
}

func sum(r io.Reader) ([32]byte, int64, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s, n, err
}

func fileSum(t *testing.T, p string, offset int64) [32]byte {
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Seek(offset, io.SeekStart)
	s, _, _ := sum(f)
	return s
}

// TestNginxFiles fetches every file of the tree from nginx, streamed and
// downloaded, and compares contents by sha256, sizes and times.
func TestNginxFiles(t *testing.T) {
	base, root := env(t, "DEREF_INTEROP_HTTP"), env(t, "DEREF_INTEROP_TREE")
	c := client()
	ctx := context.Background()
	out := t.TempDir()
	for _, rel := range treeFiles(t, root) {
		u := base + "/" + urlPath(rel)
		want := fileSum(t, filepath.Join(root, rel), 0)
		resp, err := c.Get(ctx, u)
		if err != nil {
			t.Errorf("%s: %v", u, err)
			continue
		}
		got, n, err := sum(resp.Body)
		resp.Body.Close()
		st, _ := os.Stat(filepath.Join(root, rel))
		if err != nil || got != want || n != st.Size() || resp.Size != st.Size() || !resp.ModTime.Equal(modTime) {
			t.Errorf("%s: %d bytes (size %d, modified %v), err %v, sha256 match %v", u, n, resp.Size, resp.ModTime, err, got == want)
		}
		p, err := c.Download(ctx, u, out)
		if err != nil {
			t.Errorf("download %s: %v", u, err)
			continue
		}
		if fileSum(t, p, 0) != want {
			t.Errorf("download %s: contents differ", u)
		}
	}
}

func TestNginxResumeRedirectErrors(t *testing.T) {
	base, root := env(t, "DEREF_INTEROP_HTTP"), env(t, "DEREF_INTEROP_TREE")
	c := client()
	ctx := context.Background()
	resp, err := c.Fetch(ctx, url.MustParse(base+"/pub/random.bin"), 1000001)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := sum(resp.Body)
	resp.Body.Close()
	if err != nil || resp.Offset != 1000001 || got != fileSum(t, filepath.Join(root, "pub/random.bin"), 1000001) {
		t.Errorf("resume: offset %d, %v", resp.Offset, err)
	}
	// nginx answers /pub with 301 to /pub/, an autoindex page.
	resp, err = c.Get(ctx, base+"/pub")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.MediaType != "text/html" || !strings.Contains(string(page), `href="with%20space.txt"`) {
		t.Errorf("autoindex after redirect: %s %q", resp.MediaType, page)
	}
	if _, err := c.Get(ctx, base+"/pub/nope.txt"); !errors.Is(err, fetch.ErrNotFound) {
		t.Errorf("missing file: %v", err)
	}
	// Unencoded ";" in an HTTP path is reserved but legal; nginx serves it.
	resp, err = c.Get(ctx, base+"/pub/semi;colon.txt")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// TestDerefCommand runs the built command against nginx: -O into a folder,
// -C - to resume, and the exit code of a missing file.
func TestDerefCommand(t *testing.T) {
	base, root := env(t, "DEREF_INTEROP_HTTP"), env(t, "DEREF_INTEROP_TREE")
	bin := filepath.Join(t.TempDir(), "deref")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/deref").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	cmd := exec.Command(bin, "-s", "--no-netrc", "-O", "--output-dir", dir, base+"/pub/random.bin", base+"/pub/with%20space.txt")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("deref -O: %v\n%s", err, out)
	}
	for _, rel := range []string{"pub/random.bin", "pub/with space.txt"} {
		if fileSum(t, filepath.Join(dir, filepath.Base(rel)), 0) != fileSum(t, filepath.Join(root, rel), 0) {
			t.Errorf("deref -O %s: contents differ", rel)
		}
	}
	// Resume a truncated copy.
	part := filepath.Join(dir, "random.bin")
	os.Truncate(part, 12345)
	if out, err := exec.Command(bin, "-s", "--no-netrc", "-C", "-", "-o", part, base+"/pub/random.bin").CombinedOutput(); err != nil {
		t.Fatalf("deref -C -: %v\n%s", err, out)
	}
	if fileSum(t, part, 0) != fileSum(t, filepath.Join(root, "pub/random.bin"), 0) {
		t.Error("resumed file differs")
	}
	// -r: bytes 1000 to 1999 of the object, from nginx (a Range with its
	// last byte) and from each FTP daemon (REST, and a transfer cut off);
	// -r -1500, its last 1,500 bytes (HEAD or SIZE first).
	whole, err := os.ReadFile(filepath.Join(root, "pub/random.bin"))
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]string{"nginx": base}
	for name, u := range ftpServers(t) {
		sources[name] = u
	}
	for name, u := range sources {
		out, err := exec.Command(bin, "-s", "--no-netrc", "-r", "1000-1999", u+"/pub/random.bin").Output()
		if err != nil || !bytes.Equal(out, whole[1000:2000]) {
			t.Errorf("%s: deref -r 1000-1999: %v, %d bytes", name, err, len(out))
		}
		out, err = exec.Command(bin, "-s", "--no-netrc", "-r", "-1500", u+"/pub/random.bin").Output()
		if err != nil || !bytes.Equal(out, whole[len(whole)-1500:]) {
			t.Errorf("%s: deref -r -1500: %v, %d bytes", name, err, len(out))
		}
	}
	// -D: the FTP daemons' replies, a line each, from the greeting to the
	// end of the transfer.
	for name, u := range ftpServers(t) {
		replies := filepath.Join(t.TempDir(), "replies")
		out, err := exec.Command(bin, "-s", "--no-netrc", "-D", replies, u+"/hello.txt").Output()
		b, _ := os.ReadFile(replies)
		hello, _ := os.ReadFile(filepath.Join(root, "hello.txt"))
		if err != nil || !bytes.Equal(out, hello) || !bytes.HasPrefix(b, []byte("220 ")) || !bytes.HasSuffix(b, []byte("\r\n")) || !bytes.Contains(b, []byte("\r\n226 ")) {
			t.Errorf("%s: deref -D: %v, replies:\n%s", name, err, b)
		}
	}
	// --compressed: nginx sends gzip (the trace shows it), deref writes
	// the object itself.
	var trace bytes.Buffer
	cmd = exec.Command(bin, "-v", "--no-netrc", "--compressed", base+"/gzip/pub/random.bin")
	cmd.Stderr = &trace
	if out, err := cmd.Output(); err != nil || !bytes.Equal(out, whole) || !strings.Contains(trace.String(), "< Content-Encoding: gzip") {
		t.Errorf("--compressed: %v, %d bytes of %d, trace:\n%s", err, len(out), len(whole), trace.String())
	}
	// Cookies: nginx's login sets one on its way to the members' area;
	// -c keeps it in a file that -b, and curl, read back.
	hello, _ := os.ReadFile(filepath.Join(root, "hello.txt"))
	jar := filepath.Join(t.TempDir(), "jar.txt")
	if out, err := exec.Command(bin, "-s", "--no-netrc", "-c", jar, base+"/login").Output(); err != nil || !bytes.Equal(out, hello) {
		t.Errorf("the login with -c: %v, %q", err, out)
	}
	if out, err := exec.Command(bin, "-s", "--no-netrc", "-b", jar, base+"/members/hello.txt").Output(); err != nil || !bytes.Equal(out, hello) {
		t.Errorf("-b the jar: %v, %q", err, out)
	}
	if out, err := exec.Command("curl", "-sf", "-b", jar, base+"/members/hello.txt").Output(); err != nil || !bytes.Equal(out, hello) {
		t.Errorf("curl -b deref's jar: %v, %q", err, out)
	}
	var ee *exec.ExitError
	if err := exec.Command(bin, "-s", "--no-netrc", base+"/members/hello.txt").Run(); !errors.As(err, &ee) || ee.ExitCode() != 5 {
		t.Errorf("the members' area without the cookie: %v, want exit 5", err)
	}
	// --fail-with-body: nginx's 404 page, as curl --fail-with-body writes it.
	page, err := exec.Command(bin, "-s", "--no-netrc", "--fail-with-body", base+"/pub/nope").Output()
	if !errors.As(err, &ee) || ee.ExitCode() != 4 || !bytes.Contains(page, []byte("404 Not Found")) {
		t.Errorf("--fail-with-body: %v, %q", err, page)
	}
	if want, _ := exec.Command("curl", "-s", "--fail-with-body", base+"/pub/nope").Output(); !bytes.Equal(page, want) {
		t.Errorf("--fail-with-body wrote %q, curl %q", page, want)
	}
	err = exec.Command(bin, "-s", "--no-netrc", base+"/pub/nope").Run()
	if !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Errorf("missing file: %v, want exit 4", err)
	}
	// --etag-save and --etag-compare: nginx's entity tag, kept in the
	// file curl writes; the second run is a 304 that leaves the copy.
	tags, copyOf := filepath.Join(t.TempDir(), "etag"), filepath.Join(t.TempDir(), "hello.txt")
	run := func() string {
		var trace bytes.Buffer
		cmd := exec.Command(bin, "-v", "--no-netrc", "--etag-compare", tags, "--etag-save", tags, "-o", copyOf, base+"/hello.txt")
		cmd.Stderr = &trace
		if err := cmd.Run(); err != nil {
			t.Errorf("--etag-compare: %v\n%s", err, trace.String())
		}
		return trace.String()
	}
	first := run()
	tag, _ := os.ReadFile(tags)
	curlTags := filepath.Join(t.TempDir(), "curl-etag")
	if err := exec.Command("curl", "-s", "--etag-save", curlTags, "-o", os.DevNull, base+"/hello.txt").Run(); err != nil {
		t.Fatal(err)
	}
	if want, _ := os.ReadFile(curlTags); !bytes.Equal(tag, want) || len(tag) < 3 || strings.Contains(first, "If-None-Match") {
		t.Errorf("--etag-save wrote %q, curl %q; first request:\n%s", tag, want, first)
	}
	os.WriteFile(copyOf, []byte("the copy kept"), 0o644)
	if second := run(); !strings.Contains(second, "> If-None-Match: "+strings.TrimSpace(string(tag))) || !strings.Contains(second, "< HTTP/1.1 304") {
		t.Errorf("the second run:\n%s", second)
	}
	if b, _ := os.ReadFile(copyOf); string(b) != "the copy kept" {
		t.Errorf("a 304 rewrote the copy: %q", b)
	}
	if code, _ := exec.Command("curl", "-s", "--etag-compare", tags, "-o", os.DevNull, "-w", "%{http_code}", base+"/hello.txt").Output(); string(code) != "304" {
		t.Errorf("curl --etag-compare with deref's file: %s", code)
	}
}

// TestDigestLogin: lighttpd's Digest logins, SHA-256 and MD5, with -u
// (Basic first, as curl sends it, then the challenge answered) and with
// --digest (nothing before the challenge); a wrong password is exit 5.
// curl --digest with the same login fetches the same bytes.
func TestDigestLogin(t *testing.T) {
	base, root := env(t, "DEREF_INTEROP_DIGEST"), env(t, "DEREF_INTEROP_TREE")
	bin := filepath.Join(t.TempDir(), "deref")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/deref").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	const login = "digest:s3cret:pw"
	for _, path := range []string{"/pub/random.bin", "/hello.txt"} {
		want, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range [][]string{{}, {"--digest"}, {"--anyauth"}} {
			var trace bytes.Buffer
			cmd := exec.Command(bin, append(append([]string{"-v", "--no-netrc", "-u", login}, mode...), base+path)...)
			cmd.Stderr = &trace
			out, err := cmd.Output()
			if err != nil || !bytes.Equal(out, want) {
				t.Errorf("%s %q: %v, %d bytes of %d\n%s", path, mode, err, len(out), len(want), trace.String())
			}
			sent := 1 // the answer to the challenge
			if len(mode) == 0 {
				sent = 2 // Basic with the first request, as curl sends it
			}
			if n := strings.Count(trace.String(), "> Authorization: "); n != sent {
				t.Errorf("%s %q: %d Authorization fields sent\n%s", path, mode, n, trace.String())
			}
		}
		curled, err := exec.Command("curl", "-sf", "--digest", "-u", login, base+path).Output()
		if err != nil || !bytes.Equal(curled, want) {
			t.Errorf("curl --digest %s: %v, %d bytes", path, err, len(curled))
		}
	}
	// One command fetching three files of /pub/: the login lighttpd
	// accepted answers the next two before they are asked for (the same
	// nonce, counts 2 and 3), so that only the first costs a 401.
	dir := t.TempDir()
	var trace bytes.Buffer
	args := []string{"-v", "--no-netrc", "--digest", "-u", login, "--output-dir", dir}
	names := []string{"random.bin", "README.txt", "crlf.txt"}
	for _, name := range names {
		args = append(args, "-O", base+"/pub/"+name)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = &trace
	if err := cmd.Run(); err != nil {
		t.Errorf("three files: %v\n%s", err, trace.String())
	}
	for _, name := range names {
		got, _ := os.ReadFile(filepath.Join(dir, name))
		if want, err := os.ReadFile(filepath.Join(root, "pub", name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("three files: %s is %d bytes, not the file served (%v)", name, len(got), err)
		}
	}
	if n, m := strings.Count(trace.String(), "< HTTP/1.1 401"), strings.Count(trace.String(), "> Authorization: "); n != 1 || m != 3 {
		t.Errorf("three files: %d 401 replies and %d Authorization fields, want 1 and 3\n%s", n, m, trace.String())
	}
	var ee *exec.ExitError
	if err := exec.Command(bin, "-s", "--no-netrc", "--digest", "-u", "digest:wrong", base+"/hello.txt").Run(); !errors.As(err, &ee) || ee.ExitCode() != 5 {
		t.Errorf("a wrong password: %v, want exit 5", err)
	}
}

// TestUnixSocket: nginx listening on a Unix domain socket too; deref
// --unix-socket fetches through it what curl --unix-socket fetches, the
// file the daemon serves.
func TestUnixSocket(t *testing.T) {
	sock, root := env(t, "DEREF_INTEROP_HTTP_SOCKET"), env(t, "DEREF_INTEROP_TREE")
	bin := buildDeref(t)
	want, err := os.ReadFile(filepath.Join(root, "pub", "random.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{
		{bin, "-s", "--no-netrc", "--unix-socket", sock, "http://localhost/pub/random.bin"},
		{"curl", "-sf", "--unix-socket", sock, "http://localhost/pub/random.bin"},
	} {
		out, err := exec.Command(argv[0], argv[1:]...).Output()
		if err != nil || !bytes.Equal(out, want) {
			t.Errorf("%s: %v, %d bytes of %d", filepath.Base(argv[0]), err, len(out), len(want))
		}
	}
}
