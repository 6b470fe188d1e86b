//go:build linux

package blockconn

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

type dialFunc func(ctx context.Context, addr string, timeout time.Duration) (net.Conn, error)

// eachDial runs test with Dial and with DialPolled.
func eachDial(t *testing.T, test func(*testing.T, dialFunc)) {
	t.Run("Dial", func(t *testing.T) { test(t, Dial) })
	t.Run("DialPolled", func(t *testing.T) { test(t, DialPolled) })
}

// serve accepts one connection on a new listener and hands it to f.
func serve(t *testing.T, f func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		f(c)
	}()
	return ln.Addr().String()
}

// openFDs is the process's open descriptors, each as its number and
// what it is ("7 socket:[123]"), so that a descriptor number used again
// for another socket counts as another.
func openFDs(t *testing.T) map[string]bool {
	des, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	fds := make(map[string]bool, len(des))
	for _, de := range des {
		if to, err := os.Readlink("/proc/self/fd/" + de.Name()); err == nil {
			fds[de.Name()+" "+to] = true
		}
	}
	return fds
}

// newFDs is what is open now that was not in before. Descriptors closed
// meanwhile do not count: connections an earlier test dropped are closed
// when the collector finds them, at any time.
func newFDs(t *testing.T, before map[string]bool) []string {
	var fds []string
	for fd := range openFDs(t) {
		if !before[fd] {
			fds = append(fds, fd)
		}
	}
	return fds
}

func TestReadWriteEOF(t *testing.T) { eachDial(t, testReadWriteEOF) }

