//go:build windows

package main

import (
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// openTTY opens the console for questions asked while standard input and
// output carry data: CONIN$ to read answers, CONOUT$ to ask.
func openTTY() (in, out *os.File, close func(), err error) {
	in, err = os.OpenFile("CONIN$", os.O_RDWR, 0)
	if err != nil {
		return nil, nil, nil, err
	}
	out, err = os.OpenFile("CONOUT$", os.O_RDWR, 0)
	if err != nil {
		in.Close()
		return nil, nil, nil, err
	}
	return in, out, func() { in.Close(); out.Close() }, nil
}

// resizes delivers a value every half second: a Windows console reports
// size changes only as input records, which reading bytes does not see,
// so the caller compares sizes itself.
func resizes() (ch <-chan os.Signal, stop func()) {
	c := make(chan os.Signal, 1)
	t := time.NewTicker(500 * time.Millisecond)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-t.C:
				select {
				case c <- os.Interrupt: // any value: "look again"
				default:
				}
			case <-done:
				return
			}
		}
	}()
	return c, func() { t.Stop(); close(done) }
}

// enableVT turns on the console's virtual-terminal processing for f, so
// that a remote host's escape sequences move the cursor and set colours
// as on a Unix terminal.
func enableVT(f *os.File) (restore func()) {
	h := windows.Handle(f.Fd())
	var mode uint32
	if windows.GetConsoleMode(h, &mode) != nil {
		return func() {}
	}
	if windows.SetConsoleMode(h, mode|windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING) != nil {
		return func() {}
	}
	return func() { windows.SetConsoleMode(h, mode) }
}
