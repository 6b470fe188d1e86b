//go:build !windows

package fetch

import "syscall"

// errConnRefused is the error a refused connection unwraps to.
var errConnRefused error = syscall.ECONNREFUSED
