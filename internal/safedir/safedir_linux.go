//go:build linux

package safedir

import (
	"os"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Dir is an open folder.
type Dir struct {
	fd int
}

// Open opens the folder path.
func Open(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{fd: fd}, nil
}

// OpenIn opens the folder rel ("" or "." for the root itself) through
// root, which keeps it inside the root.
func OpenIn(root *os.Root, rel string) (*Dir, error) {
	if rel == "" {
		rel = "."
	}
	f, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A descriptor of its own, so that the folder outlives f.
	var fd int
	var derr error
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, &os.PathError{Op: "dup", Path: rel, Err: derr}
	}
	return &Dir{fd: fd}, nil
}

// Close closes the folder.
func (d *Dir) Close() error { return unix.Close(d.fd) }

// Identity names the folder itself, the same for every path to it (its
// device and inode numbers); false when it cannot be had.
func (d *Dir) Identity() (string, bool) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return "", false
	}
	return strconv.FormatUint(st.Dev, 10) + ":" + strconv.FormatUint(st.Ino, 10), true
}

func (d *Dir) openFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return d.openat(name, flag|unix.O_WRONLY, perm)
}

func (d *Dir) open(name string) (*os.File, error) { return d.openat(name, unix.O_RDONLY, 0) }

// openat opens name in the folder, never following a link at it.
func (d *Dir) openat(name string, flag int, perm os.FileMode) (*os.File, error) {
	for {
		fd, err := unix.Openat(d.fd, name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}

func (d *Dir) modTime(name string) (time.Time, bool, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return time.Time{}, false, &os.PathError{Op: "stat", Path: name, Err: err}
	}
	return time.Unix(st.Mtim.Unix()), st.Mode&unix.S_IFMT == unix.S_IFREG, nil
}

func (d *Dir) stat(name string) (size int64, regular bool, err error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, false, &os.PathError{Op: "stat", Path: name, Err: err}
	}
	return st.Size, st.Mode&unix.S_IFMT == unix.S_IFREG, nil
}

// SetTimes sets the access and modification times of f, a file opened
// with OpenFile (name is its name, for errors).
func (d *Dir) SetTimes(f *os.File, name string, atime, mtime time.Time) error {
	ts := [2]unix.Timespec{unix.NsecToTimespec(atime.UnixNano()), unix.NsecToTimespec(mtime.UnixNano())}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		// futimens: utimensat on the descriptor itself (a nil path).
		_, _, errno = unix.Syscall6(unix.SYS_UTIMENSAT, fd, 0, uintptr(unsafe.Pointer(&ts[0])), 0, 0, 0)
	}); err != nil {
		return err
	}
	if errno != 0 {
		return &os.PathError{Op: "chtimes", Path: name, Err: errno}
	}
	return nil
}

func (d *Dir) remove(name string) error {
	if err := unix.Unlinkat(d.fd, name, 0); err != nil {
		return &os.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

func (d *Dir) rename(old, new string) error {
	if err := unix.Renameat(d.fd, old, d.fd, new); err != nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
	}
	return nil
}
