package fetch

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOpenFolders: downloads into one folder at once share its handle;
// the last to end closes it, and a later download opens the folder by
// its path again, which may now be another folder.
func TestOpenFolders(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	os.Mkdir(dir, 0o755)
	var fs openFolders
	a, err := fs.open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fs.open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatalf("two downloads at once opened %p and %p", a, b)
	}
	fs.release(dir, a)
	if _, ok := b.d.Identity(); !ok {
		t.Fatal("the folder was closed while a download still used it")
	}
	fs.release(dir, b)
	if id, ok := b.d.Identity(); ok && a.known && id == a.identity {
		t.Error("the folder is still open after its last download")
	}
	if len(fs.m) != 0 {
		t.Errorf("%d folders kept", len(fs.m))
	}

	os.Rename(dir, dir+".old")
	os.Mkdir(dir, 0o755)
	c, err := fs.open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.release(dir, c)
	if c == a || c.known && c.identity == a.identity {
		t.Errorf("a later download writes into the folder renamed away (%s)", c.identity)
	}
}
