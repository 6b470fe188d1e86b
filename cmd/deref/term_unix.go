//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// openTTY opens the controlling terminal for questions asked while
// standard input and output carry data: in to read answers, out to ask.
// close closes what it opened.
func openTTY() (in, out *os.File, close func(), err error) {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, nil, nil, err
	}
	return f, f, func() { f.Close() }, nil
}

// resizes delivers a value when the terminal's size may have changed
// (SIGWINCH), until stop is called.
func resizes() (ch <-chan os.Signal, stop func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGWINCH)
	return c, func() { signal.Stop(c) }
}

// enableVT makes the terminal of f interpret escape sequences; Unix
// terminals always do.
func enableVT(f *os.File) (restore func()) { return func() {} }
