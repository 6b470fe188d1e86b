package mirror

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// A case probe a killed mirror left (its process gone) is removed by the
// next run's probe; the running process's own, and other names, stay.
func TestStaleProbes(t *testing.T) {
	dir := t.TempDir()
	left := ".deref-case-2147483646-7.part" // no such process
	own := fmt.Sprintf(".deref-case-%d-7.part", os.Getpid())
	for _, n := range []string{left, own, ".deref-case-x", "kept.txt"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	old := time.Now().Add(-2 * time.Hour) // stale where the process is not asked for, too
	os.Chtimes(filepath.Join(dir, left), old, old)
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	foldsCase(r)
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{".deref-case-x", own, "kept.txt"}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("left %q", names)
	}
}
