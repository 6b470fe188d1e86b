//go:build linux

package rcvlowat

import (
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/urlderef/deref/internal/testserver"
)

func sockopt(t *testing.T, c net.Conn, opt int) int {
	t.Helper()
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var serr error
	if err := rc.Control(func(fd uintptr) { v, serr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, opt) }); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	return v
}

func TestMarkRaisedWithinTheBuffer(t *testing.T) {
	c, _ := testserver.Pair(t)
	if b := Start(c, MinSize-1); b != nil {
		t.Fatal("raised for an object below MinSize")
	}
	if got := sockopt(t, c, unix.SO_RCVLOWAT); got != 1 {
		t.Fatalf("mark %d, want 1", got)
	}
	b := Start(c, 64<<20)
	if b == nil {
		t.Fatal("not raised for a 64 MiB object")
	}
	defer b.Stop()
	mark, rcvbuf := sockopt(t, c, unix.SO_RCVLOWAT), sockopt(t, c, unix.SO_RCVBUF)
	if mark <= 1 || mark > Mark || mark > rcvbuf/4 {
		t.Fatalf("mark %d with a %d-byte buffer; want 1 < mark <= min(%d, buffer/4)", mark, rcvbuf, Mark)
	}
}

func TestMarkFollowsTheTailAndStopResets(t *testing.T) {
	c, _ := testserver.Pair(t)
	b := Start(c, 64<<20)
	if b == nil {
		t.Fatal("not raised")
	}
	b.Progress(100)
	if got := sockopt(t, c, unix.SO_RCVLOWAT); got != 100 {
		t.Fatalf("mark %d with 100 bytes to come, want 100", got)
	}
	b.Progress(5000) // the tail never grows the mark again
	if got := sockopt(t, c, unix.SO_RCVLOWAT); got != 100 {
		t.Fatalf("mark %d after a later report, want 100", got)
	}
	b.Stop()
	if got := sockopt(t, c, unix.SO_RCVLOWAT); got != 1 {
		t.Fatalf("mark %d after Stop, want 1", got)
	}
	var nilBatch *Batch
	nilBatch.Progress(1) // a nil Batch does nothing
	nilBatch.Stop()
}

// A reader waiting for a chunk that never comes gets the bytes that did:
// the stall watch puts the mark back, which wakes it.
func TestStallHandsOverWhatArrived(t *testing.T) {
	c, s := testserver.Pair(t)
	b := Start(c, 64<<20)
	if b == nil {
		t.Fatal("not raised")
	}
	defer b.Stop()
	go func() {
		time.Sleep(10 * time.Millisecond) // the reader is waiting by then
		s.Write(make([]byte, 1000))       // far below the mark; the connection stays open
	}()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 4096)
	n, err := io.ReadAtLeast(c, buf, 1000)
	if err != nil || n != 1000 {
		t.Fatalf("read %d bytes, %v; want the 1000 that arrived", n, err)
	}
	if got := sockopt(t, c, unix.SO_RCVLOWAT); got != 1 {
		t.Fatalf("mark %d after a stall, want 1", got)
	}
}
