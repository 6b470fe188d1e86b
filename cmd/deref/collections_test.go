package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/internal/testserver/gopherd"
)

// TestCollections: a second crawl into one --warc-file names the file it
// goes on in; --archive naming the series' first file serves both
// crawls as one collection, as do two flags naming two of its files;
// "." is a collection under its folder's name; a file with no capture is
// refused, naming it.
func TestCollections(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644)
	gs := &gopherd.Server{Root: root}
	if err := gs.Start(); err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	dir := filepath.Join(t.TempDir(), "holes")
	os.MkdirAll(dir, 0o755)
	hole := filepath.Join(dir, "hole")
	menu := "gopher://" + gs.Addr() + "/1/"
	if r := runDeref(t, "", "crawl", "--warc-file", hole, menu); r.code != 0 || strings.Contains(r.stderr, "is there already") {
		t.Fatalf("first crawl: exit %d, %q", r.code, r.stderr)
	}
	os.WriteFile(filepath.Join(root, "b.txt"), []byte("b\n"), 0o644)
	r := runDeref(t, "", "crawl", "--warc-file", hole, menu)
	if want := "the records go on in " + hole + "-00001.warc.gz "; r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("second crawl: exit %d, %q lacks %q", r.code, r.stderr, want)
	}
	for _, paths := range [][]string{{hole + ".warc.gz"}, {hole + ".warc.gz", hole + "-00001.warc.gz"}, {hole + "-00001.warc.gz"}} {
		var errb bytes.Buffer
		colls, err := openCollections(paths, &errb)
		if err != nil || len(colls) != 1 || colls["hole"] == nil {
			t.Fatalf("%q: %v %v", paths, colls, err)
		}
		a := colls["hole"]
		if n := len(a.Captures(menu)); n != 2 {
			t.Errorf("%q: %d captures of the menu, want one of each crawl", paths, n)
		}
		if len(a.Captures("gopher://"+gs.Addr()+"/0/b.txt")) != 1 {
			t.Errorf("%q: the second crawl's new file is not there", paths)
		}
		a.Close()
	}
	t.Chdir(dir)
	colls, err := openCollections([]string{"."}, &bytes.Buffer{})
	if err != nil || colls["holes"] == nil || len(colls) != 1 {
		t.Errorf(`--archive ".": %v %v`, colls, err)
	}
	for _, a := range colls {
		a.Close()
	}
	os.WriteFile("notes.txt", []byte("not a WARC file\n"), 0o644)
	var errb bytes.Buffer
	if _, err := openCollections([]string{"notes.txt"}, &errb); err == nil || !strings.Contains(err.Error(), "notes.txt") || !strings.Contains(errb.String(), "notes.txt: no capture") {
		t.Errorf("a file that is not a WARC file: %v; %q", err, errb.String())
	}
}
