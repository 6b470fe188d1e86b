//go:build unix

package dirlock

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// lock takes flock(2) on the folder itself: nothing is written in it,
// and the lock ends with the descriptor.
func lock(dir string, shared bool) (func(), error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	how := unix.LOCK_EX
	if shared {
		how = unix.LOCK_SH
	}
	for {
		err = unix.Flock(fd, how|unix.LOCK_NB)
		if err != unix.EINTR {
			break
		}
	}
	switch {
	case err == unix.EWOULDBLOCK:
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", dir, ErrLocked)
	case err != nil:
		unix.Close(fd)
		return nil, fmt.Errorf("%s: locking: %w", dir, err)
	}
	return func() { unix.Close(fd) }, nil
}
