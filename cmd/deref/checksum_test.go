package main

import (
	"crypto/sha256"
	"encoding/hex"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/urlderef/deref/internal/testserver/ftpd"
)

// TestChecksumFlags: --checksum and --checksum-file (fetched over HTTP, or
// a local file) let a file take its name only when its digest matches;
// a mismatch or a missing line exits 9 and leaves nothing.
func TestChecksumFlags(t *testing.T) {
	files := map[string]string{"/a.txt": "alpha\n", "/b.txt": "bravo\n"}
	digest := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	sums := digest("alpha\n") + "  a.txt\nSHA256 (b.txt) = " + digest("bravo\n") + "\n"
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.URL.Path == "/SHA256SUMS" {
			w.Write([]byte(sums))
			return
		}
		if body, ok := files[r.URL.Path]; ok {
			w.Write([]byte(body))
			return
		}
		nethttp.NotFound(w, r)
	}))
	t.Cleanup(s.Close)

	dir := t.TempDir()
	r := runDeref(t, "", "--checksum", "sha256:"+digest("alpha\n"), "-o", filepath.Join(dir, "a"), s.URL+"/a.txt")
	if b, _ := os.ReadFile(filepath.Join(dir, "a")); r.code != 0 || string(b) != "alpha\n" {
		t.Errorf("matching --checksum: exit %d, %q, %s", r.code, b, r.stderr)
	}
	r = runDeref(t, "", "--checksum", "sha256:"+digest("other"), "-o", filepath.Join(dir, "x"), s.URL+"/a.txt")
	if _, err := os.Stat(filepath.Join(dir, "x")); r.code != 9 || !os.IsNotExist(err) || !strings.Contains(r.stderr, "checksum mismatch") {
		t.Errorf("mismatch: exit %d, %v, %s", r.code, err, r.stderr)
	}

	out := t.TempDir()
	list := s.URL + "/a.txt\n" + s.URL + "/b.txt\n"
	r = runDeref(t, list, "-i", "-", "-O", "--output-dir", out, "--checksum-file", s.URL+"/SHA256SUMS")
	if r.code != 0 {
		t.Errorf("--checksum-file over HTTP: exit %d, %s", r.code, r.stderr)
	}
	local := filepath.Join(t.TempDir(), "SUMS")
	os.WriteFile(local, []byte(digest("alpha\n")+"  a.txt\n"), 0o644)
	out = t.TempDir()
	r = runDeref(t, list, "-i", "-", "-O", "--output-dir", out, "--checksum-file", local)
	if _, err := os.Stat(filepath.Join(out, "b.txt")); r.code != 9 || !os.IsNotExist(err) || !strings.Contains(r.stderr, "no line for b.txt") {
		t.Errorf("a file the sums file lacks: exit %d, %v, %s", r.code, err, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "a.txt")); string(b) != "alpha\n" {
		t.Errorf("a.txt: %q", b)
	}
	// file:PATH, without //, is a URL too; the same sums file read so.
	if runtime.GOOS != "windows" {
		out = t.TempDir()
		r = runDeref(t, list, "-i", "-", "-O", "--output-dir", out, "--checksum-file", "file:"+local)
		if r.code != 9 || !strings.Contains(r.stderr, "no line for b.txt") {
			t.Errorf("--checksum-file file:%s: exit %d, %s", local, r.code, r.stderr)
		}
	}

	for _, args := range [][]string{
		{"--checksum", "sha256:" + digest("x"), s.URL + "/a.txt"},                 // standard output
		{"--checksum", "crc:00", "-O", s.URL + "/a.txt"},                          // no such algorithm
		{"--checksum", "sha256:" + digest("x"), "-O", s.URL + "/a", s.URL + "/b"}, // one digest, two URLs
	} {
		if r := runDeref(t, "", args...); r.code != 1 || !strings.HasSuffix(r.stderr, "see 'deref -h'\n") {
			t.Errorf("%q: exit %d, %s", args, r.code, r.stderr)
		}
	}
}

// TestMirrorChecksumFlags: deref mirror --checksum-file checks each file
// against its folder's sums file (a mismatch exits 9 and leaves nothing
// under its name); --checksum goes only with --only-newer, and says where
// the server cannot tell digests.
func TestMirrorChecksumFlags(t *testing.T) {
	digest := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o644)
	os.WriteFile(filepath.Join(root, "b.txt"), []byte("bravo, changed\n"), 0o644)
	os.WriteFile(filepath.Join(root, "MD5SUMS"), []byte(digest("alpha\n")+"  a.txt\n"+digest("bravo\n")+"  b.txt\n"), 0o644)
	s, err := ftpd.Start(root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dst := t.TempDir()
	r := runDeref(t, "", "mirror", "--checksum-file", "MD5SUMS", s.URL(), dst)
	if _, err := os.Stat(filepath.Join(dst, "b.txt")); r.code != 9 || !os.IsNotExist(err) || !strings.Contains(r.stderr, "b.txt") {
		t.Errorf("mismatch: exit %d, %v, %s", r.code, err, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "a.txt")); string(b) != "alpha\n" {
		t.Errorf("a.txt: %q", b)
	}
	if r := runDeref(t, "", "mirror", "--ignore-times", "--checksum", s.URL(), dst); r.code != 1 || !strings.Contains(r.stderr, "--ignore-times fetches every file") {
		t.Errorf("--checksum with --ignore-times: exit %d, %s", r.code, r.stderr)
	}
	r = runDeref(t, "", "mirror", "--only-newer", "--checksum", s.URL(), dst)
	if r.code != 0 || strings.Count(r.stderr, "cannot tell digests") != 1 {
		t.Errorf("a server without digests: exit %d, %s", r.code, r.stderr)
	}
}
