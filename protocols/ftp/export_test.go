package ftp

import "time"

// SetShutTimeout sets the bound on a transfer's final reply for the
// sessions dialled until restore is called.
func SetShutTimeout(d time.Duration) (restore func()) {
	was := shutTimeout
	shutTimeout = d
	return func() { shutTimeout = was }
}
