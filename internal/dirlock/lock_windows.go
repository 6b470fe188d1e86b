//go:build windows

package dirlock

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
)

// lock takes LockFileEx on a file of the system's temporary folder named
// by the folder's absolute path (a folder cannot be locked itself here,
// and nothing is written into it): the lock ends with the handle, when
// the process ends however it ends.
func lock(dir string, shared bool) (func(), error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	sum := sha256.Sum256([]byte(strings.ToLower(filepath.Clean(abs))))
	name := filepath.Join(os.TempDir(), "deref-folder-"+hex.EncodeToString(sum[:12])+".lock")
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s: locking: %w", dir, err)
	}
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if !shared {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	ol := new(windows.Overlapped)
	if err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, ol); err != nil {
		f.Close()
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			return nil, fmt.Errorf("%s: %w", dir, ErrLocked)
		}
		return nil, fmt.Errorf("%s: locking: %w", dir, err)
	}
	return func() { f.Close() }, nil
}
