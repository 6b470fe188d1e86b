//go:build !unix

package testserver

import "os"

// MaxRSS is -1 where the system does not say a process's peak memory.
func MaxRSS(*os.ProcessState) int64 { return -1 }
