//go:build unix

package fetch

import "syscall"

var unwritableErrors = []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS}
