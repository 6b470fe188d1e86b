package fetch_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/url"
)

func fileURL(p string) string {
	segs := strings.Split(filepath.ToSlash(p), "/")
	for i, s := range segs {
		segs[i] = url.EscapeSegment(s)
	}
	return "file://" + strings.Join(segs, "/")
}

func TestFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a b.txt")
	os.WriteFile(name, []byte("hello, file\n"), 0o644)
	os.Chtimes(name, modTime, modTime)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "raw.dat"), []byte{0, 1, 2, 3}, 0o644)
	c := newClient()

	resp, err := c.Get(context.Background(), fileURL(name))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello, file\n" || resp.Size != 12 || resp.MediaType != "text/plain" || !resp.ModTime.Equal(modTime) || resp.Name != "a b.txt" {
		t.Errorf("file: %q %+v", b, resp)
	}
	// localhost is this machine too (RFC 1738 §3.10).
	resp, err = c.Get(context.Background(), strings.Replace(fileURL(name), "file://", "file://localhost", 1))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// Resume.
	resp, err = c.Fetch(context.Background(), url.MustParse(fileURL(name)), 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "file\n" || resp.Offset != 7 {
		t.Errorf("resume: %q at %d", b, resp.Offset)
	}
	if _, err := c.Fetch(context.Background(), url.MustParse(fileURL(name)), 13); !errors.Is(err, fetch.ErrRangeNotSatisfied) {
		t.Errorf("beyond the end: %v", err)
	}
	// Sniffed media type when the suffix says nothing.
	resp, _ = c.Get(context.Background(), fileURL(filepath.Join(dir, "raw.dat")))
	resp.Body.Close()
	if resp.MediaType != "application/octet-stream" {
		t.Errorf("sniffed type %q", resp.MediaType)
	}
	// A directory is a listing.
	resp, err = c.Get(context.Background(), fileURL(dir))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Kind != fetch.KindDirectory || len(resp.Entries) != 3 {
		t.Fatalf("listing: %v %+v", resp.Kind, resp.Entries)
	}
	e := resp.Entries[0]
	if e.Name != "a b.txt" || e.Size != 12 || e.Kind != fetch.KindFile || e.URL != fileURL(dir)+"/a%20b.txt" || !e.ModTime.Equal(modTime) {
		t.Errorf("entry %+v", e)
	}
	if s := resp.Entries[2]; s.Kind != fetch.KindDirectory || !strings.HasSuffix(s.URL, "/sub/") {
		t.Errorf("sub-directory entry %+v", s)
	}
	want := "file\t12\t2020-01-02T03:04:05Z\ta b.txt\t" + fileURL(dir) + "/a%20b.txt\n"
	if !strings.HasPrefix(string(raw), want) {
		t.Errorf("listing text %q, want it to start %q", raw, want)
	}
	// Every entry URL can be dereferenced.
	for _, e := range resp.Entries {
		r, err := c.Get(context.Background(), e.URL)
		if err != nil {
			t.Errorf("entry URL %s: %v", e.URL, err)
			continue
		}
		r.Body.Close()
	}
	if _, err := c.Get(context.Background(), fileURL(filepath.Join(dir, "nope"))); !errors.Is(err, fetch.ErrNotFound) {
		t.Errorf("missing file: %v", err)
	}
}

func TestFileDownloadUsesCopy(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.bin")
	f, _ := os.Create(src)
	f.Truncate(8 << 20)
	f.Close()
	out := t.TempDir()
	c := newClient()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := c.Download(ctx, fileURL(src), out)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if st.Size() != 8<<20 {
		t.Errorf("copied %d bytes", st.Size())
	}
}