func testReadWriteEOF(t *testing.T, dial dialFunc) {
	addr := serve(t, func(c net.Conn) {
		buf := make([]byte, 5)
		io.ReadFull(c, buf)
		c.Write([]byte("got " + string(buf)))
	})
	before := openFDs(t)
	c, err := dial(context.Background(), addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "got hello" {
		t.Fatalf("read %q, %v", got, err)
	}
	if ra := c.RemoteAddr().String(); ra != addr {
		t.Errorf("remote %s, want %s", ra, addr)
	}
	if la := c.LocalAddr().(*net.TCPAddr); !la.IP.IsLoopback() || la.Port == 0 {
		t.Errorf("local %v", la)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("read after close: %v", err)
	}
	if fds := newFDs(t, before); len(fds) > 0 {
		t.Errorf("open after close: %q", fds)
	}
}

// TestCloseWakesRead: a Read waiting for data returns net.ErrClosed (not
// io.EOF, which would pass for a complete transfer) when the connection
// is closed, and the descriptor is released after it.
func TestCloseWakesRead(t *testing.T) { eachDial(t, testCloseWakesRead) }

func testCloseWakesRead(t *testing.T, dial dialFunc) {
	hold, accepted := make(chan struct{}), make(chan struct{})
	defer close(hold)
	addr := serve(t, func(c net.Conn) { close(accepted); <-hold })
	before := openFDs(t)
	c, err := dial(context.Background(), addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	<-accepted
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("read ended with %v, want net.ErrClosed", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not wake the Read")
	}
	if fds := newFDs(t, before); len(fds) > 1 { // the server's end stays open
		t.Errorf("open after close: %q, and one of them the server's end", fds)
	}
}

func TestReadDeadline(t *testing.T) { eachDial(t, testReadDeadline) }

func testReadDeadline(t *testing.T, dial dialFunc) {
	hold := make(chan struct{})
	defer close(hold)
	addr := serve(t, func(c net.Conn) { <-hold })
	c, err := dial(context.Background(), addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	start := time.Now()
	_, err = c.Read(make([]byte, 10))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read: %v, want a deadline error", err)
	}
	if d := time.Since(start); d < 90*time.Millisecond || d > time.Second {
		t.Errorf("deadline came after %v, want 100ms", d)
	}
	c.SetReadDeadline(time.Time{})
	c.SetReadDeadline(time.Now().Add(-time.Second))
	if _, err := c.Read(make([]byte, 10)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read past the deadline: %v", err)
	}
}

// full returns the address of a listener whose queue is full: a connect
// to it waits for an answer that does not come.
func full(t *testing.T) string {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, _ := unix.Getsockname(fd)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*unix.SockaddrInet4).Port))
	for i := 0; i < 8; i++ {
		c, err := Dial(context.Background(), addr, 50*time.Millisecond)
		if err != nil {
			return addr
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Skip("the listener's queue never filled")
	return ""
}

func TestConnectTimeoutAndCancel(t *testing.T) { eachDial(t, testConnectTimeoutAndCancel) }

func testConnectTimeoutAndCancel(t *testing.T, dial dialFunc) {
	addr := full(t)
	start := time.Now()
	_, err := dial(context.Background(), addr, 200*time.Millisecond)
	if err == nil || !errors.Is(err, syscall.ETIMEDOUT) {
		t.Errorf("dial: %v, want a time-out", err)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > 2*time.Second {
		t.Errorf("time-out after %v, want 200ms", d)
	}

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	_, err = dial(ctx, addr, 10*time.Second)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("dial: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("cancel took %v", d)
	}
}

func TestRefusedAndUnsupported(t *testing.T) { eachDial(t, testRefusedAndUnsupported) }

func testRefusedAndUnsupported(t *testing.T, dial dialFunc) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if _, err := dial(context.Background(), addr, time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dial to a closed port: %v", err)
	}
	if _, err := dial(context.Background(), "localhost:21", time.Second); !errors.Is(err, ErrUnsupported) {
		t.Errorf("dial to a name: %v, want ErrUnsupported", err)
	}
	// A zone is left to the net package, which knows the interfaces.
	if _, err := dial(context.Background(), "[::1%lo]:21", time.Second); !errors.Is(err, ErrUnsupported) {
		t.Errorf("dial to an address with a zone: %v, want ErrUnsupported", err)
	}
}

// TestRawConnWaits: a RawConn Read whose function reads without blocking
// is called again once data arrives, as splicing needs.
func TestRawConnWaits(t *testing.T) { eachDial(t, testRawConnWaits) }

func testRawConnWaits(t *testing.T, dial dialFunc) {
	addr := serve(t, func(c net.Conn) {
		time.Sleep(100 * time.Millisecond)
		c.Write([]byte("late"))
	})
	c, err := dial(context.Background(), addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	calls := 0
	err = rc.Read(func(fd uintptr) bool {
		calls++
		buf := make([]byte, 10)
		n, _, err := unix.Recvfrom(int(fd), buf, unix.MSG_DONTWAIT)
		if err == unix.EAGAIN {
			return false
		}
		got = buf[:max(n, 0)]
		return true
	})
	if err != nil || string(got) != "late" {
		t.Errorf("raw read %q, %v", got, err)
	}
	if calls < 2 || calls > 5 {
		t.Errorf("the function was called %d times: it should wait for data, not spin", calls)
	}
}

// TestDroppedConnFreed: a connection dropped without Close gives its
// descriptor back once collected.
func TestDroppedConnFreed(t *testing.T) { eachDial(t, testDroppedConnFreed) }

func testDroppedConnFreed(t *testing.T, dial dialFunc) {
	addr := serve(t, func(c net.Conn) { io.Copy(io.Discard, c) })
	before := openFDs(t)
	c, err := dial(context.Background(), addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("x"))
	c = nil
	for range 50 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		if len(newFDs(t, before)) == 0 {
			return
		}
	}
	t.Errorf("open after the dropped connection was collected: %q", newFDs(t, before))
}

// TestPolledOnWait: a Polled connection calls the function OnWait gave
// it only when a read has to wait, once, from that read; a read whose
// bytes have come calls nothing. Once the connection waits in the poller,
// OnWait says it can no longer tell.
func TestPolledOnWait(t *testing.T) {
	sent, waiting := make(chan struct{}), make(chan struct{})
	addr := serve(t, func(c net.Conn) {
		c.Write([]byte("now"))
		close(sent)
		<-waiting
		c.Write([]byte("late"))
		io.Copy(io.Discard, c)
	})
	conn, err := DialPolled(context.Background(), addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := conn.(*Polled)
	guard := time.AfterFunc(10*time.Second, func() { c.Close() }) // a read that waits unnoticed ends in an error
	defer guard.Stop()
	<-sent
	calls := 0
	if !c.OnWait(func() { calls++ }) {
		t.Fatal("OnWait refused on a new connection")
	}
	// The bytes are there before the read (polled on the descriptor, which
	// puts nothing in the runtime's poller).
	if n, err := unix.Poll([]unix.PollFd{{Fd: int32(c.sock.fd), Events: unix.POLLIN}}, 10000); n != 1 || err != nil {
		t.Fatalf("poll: %d, %v", n, err)
	}
	buf := make([]byte, 10)
	n, err := c.Read(buf)
	if err != nil || string(buf[:n]) != "now" || calls != 0 {
		t.Fatalf("read %q, %v, the function called %d times: want now, and no call", buf[:n], err, calls)
	}
	if !c.OnWait(func() { calls++; close(waiting) }) {
		t.Fatal("OnWait refused after a read that did not wait")
	}
	n, err = c.Read(buf)
	if err != nil || string(buf[:n]) != "late" || calls != 1 {
		t.Fatalf("read %q, %v, the function called %d times: want late, once (the server writes only after it is called)", buf[:n], err, calls)
	}
	if c.OnWait(func() { calls++ }) {
		t.Error("OnWait accepted on a connection in the poller")
	}
	c.Close()
	if calls != 1 {
		t.Errorf("the function called %d times", calls)
	}
}
