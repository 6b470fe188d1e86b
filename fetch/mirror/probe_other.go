//go:build !unix

package mirror

import "time"

// probeStale says whether a case probe that process pid made is left
// over: where deref does not ask whether the process runs, one made
// more than a minute ago (a probe lives for a few system calls).
func probeStale(_ int, made time.Time) bool {
	return time.Since(made) > time.Minute
}
