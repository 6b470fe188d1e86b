package crawl

import (
	"fmt"
	"os"
	"testing"
)

// TestFolders: folders in use are never closed; once given back, those
// past maxFolders are, and a folder closed is opened again when wanted.
func TestFolders(t *testing.T) {
	root, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fs := folders{root: root, open: map[string]*folder{}}
	defer fs.closeAll()
	const n = maxFolders + 6
	dirs := make([]*os.Root, n)
	releases := make([]func(), n)
	for i := range n {
		if dirs[i], releases[i], err = fs.acquire(fmt.Sprintf("h/d%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	// The last ones given back are the only idle ones: they are closed,
	// the older ones, still in use, are not.
	for i := n - 1; i >= maxFolders; i-- {
		releases[i]()
	}
	if len(fs.open) != maxFolders {
		t.Errorf("%d folders open, want %d", len(fs.open), maxFolders)
	}
	for i := range maxFolders {
		f, err := dirs[i].Create("x")
		if err != nil {
			t.Fatalf("folder %d, in use, was closed: %v", i, err)
		}
		f.Close()
	}
	for i := range maxFolders {
		releases[i]()
	}
	d, release, err := fs.acquire(fmt.Sprintf("h/d%d", n-1))
	if err != nil {
		t.Fatal(err)
	}
	if f, err := d.Create("y"); err != nil {
		t.Errorf("a folder opened again: %v", err)
	} else {
		f.Close()
	}
	release()
}
