//go:build !linux

// Package splice moves bytes from a socket into a file or another socket
// without passing them through user space; on this system it always reports ErrUnsupported.
package splice

import (
	"errors"
	"syscall"
)

// ErrUnsupported means the pair cannot be spliced: the caller copies with
// Read and Write instead.
var ErrUnsupported = errors.New("splice: not supported on this system")

// Copy always returns ErrUnsupported here.
func Copy(dst Dst, src syscall.Conn, n int64, step func(int64) error) (int64, error) {
	return 0, ErrUnsupported
}
