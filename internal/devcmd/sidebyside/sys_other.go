//go:build !unix

package main

import "os"

// syncDisks does nothing where there is no sync(2).
func syncDisks() {}

// maxRSS is unknown (0) where there is no getrusage.
func maxRSS(*os.ProcessState) int64 { return 0 }
