//go:build !linux

package safedir

import (
	"os"
	"time"
)

// Dir is an open folder.
type Dir struct {
	root *os.Root
}

// Open opens the folder path.
func Open(path string) (*Dir, error) {
	r, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	return &Dir{root: r}, nil
}

// OpenIn opens the folder rel ("" or "." for the root itself) through
// root, which keeps it inside the root.
func OpenIn(root *os.Root, rel string) (*Dir, error) {
	if rel == "" {
		rel = "."
	}
	r, err := root.OpenRoot(rel)
	if err != nil {
		return nil, err
	}
	return &Dir{root: r}, nil
}

// Close closes the folder.
func (d *Dir) Close() error { return d.root.Close() }

// Identity names the folder itself, the same for every path to it; here
// it cannot be had.
func (d *Dir) Identity() (string, bool) { return "", false }

func (d *Dir) openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return d.root.OpenFile(name, flag|os.O_WRONLY, perm)
}

func (d *Dir) open(name string) (*os.File, error) { return d.root.Open(name) }

func (d *Dir) modTime(name string) (time.Time, bool, error) {
	st, err := d.root.Lstat(name)
	if err != nil {
		return time.Time{}, false, err
	}
	return st.ModTime(), st.Mode().IsRegular(), nil
}

func (d *Dir) stat(name string) (size int64, regular bool, err error) {
	st, err := d.root.Lstat(name)
	if err != nil {
		return 0, false, err
	}
	return st.Size(), st.Mode().IsRegular(), nil
}

// SetTimes sets the access and modification times of f, a file opened
// with OpenFile under name.
func (d *Dir) SetTimes(f *os.File, name string, atime, mtime time.Time) error {
	return d.root.Chtimes(name, atime, mtime)
}

func (d *Dir) remove(name string) error { return d.root.Remove(name) }

func (d *Dir) rename(old, new string) error {
	return d.root.Rename(old, new)
}
