//go:build !linux && !darwin && !freebsd

package xattr

func set(path, name, value string) error { return ErrUnsupported }
