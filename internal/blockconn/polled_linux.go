package blockconn

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DialPolled connects to addr, an IP address and port (any other form,
// a zone among them, is an error wrapping ErrUnsupported), within timeout
// (none if 0) and until ctx ends, and returns a connection that waits in
// the runtime's network poller, as the net package's do. It skips what
// the net package's dialer does for every connection and a connection
// read to its end does not need: the resolver and its address lists, a
// context and a timer for the time-out and another hook on ctx when the
// connect completes at once, and the system calls that read both
// addresses and turn off Nagle's algorithm. For small FTP data connections
// that was a sixth of the client's own time. The connection's local
// address is asked of the system when first wanted.
//
// It is for connections the client reads rather than writes: Nagle's
// algorithm stays on.
func DialPolled(ctx context.Context, addr string, timeout time.Duration) (net.Conn, error) {
	sa, family, raddr, err := target(addr)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := &Polled{raddr: raddr}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return nil, c.opError("dial", os.NewSyscallError("socket", err))
	}
	err = unix.Connect(fd, sa)
	for err == unix.EINTR {
		err = unix.Connect(fd, sa)
	}
	if err != nil && err != unix.EINPROGRESS {
		unix.Close(fd)
		return nil, c.opError("dial", os.NewSyscallError("connect", err))
	}
	// A non-blocking descriptor: the poller takes it, and a dropped
	// connection's descriptor is closed when it is collected.
	c.f = os.NewFile(uintptr(fd), "tcp")
	if err == unix.EINPROGRESS {
		if err := c.connected(ctx, fd, sa, timeout); err != nil {
			c.f.Close()
			return nil, err
		}
	}
	// The net package's dialer waits for the connect in the poller even
	// when it has completed, as it has at once on loopback, and the other
	// transfers run meanwhile; without that turn, the connection's first
	// read finds nothing more often and waits alone (the server has yet
	// to send), and a run of many small files took 3% longer.
	runtime.Gosched()
	return c, nil
}

// connected waits for the connect begun on fd to end. A second connect
// says whether it has: EISCONN once it has succeeded, EALREADY while it
// goes on, and the error it failed with. The first check comes before
// any wait, timer or hook on ctx, which it needs only when the answer
// takes time.
func (c *Polled) connected(ctx context.Context, fd int, sa unix.Sockaddr, timeout time.Duration) error {
	var cerr error
	check := func(fd uintptr) bool {
		cerr = unix.Connect(int(fd), sa)
		switch cerr {
		case unix.EALREADY, unix.EINPROGRESS, unix.EINTR:
			return false
		case unix.EISCONN:
			cerr = nil
		}
		return true
	}
	if !check(uintptr(fd)) {
		rc, err := c.f.SyscallConn()
		if err != nil {
			return err
		}
		if timeout > 0 {
			c.f.SetWriteDeadline(time.Now().Add(timeout))
			defer c.f.SetWriteDeadline(time.Time{})
		}
		stop := context.AfterFunc(ctx, func() { c.f.SetWriteDeadline(time.Unix(1, 0)) })
		err = rc.Write(check)
		if !stop() {
			return ctx.Err()
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			cerr = unix.ETIMEDOUT
		} else if err != nil {
			return c.opError("dial", err)
		}
	}
	if cerr != nil {
		return c.opError("dial", os.NewSyscallError("connect", cerr))
	}
	return nil
}

// Polled is a connection DialPolled opened: an os.File on the socket,
// whose reads and writes wait in the runtime's network poller, with the
// errors of a net.Conn.
type Polled struct {
	f     *os.File
	raddr *net.TCPAddr

	mu    sync.Mutex
	laddr net.Addr
}

func (c *Polled) opError(op string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if err == os.ErrClosed {
		err = net.ErrClosed
	}
	return &net.OpError{Op: op, Net: "tcp", Addr: c.raddr, Err: err}
}

// Read reads from the connection; it returns io.EOF at the end.
func (c *Polled) Read(p []byte) (int, error) {
	n, err := c.f.Read(p)
	if err != nil && err != io.EOF {
		err = c.opError("read", err)
	}
	return n, err
}

// Write writes to the connection.
func (c *Polled) Write(p []byte) (int, error) {
	n, err := c.f.Write(p)
	if err != nil {
		err = c.opError("write", err)
	}
	return n, err
}

// Close closes the connection; a Read or Write in progress ends with
// net.ErrClosed.
func (c *Polled) Close() error {
	if err := c.f.Close(); err != nil {
		return c.opError("close", err)
	}
	return nil
}

// CloseWrite shuts down the sending side of the connection.
func (c *Polled) CloseWrite() error {
	rc, err := c.f.SyscallConn()
	if err != nil {
		return c.opError("close", err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.Shutdown(int(fd), unix.SHUT_WR) }); err != nil {
		return c.opError("close", err)
	}
	if serr != nil {
		return c.opError("close", os.NewSyscallError("shutdown", serr))
	}
	return nil
}

// LocalAddr returns the connection's local address, asked of the system
// the first time.
func (c *Polled) LocalAddr() net.Addr {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.laddr == nil {
		if rc, err := c.f.SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) { c.laddr = localAddr(int(fd)) })
		}
	}
	if c.laddr == nil {
		return &net.TCPAddr{}
	}
	return c.laddr
}

// RemoteAddr returns the address dialled.
func (c *Polled) RemoteAddr() net.Addr { return c.raddr }

// SetDeadline sets the read and write deadlines.
func (c *Polled) SetDeadline(t time.Time) error { return c.deadline(c.f.SetDeadline(t)) }

// SetReadDeadline sets the time after which Read fails with
// os.ErrDeadlineExceeded.
func (c *Polled) SetReadDeadline(t time.Time) error { return c.deadline(c.f.SetReadDeadline(t)) }

// SetWriteDeadline sets the time after which Write fails with
// os.ErrDeadlineExceeded.
func (c *Polled) SetWriteDeadline(t time.Time) error { return c.deadline(c.f.SetWriteDeadline(t)) }

func (c *Polled) deadline(err error) error {
	if err != nil {
		return c.opError("set deadline", err)
	}
	return nil
}

// SyscallConn gives the socket's descriptor; its Read and Write wait in
// the poller.
func (c *Polled) SyscallConn() (syscall.RawConn, error) { return c.f.SyscallConn() }
