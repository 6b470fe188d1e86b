//go:build linux || darwin

package xattr

import "golang.org/x/sys/unix"

func set(path, name, value string) error {
	return unix.Setxattr(path, name, []byte(value), 0)
}
