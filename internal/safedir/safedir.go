// Package safedir writes files into one folder by names of a single path
// element, with system calls relative to the folder's descriptor that
// never follow a symbolic link at the name: a name cannot lead outside
// the folder, as with os.Root, at a fraction of os.Root's cost per file
// (os.Root's OpenFile probes the network poller with four fcntl calls and
// an epoll_ctl, its Chtimes reads the name as a link first, its Rename
// looks at the target first). Where the system has no such calls, the
// same operations go through an os.Root.
package safedir

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// OpenFile opens or creates the file name in the folder for writing with
// flag (os.O_CREATE, os.O_TRUNC, os.O_EXCL as wanted; os.O_WRONLY is
// implied) and mode perm. A symbolic link at name is an error where the
// system can tell (Linux).
func (d *Dir) OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	if err := check("open", name); err != nil {
		return nil, err
	}
	return d.openFile(name, flag, perm)
}

// Stat describes the entry name of the folder, not following a link.
func (d *Dir) Stat(name string) (size int64, regular bool, err error) {
	if err := check("stat", name); err != nil {
		return 0, false, err
	}
	return d.stat(name)
}

// Open opens the file name of the folder for reading. A symbolic link at
// name is an error where the system can tell (Linux).
func (d *Dir) Open(name string) (*os.File, error) {
	if err := check("open", name); err != nil {
		return nil, err
	}
	return d.open(name)
}

// ModTime is the modification time of the entry name, not following a
// link, and whether it is a regular file.
func (d *Dir) ModTime(name string) (mod time.Time, regular bool, err error) {
	if err := check("stat", name); err != nil {
		return time.Time{}, false, err
	}
	return d.modTime(name)
}

// Remove removes the file name from the folder.
func (d *Dir) Remove(name string) error {
	if err := check("remove", name); err != nil {
		return err
	}
	return d.remove(name)
}

// Rename renames old to new within the folder, replacing new.
func (d *Dir) Rename(old, new string) error {
	if err := check("rename", old); err != nil {
		return err
	}
	if err := check("rename", new); err != nil {
		return err
	}
	return d.rename(old, new)
}

// LocalName says whether a name from a server may become a local file
// name as it is: one path element, not "." or "..", no separator ("/" or
// "\"), no control character, and local on this system
// (filepath.IsLocal: no drive letter, no reserved device name).
func LocalName(n string) bool {
	if n == "" || n == "." || n == ".." || path.IsAbs(n) || !filepath.IsLocal(n) {
		return false
	}
	return !strings.ContainsFunc(n, func(r rune) bool { return r == '/' || r == '\\' || r < 0x20 || r == 0x7f })
}

// ErrName is returned for a name that is not a single path element.
var ErrName = errors.New("not a single file name")

// check reports whether name is one path element.
func check(op, name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return &os.PathError{Op: op, Path: name, Err: ErrName}
	}
	return nil
}
