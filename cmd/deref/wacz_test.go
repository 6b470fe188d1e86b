package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// deref wacz create packs a crawl's WARC file; validate finds nothing
// wrong with it, and says each problem of a damaged one (exit 7).
func TestWACZCommand(t *testing.T) {
	base := prosperoServer(t, nil)
	dir := t.TempDir()
	w := filepath.Join(dir, "p")
	if r := runDeref(t, "", "crawl", "--warc-file", w, base+"/AFTP/pub/docs"); r.code != 0 {
		t.Fatalf("crawl: %+v", r)
	}
	out := filepath.Join(dir, "p.wacz")
	if r := runDeref(t, "", "wacz", "create", "-o", out, w+".warc.gz"); r.code != 0 {
		t.Fatalf("create: %+v", r)
	}
	if r := runDeref(t, "", "wacz", "validate", out); r.code != 0 || r.stdout != "" {
		t.Fatalf("validate: %+v", r)
	}
	b, _ := os.ReadFile(out)
	os.WriteFile(out, append(b[:len(b)/2], b[len(b)/2+1:]...), 0o644) // a byte gone
	if r := runDeref(t, "", "wacz", "validate", out); r.code != 7 {
		t.Errorf("a damaged package: %+v", r)
	}
	if r := runDeref(t, "", "wacz", "create", "-o", filepath.Join(dir, "x.wacz"), filepath.Join(dir, "none.warc.gz")); r.code != 1 || !strings.Contains(r.stderr, "none.warc.gz") {
		t.Errorf("a missing file: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.wacz")); err == nil {
		t.Error("a package was left under its name")
	}
}
