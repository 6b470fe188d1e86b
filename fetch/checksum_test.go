package fetch_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/fetch"
)

func TestFindChecksum(t *testing.T) {
	sha := hex.EncodeToString(make([]byte, 32))
	sums := "# made by sha256sum\n" + sha + "  a.txt\n" + strings.Repeat("1", 64) + " *b.bin\n" +
		"SHA512 (c.tar) = " + strings.Repeat("2", 128) + "\n" + strings.Repeat("3", 32) + "  ./d\n"
	for name, want := range map[string]string{
		"a.txt": "sha256:" + sha,
		"b.bin": "sha256:" + strings.Repeat("1", 64),
		"c.tar": "sha512:" + strings.Repeat("2", 128),
		"d":     "md5:" + strings.Repeat("3", 32),
	} {
		c, ok, err := fetch.FindChecksum(strings.NewReader(sums), name)
		if err != nil || !ok || c.String() != want {
			t.Errorf("%s: %v %v %v, want %s", name, c, ok, err, want)
		}
	}
	if _, ok, _ := fetch.FindChecksum(strings.NewReader(sums), "e"); ok {
		t.Error("found a line for a name the file lacks")
	}
	for _, bad := range []string{"sha256", "crc32:00", "sha256:zz", "sha1:" + sha} {
		if _, err := fetch.ParseChecksum(bad); err == nil {
			t.Errorf("ParseChecksum(%q) accepted", bad)
		}
	}
}

// ReadChecksums reads every form FindChecksum reads, keeps the first
// line of a name, and refuses a digest of no algorithm's length.
func TestReadChecksums(t *testing.T) {
	sums := "# comment\n\n" + strings.Repeat("a", 64) + "  a.txt\n" + strings.Repeat("b", 40) + " *./sub/b.bin\n" +
		"MD5 (with space.txt) = " + strings.Repeat("c", 32) + "\n" + strings.Repeat("d", 64) + "  a.txt\n" +
		"SHA1 (x) = " + strings.Repeat("e", 40) + "\nnot a sums line\n"
	got, err := fetch.ReadChecksums(strings.NewReader(sums))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"a.txt":          "sha256:" + strings.Repeat("a", 64),
		"sub/b.bin":      "sha1:" + strings.Repeat("b", 40),
		"with space.txt": "md5:" + strings.Repeat("c", 32),
		"x":              "sha1:" + strings.Repeat("e", 40),
	}
	if len(got) != len(want) {
		t.Errorf("%d digests: %v", len(got), got)
	}
	for n, w := range want {
		if got[n].String() != w {
			t.Errorf("%s: %s, want %s", n, got[n], w)
		}
	}
	for _, bad := range []string{strings.Repeat("a", 63) + "  a\n", "SHA256 (a) = " + strings.Repeat("a", 40) + "\n", "CRC32 (a) = 00000000\n"} {
		if _, err := fetch.ReadChecksums(strings.NewReader(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestDownloadChecksum: the digest is computed as the object streams (over
// the part already there when resuming) and checked before the rename; a
// mismatch leaves neither the file nor its part.
func TestDownloadChecksum(t *testing.T) {
	root := t.TempDir()
	body := strings.Repeat("0123456789", 1000)
	os.WriteFile(filepath.Join(root, "obj"), []byte(body), 0o644)
	good := sha256.Sum256([]byte(body))
	c := fetch.NewClient()
	src := "file://" + filepath.ToSlash(root) + "/obj"

	dir := t.TempDir()
	sum := fetch.Checksum{Algorithm: "sha256", Sum: good[:]}
	if _, err := c.DownloadWith(context.Background(), src, dir, fetch.DownloadOptions{Checksum: &sum}); err != nil {
		t.Fatalf("matching digest: %v", err)
	}

	// Resuming: the first 4000 bytes are there already.
	dir = t.TempDir()
	os.WriteFile(filepath.Join(dir, "obj.part"), []byte(body[:4000]), 0o644)
	if _, err := c.DownloadWith(context.Background(), src, dir, fetch.DownloadOptions{Checksum: &sum, Resume: true}); err != nil {
		t.Fatalf("resumed with a matching digest: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "obj")); string(b) != body {
		t.Errorf("resumed file of %d bytes", len(b))
	}

	dir = t.TempDir()
	bad := fetch.Checksum{Algorithm: "sha256", Sum: make([]byte, 32)}
	_, err := c.DownloadWith(context.Background(), src, dir, fetch.DownloadOptions{Checksum: &bad})
	if !errors.Is(err, fetch.ErrChecksum) || fetch.ExitCode(err) != 9 {
		t.Errorf("mismatch: %v (exit %d)", err, fetch.ExitCode(err))
	}
	if des, _ := os.ReadDir(dir); len(des) != 0 {
		t.Errorf("left after a mismatch: %v", des)
	}
}
