package fetch

import (
	"errors"
	"io/fs"
)

// Unwritable says whether err is a local write failure that no retry,
// and no other file of the same destination, can overcome: no space
// left, a quota reached, a read-only file system, or the destination
// folder removed under the run (a write that finds no folder). A run
// that meets one stops rather than fail every file after it, as curl
// stops at its exit 23, and says it once.
func Unwritable(err error) bool {
	if err == nil {
		return false
	}
	for _, e := range unwritableErrors {
		if errors.Is(err, e) {
			return true
		}
	}
	return errors.Is(err, ErrWrite) && errors.Is(err, fs.ErrNotExist)
}
