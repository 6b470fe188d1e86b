//go:build linux

package rcvlowat

import (
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/urlderef/deref/protocols/internal/sockfd"
)

// Batch is the raised mark of one connection. Its methods do nothing on
// a nil Batch.
type Batch struct {
	rc    syscall.RawConn
	timer *time.Timer

	mu   sync.Mutex
	mark int  // the mark now set
	tail bool // the mark is the bytes still expected: it only goes down
	flat int  // raises in a row that found the buffer no larger
	off  bool // stopped, or given up after a stall: the mark is one byte
}

// Start raises c's mark when left bytes (at least MinSize) are expected and
// c is a socket; otherwise it returns nil. Stop must follow before c is
// read for anything else or closed.
func Start(c net.Conn, left int64) *Batch {
	if left < MinSize {
		return nil
	}
	rc, ok := sockfd.Raw(c)
	if !ok {
		return nil
	}
	b := &Batch{rc: rc, mark: 1}
	if !b.raise() {
		return nil
	}
	b.timer = time.AfterFunc(Stall, b.stall)
	b.timeout(Stall)
	return b
}

// timeout sets the socket's receive time-out. A reader blocked in read(2)
// (internal/blockconn) waits for the mark as computed when its read began:
// the time-out makes it come back with what has arrived after d, as the
// stall watch wants. A non-blocking socket is not affected.
func (b *Batch) timeout(d time.Duration) {
	tv := unix.NsecToTimeval(d.Nanoseconds())
	b.rc.Control(func(fd uintptr) {
		unix.SetsockoptTimeval(int(fd), unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	})
}

// Progress records that data arrived and left bytes are still expected.
func (b *Batch) Progress(left int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.off {
		return
	}
	b.timer.Reset(Stall)
	if !b.tail && b.mark < Mark && b.flat < 4 {
		b.raise()
	}
	if left < int64(b.mark) {
		b.tail = true
		b.set(int(max(left, 1)))
	}
}

// Stop puts the mark back to one byte.
func (b *Batch) Stop() {
	if b == nil {
		return
	}
	b.timer.Stop()
	b.timeout(0)
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.off {
		b.off = true
		b.set(1)
	}
}

// stall gives the mark up: no chunk came within Stall. Setting the mark
// wakes a reader waiting for the chunk, and it reads what is there.
func (b *Batch) stall() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.off {
		b.off = true
		b.set(1)
	}
}

// raise sets the mark to a quarter of the receive buffer, up to Mark.
// The kernel grows the buffer as the reader keeps up; a mark beyond what
// the advertised window can hold would never be reached (and the kernel
// answers such a mark by growing the buffer once but capping the window
// at the mark, which stalls the sender at every chunk).
func (b *Batch) raise() bool {
	var rcvbuf int
	var serr error
	err := b.rc.Control(func(fd uintptr) {
		rcvbuf, serr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
	})
	if err != nil || serr != nil {
		return false
	}
	want := min(Mark, rcvbuf/4)
	if want <= b.mark {
		b.flat++ // the buffer stopped growing: asking again costs a call per chunk
		return true
	}
	b.flat = 0
	return b.set(want)
}

func (b *Batch) set(n int) bool {
	var serr error
	err := b.rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVLOWAT, n)
	})
	if err != nil || serr != nil {
		return false
	}
	b.mark = n
	return true
}
