//go:build !unix && !windows

package fetch

var unwritableErrors []error
