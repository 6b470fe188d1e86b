//go:build !unix

package crawl_test

import "os"

// maxRSS is -1 where the system does not say a process's peak memory.
func maxRSS(*os.ProcessState) int64 { return -1 }
