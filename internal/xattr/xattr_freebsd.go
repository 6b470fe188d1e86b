//go:build freebsd

package xattr

import (
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// set writes name in FreeBSD's user namespace, which takes the name
// without its "user." prefix.
func set(path, name, value string) error {
	b := []byte(value)
	var p uintptr
	if len(b) > 0 {
		p = uintptr(unsafe.Pointer(&b[0]))
	}
	_, err := unix.ExtattrSetFile(path, unix.EXTATTR_NAMESPACE_USER, strings.TrimPrefix(name, "user."), p, len(b))
	runtime.KeepAlive(b)
	return err
}
