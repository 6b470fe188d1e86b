//go:build windows

package fetch

import "syscall"

// ERROR_HANDLE_DISK_FULL (39), ERROR_DISK_FULL (112), ERROR_WRITE_PROTECT
// (19) and ERROR_DISK_QUOTA_EXCEEDED (1295).
var unwritableErrors = []error{syscall.Errno(39), syscall.Errno(112), syscall.Errno(19), syscall.Errno(1295)}
