package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/internal/dirlock"
)

// TestMirrorFolderInUse: deref mirror into a folder another mirror holds
// is refused on one line naming the folder, and writes nothing there.
func TestMirrorFolderInUse(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("a\n"), 0o644)
	dst := t.TempDir()
	release, err := dirlock.Lock(dst, false)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	r := runDeref(t, "", "mirror", "file://"+filepath.ToSlash(src)+"/", dst)
	if r.code == 0 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "being written by another mirror") || !strings.Contains(r.stderr, dst) {
		t.Errorf("exit %d, %q", r.code, r.stderr)
	}
	if entries, _ := os.ReadDir(dst); len(entries) != 0 {
		t.Errorf("written into the locked folder: %v", entries)
	}
}
