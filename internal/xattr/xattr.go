// Package xattr writes a downloaded file's metadata into its extended
// attributes, as curl --xattr and wget --xattr do: the URL it came from
// (user.xdg.origin.url, credentials left out) and its media type
// (user.mime_type), the names freedesktop.org's shared metadata
// conventions give them.
package xattr

import "errors"

// ErrUnsupported is returned where this system has no user extended
// attributes that the package writes.
var ErrUnsupported = errors.New("extended attributes are not written on this system")

// Set writes each name and value of attrs (names with their "user."
// namespace) to the file at path, stopping at the first error.
func Set(path string, attrs [][2]string) error {
	for _, a := range attrs {
		if err := set(path, a[0], a[1]); err != nil {
			return err
		}
	}
	return nil
}
