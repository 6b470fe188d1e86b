//go:build !unix && !windows

package dirlock

// lock takes no lock here (no system deref is built for lacks one: Unix
// and Windows have theirs). Two runs into one folder are not kept apart.
func lock(string, bool) (func(), error) { return func() {}, nil }
