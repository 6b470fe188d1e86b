package fetch

import "golang.org/x/sys/windows"

// errConnRefused is the error a refused connection unwraps to: Winsock's
// own number, which syscall.ECONNREFUSED does not match on Windows.
var errConnRefused error = windows.WSAECONNREFUSED
