//go:build !unix

package file

import "os"

// open opens name for reading.
func open(name string) (*os.File, error) { return os.Open(name) }
