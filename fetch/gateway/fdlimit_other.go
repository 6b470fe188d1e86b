//go:build !unix

package gateway

// fdLimit is what the process may open where no limit is known: Windows
// has no per-process descriptor limit that sockets count against.
func fdLimit() int { return 8192 }
