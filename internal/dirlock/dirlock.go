// Package dirlock keeps two processes from writing one folder at once:
// a mirror takes the folder's lock for as long as it writes there, and a
// second mirror into the same folder is refused at once rather than
// renaming the first one's NAME.part files from under it.
package dirlock

import "errors"

// ErrLocked says another process (or another run in this one) holds the
// folder's lock.
var ErrLocked = errors.New("another run is writing into the folder")

// Lock takes the lock of the folder dir without waiting: an exclusive
// one, or with shared a lock that other shared holders may hold too (runs
// that split one tree between them). release gives it back; the system
// gives it back when the process ends, however it ends: flock(2) on the
// folder itself on Unix, LockFileEx on a file of the temporary folder
// named after the folder's path on Windows. Where the system has no such
// lock (see lock_other.go), Lock takes none and succeeds.
func Lock(dir string, shared bool) (release func(), err error) {
	return lock(dir, shared)
}
