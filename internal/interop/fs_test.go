//go:build interop

package interop

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/urlderef/deref/fetch"
)

// TestFS checks fetch.NewFS with testing/fstest against the pub folder as
// vsftpd, proftpd, pygopherd and nginx serve it, and against INN's
// local.test group, and copies vsftpd's folder with os.CopyFS.
func TestFS(t *testing.T) {
	tree := filepath.Join(env(t, "DEREF_INTEROP_TREE"), "pub")
	files := treeFiles(t, tree)
	for name, src := range mirrorSources(t) {
		t.Run(name, func(t *testing.T) {
			fsys, err := fetch.NewFS(context.Background(), client(), src)
			if err != nil {
				t.Fatal(err)
			}
			if err := fstest.TestFS(fsys, files...); err != nil {
				t.Fatal(err)
			}
			for _, rel := range files {
				want, _ := os.ReadFile(filepath.Join(tree, rel))
				got, err := fs.ReadFile(fsys, rel)
				if err != nil {
					t.Errorf("%s: %v", rel, err)
				} else if !bytes.Equal(got, want) && !(name == "pygopherd" && bytes.Equal(got, bytes.ReplaceAll(want, []byte("\r\n"), []byte("\n")))) {
					t.Errorf("%s: %d bytes, want %d", rel, len(got), len(want))
				}
			}
			if name == "vsftpd" {
				dst := filepath.Join(t.TempDir(), "copy")
				if err := os.CopyFS(dst, fsys); err != nil {
					t.Fatal(err)
				}
				compareTree(t, dst, tree, false)
			}
		})
	}
	t.Run("inn", func(t *testing.T) {
		fsys, err := fetch.NewFS(context.Background(), newsClient(t), env(t, "DEREF_INTEROP_NEWS")+"/local.test")
		if err != nil {
			t.Fatal(err)
		}
		var numbers []string
		for _, p := range manifest(t) {
			numbers = append(numbers, p.number)
		}
		if err := fstest.TestFS(fsys, numbers...); err != nil {
			t.Fatal(err)
		}
		for _, p := range manifest(t) {
			b, err := fs.ReadFile(fsys, p.number)
			if err != nil || !bytes.Equal(bodyOf(t, b), p.body) {
				t.Errorf("article %s: %v", p.number, err)
			}
		}
	})
}
