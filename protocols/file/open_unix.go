//go:build unix

package file

import (
	"io/fs"
	"os"
	"syscall"
)

// open opens name for reading. A named pipe is opened without blocking, so
// that one with no writer does not hold the retrieval in the open call,
// out of reach of its time-outs: its reads then wait in the runtime's
// poller, which closing the body ends.
func open(name string) (*os.File, error) {
	if st, err := os.Lstat(name); err == nil && st.Mode()&fs.ModeNamedPipe != 0 {
		return os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	}
	return os.Open(name)
}
