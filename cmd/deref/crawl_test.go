package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/internal/testserver/gopherd"
)

// TestCrawlCommand: deref crawl walks a Gopher server's menus into a WARC
// file with its index, reports as JSON, and refuses a bad scope.
func TestCrawlCommand(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "docs", "old"), 0o755)
	os.WriteFile(filepath.Join(root, "about.txt"), []byte("about\n"), 0o644)
	os.WriteFile(filepath.Join(root, "docs", "guide.txt"), []byte("guide\n"), 0o644)
	os.WriteFile(filepath.Join(root, "docs", "old", "notes.txt"), []byte("notes\n"), 0o644)
	gs := &gopherd.Server{Root: root}
	if err := gs.Start(); err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	dir := t.TempDir()
	r := runDeref(t, "", "crawl", "--json", "--warc-file", filepath.Join(dir, "hole"), "--warc-cdx", "gopher://"+gs.Addr()+"/1/")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep struct{ Fetched, Failed int }
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Fetched != 6 || rep.Failed != 0 {
		t.Errorf("report %q: %+v %v", r.stdout, rep, err)
	}
	cdx, _ := os.ReadFile(filepath.Join(dir, "hole.cdxj"))
	if n := strings.Count(string(cdx), "\n"); n != 6 || !strings.Contains(string(cdx), "/0/docs/old/notes.txt") {
		t.Errorf("%d index lines:\n%s", n, cdx)
	}
	out := filepath.Join(dir, "tree")
	r = runDeref(t, "", "crawl", "-s", "--output-dir", out, "gopher://"+gs.Addr()+"/1/")
	host, port, _ := strings.Cut(gs.Addr(), ":")
	if b, err := os.ReadFile(filepath.Join(out, host+"_"+port, "docs", "old", "notes.txt")); r.code != 0 || string(b) != "notes\n" {
		t.Errorf("--output-dir: exit %d, %q %v: %s", r.code, b, err, r.stderr)
	}
	r = runDeref(t, "", "crawl", "--max-depth", "1", "--json", "gopher://"+gs.Addr()+"/1/")
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Fetched != 3 {
		t.Errorf("depth 1: %q", r.stdout)
	}
	if r := runDeref(t, "", "crawl", "--scope", "world", "gopher://"+gs.Addr()+"/1/"); r.code != 1 || !strings.Contains(r.stderr, "--scope") {
		t.Errorf("a bad scope: exit %d, %s", r.code, r.stderr)
	}
}
