//go:build linux

package blockconn

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Supported reports whether Dial and DialPolled are implemented here.
const Supported = true

// Dial connects to addr, an IP address and port ("127.0.0.1:21",
// "[::1]:21"), with a blocking connect bounded by timeout (0: the
// kernel's own) and by ctx. Any other form of address (a name, a zone) is
// an error wrapping ErrUnsupported: the caller then dials as usual.
func Dial(ctx context.Context, addr string, timeout time.Duration) (net.Conn, error) {
	sa, family, raddr, err := target(addr)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", err)}
	}
	if dl, ok := ctx.Deadline(); ok && (timeout <= 0 || time.Until(dl) < timeout) {
		timeout = time.Until(dl)
	}
	if timeout > 0 {
		// A blocking connect gives up after the send time-out.
		tv := unix.NsecToTimeval(max(timeout, time.Millisecond).Nanoseconds())
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	}
	c := &Conn{fd: fd, raddr: raddr}
	aborted := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		unix.Shutdown(fd, unix.SHUT_RDWR)
		close(aborted)
	})
	var until time.Time
	if timeout > 0 {
		until = time.Now().Add(timeout)
	}
	err = unix.Connect(fd, sa)
	for err == unix.EINTR || err == unix.EALREADY {
		// An interrupted connect goes on in the background; wait for it.
		err = waitConnected(fd, until)
	}
	if !stop() {
		// The shutdown is under way: the descriptor is closed only after
		// it, so that it can never hit another file given the same number.
		<-aborted
		unix.Close(fd)
		return nil, ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err != nil {
		unix.Close(fd)
		if err == unix.EINPROGRESS || err == unix.EAGAIN {
			err = unix.ETIMEDOUT
		}
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: c.raddr, Err: os.NewSyscallError("connect", err)}
	}
	// The send time-out stays: a Write that meets it goes on (EAGAIN), and
	// a call less per connection counts for thousands of small files.
	// A connection dropped without Close still frees its descriptor.
	c.cleanup = runtime.AddCleanup(c, func(fd int) { unix.Close(fd) }, fd)
	return c, nil
}

func waitConnected(fd int, until time.Time) error {
	ms := -1
	if !until.IsZero() {
		left := time.Until(until)
		if left <= 0 {
			return unix.ETIMEDOUT
		}
		ms = int(max(left.Milliseconds(), 1))
	}
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
	if _, err := unix.Poll(pfd, ms); err != nil && err != unix.EINTR {
		return err
	}
	if pfd[0].Revents == 0 {
		return unix.EINTR // not yet: wait again
	}
	e, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return err
	}
	if e != 0 {
		return unix.Errno(e)
	}
	return nil
}

// Conn is a TCP connection read and written with blocking system calls.
// Close may be called while a Read waits: it shuts the socket down,
// which wakes the Read, and frees the descriptor once no call uses it.
type Conn struct {
	fd    int
	raddr net.Addr

	cleanup runtime.Cleanup

	mu     sync.Mutex
	users  int // Read, Write and RawConn calls in progress
	closed bool
	laddr  net.Addr
	rdl    time.Time
	wdl    time.Time
}

func (c *Conn) acquire() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.users++
	return true
}

func (c *Conn) release() {
	c.mu.Lock()
	c.users--
	last := c.closed && c.users == 0
	c.mu.Unlock()
	if last {
		unix.Close(c.fd)
	}
}

func (c *Conn) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// deadline reports whether d has passed; if not, and d is set, it sets
// the socket's time-out opt (SO_RCVTIMEO or SO_SNDTIMEO) to what is left.
func (c *Conn) deadline(d time.Time, opt int) (passed bool) {
	if d.IsZero() {
		return false
	}
	left := time.Until(d)
	if left <= 0 {
		return true
	}
	tv := unix.NsecToTimeval(max(left, time.Millisecond).Nanoseconds())
	unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, opt, &tv)
	return false
}

func (c *Conn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.raddr, Err: err}
}

// Read reads as read(2) does; 0 bytes read is io.EOF, unless Close came
// first.
func (c *Conn) Read(p []byte) (int, error) {
	if !c.acquire() {
		return 0, c.opError("read", net.ErrClosed)
	}
	defer c.release()
	for {
		c.mu.Lock()
		rdl := c.rdl
		c.mu.Unlock()
		if c.deadline(rdl, unix.SO_RCVTIMEO) {
			return 0, c.opError("read", os.ErrDeadlineExceeded)
		}
		n, err := unix.Read(c.fd, p)
		switch {
		case err == unix.EINTR, err == unix.EAGAIN && !c.isClosed():
			continue // a signal, or a receive time-out set for a deadline or by a low-water mark
		case c.isClosed():
			return 0, c.opError("read", net.ErrClosed)
		case err != nil:
			return 0, c.opError("read", os.NewSyscallError("read", err))
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Write writes all of p, as write(2) does in a loop.
func (c *Conn) Write(p []byte) (int, error) {
	if !c.acquire() {
		return 0, c.opError("write", net.ErrClosed)
	}
	defer c.release()
	done := 0
	for done < len(p) {
		c.mu.Lock()
		wdl := c.wdl
		c.mu.Unlock()
		if c.deadline(wdl, unix.SO_SNDTIMEO) {
			return done, c.opError("write", os.ErrDeadlineExceeded)
		}
		n, err := unix.Write(c.fd, p[done:])
		switch {
		case err == unix.EINTR, err == unix.EAGAIN && !c.isClosed():
			continue
		case c.isClosed():
			return done, c.opError("write", net.ErrClosed)
		case err != nil:
			return done, c.opError("write", os.NewSyscallError("write", err))
		}
		done += n
	}
	return done, nil
}

// Close shuts the connection down and releases it.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return c.opError("close", net.ErrClosed)
	}
	c.closed = true
	idle := c.users == 0
	c.mu.Unlock()
	c.cleanup.Stop()
	if idle {
		return unix.Close(c.fd)
	}
	// Wake the calls in progress; the last of them closes the descriptor.
	unix.Shutdown(c.fd, unix.SHUT_RDWR)
	return nil
}

// CloseWrite shuts down the writing side.
func (c *Conn) CloseWrite() error {
	if !c.acquire() {
		return c.opError("close", net.ErrClosed)
	}
	defer c.release()
	return unix.Shutdown(c.fd, unix.SHUT_WR)
}

// LocalAddr is the connection's own address, asked of the kernel on first
// use.
func (c *Conn) LocalAddr() net.Addr {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.laddr == nil && !c.closed {
		c.laddr = localAddr(c.fd)
	}
	if c.laddr == nil {
		return &net.TCPAddr{}
	}
	return c.laddr
}

// target reads addr, an IP address without a zone and a port, as the
// socket calls take it; any other form is ErrUnsupported.
func target(addr string) (sa unix.Sockaddr, family int, raddr *net.TCPAddr, err error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || ap.Addr().Zone() != "" {
		return nil, 0, nil, ErrUnsupported
	}
	ip := ap.Addr().Unmap()
	raddr = net.TCPAddrFromAddrPort(netip.AddrPortFrom(ip, ap.Port()))
	if ip.Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ip.As4()}, unix.AF_INET, raddr, nil
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ip.As16()}, unix.AF_INET6, raddr, nil
}

// localAddr asks for the local address of the socket fd; nil if it
// cannot be had.
func localAddr(fd int) net.Addr {
	switch sa, _ := unix.Getsockname(fd); sa := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(sa.Addr[:]), Port: sa.Port}
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(sa.Addr[:]), Port: sa.Port}
	}
	return nil
}

// RemoteAddr is the address dialled.
func (c *Conn) RemoteAddr() net.Addr { return c.raddr }

// SetDeadline sets both deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

// SetReadDeadline bounds Reads that start from now on; the zero time
// removes the bound.
func (c *Conn) SetReadDeadline(t time.Time) error {
	return c.setDeadline(&c.rdl, t, unix.SO_RCVTIMEO)
}

// SetWriteDeadline bounds Writes that start from now on.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	return c.setDeadline(&c.wdl, t, unix.SO_SNDTIMEO)
}

func (c *Conn) setDeadline(d *time.Time, t time.Time, opt int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.opError("set deadline", net.ErrClosed)
	}
	was := *d
	*d = t
	if t.IsZero() && !was.IsZero() {
		var zero unix.Timeval
		unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, opt, &zero)
	}
	return nil
}

// SyscallConn gives the descriptor to the socket options and splices of
// the callers (protocols/internal/rcvlowat, protocols/internal/splice).
func (c *Conn) SyscallConn() (syscall.RawConn, error) { return rawConn{c}, nil }

type rawConn struct{ c *Conn }

func (r rawConn) Control(f func(fd uintptr)) error {
	if !r.c.acquire() {
		return net.ErrClosed
	}
	defer r.c.release()
	f(uintptr(r.c.fd))
	return nil
}

// Read calls f until it returns true, waiting between calls until the
// socket has something to read (f may use non-blocking calls).
func (r rawConn) Read(f func(fd uintptr) bool) error {
	return r.wait(f, unix.POLLIN)
}

// Write calls f until it returns true, waiting between calls until the
// socket can take more.
func (r rawConn) Write(f func(fd uintptr) bool) error {
	return r.wait(f, unix.POLLOUT)
}

func (r rawConn) wait(f func(fd uintptr) bool, events int16) error {
	c := r.c
	if !c.acquire() {
		return net.ErrClosed
	}
	defer c.release()
	for !f(uintptr(c.fd)) {
		if c.isClosed() {
			return net.ErrClosed
		}
		pfd := []unix.PollFd{{Fd: int32(c.fd), Events: events}}
		if _, err := unix.Poll(pfd, -1); err != nil && err != unix.EINTR {
			return os.NewSyscallError("poll", err)
		}
	}
	return nil
}

// DialPolled connects to addr, an IP address and port (any other form,
// a zone among them, is an error wrapping ErrUnsupported), within timeout
// (none if 0) and until ctx ends, and returns a connection that waits in
// the runtime's network poller, as the net package's do, but only once it
// has to (see Polled). It skips what the net package's dialer does for
// every connection and a connection read to its end does not need: the
// resolver and its address lists, a context and a timer for the time-out
// and another hook on ctx when the connect completes at once, and the
// system calls that read both addresses and turn off Nagle's algorithm.
// For small FTP data connections that was a sixth of the client's own
// time. The connection's local address is asked of the system when first
// wanted.
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
	c := &Polled{raddr: raddr, sock: &socket{fd: -1}}
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
	c.sock.fd = fd
	// A connection dropped without Close frees its descriptor once
	// collected (an os.File, once it has one, does the same).
	runtime.AddCleanup(c, func(s *socket) {
		if s.fd >= 0 {
			unix.Close(s.fd)
		}
	}, c.sock)
	if err == unix.EINPROGRESS {
		if err := c.connected(ctx, fd, sa, timeout); err != nil {
			c.Close()
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
// any wait, timer or hook on ctx, or the poller, which it needs only
// when the answer takes time.
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
		c.mu.Lock()
		f, err := c.toPoller()
		c.mu.Unlock()
		if err != nil {
			return c.opError("dial", err)
		}
		rc, err := f.SyscallConn()
		if err != nil {
			return c.opError("dial", err)
		}
		if timeout > 0 {
			f.SetWriteDeadline(time.Now().Add(timeout))
			defer f.SetWriteDeadline(time.Time{})
		}
		stop := context.AfterFunc(ctx, func() { f.SetWriteDeadline(time.Unix(1, 0)) })
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

// Polled is a connection DialPolled opened. Its socket is non-blocking,
// and read and written with calls of its own until one would have to
// wait: then it goes into the runtime's network poller as an os.File,
// and every later call goes through that file (a deadline or the
// RawConn put it there at once). A small object whose bytes have come
// by the first read, as those of a server nearby mostly have, costs the
// poller nothing: no registration and no removal (two epoll_ctl calls),
// no fcntl, and no wake-up. The errors are a net.Conn's.
type Polled struct {
	raddr *net.TCPAddr
	f     atomic.Pointer[os.File] // once in the poller

	mu     sync.Mutex // held over each call on sock, and the move into the poller
	sock   *socket
	onWait func()
	laddr  net.Addr
}

// socket is the descriptor of a Polled outside the poller; -1 once closed
// or given to the os.File.
type socket struct{ fd int }

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

// toPoller puts the socket in the poller, once, as an os.File; c.mu is
// held. It calls nothing: see intoPoller.
func (c *Polled) toPoller() (*os.File, error) {
	if f := c.f.Load(); f != nil {
		return f, nil
	}
	if c.sock.fd < 0 {
		return nil, net.ErrClosed
	}
	f := os.NewFile(uintptr(c.sock.fd), "tcp")
	if f == nil {
		return nil, os.ErrInvalid
	}
	c.sock.fd = -1
	c.f.Store(f)
	return f, nil
}

// OnWait has wait called once, when a Read first finds nothing to read
// and goes on to wait for it (from that Read, before it waits), or when
// the connection goes into the poller for any other reason. It reports
// false, and keeps nothing, when the connection is in the poller
// already: the caller cannot learn from it whether a read would wait.
func (c *Polled) OnWait(wait func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f.Load() != nil || c.sock.fd < 0 {
		return false
	}
	c.onWait = wait
	return true
}

// outside reports whether the socket is still outside the poller (or was
// closed there): then c.mu is held, for the caller to release; else f is
// the os.File that has it.
func (c *Polled) outside() (f *os.File, ok bool) {
	if f := c.f.Load(); f != nil {
		return f, false
	}
	c.mu.Lock()
	if f := c.f.Load(); f != nil {
		c.mu.Unlock()
		return f, false
	}
	return nil, true
}

// intoPoller moves the socket into the poller with c.mu held, releases
// c.mu, and calls the function OnWait kept, if any.
func (c *Polled) intoPoller() (*os.File, error) {
	f, err := c.toPoller()
	wait := c.onWait
	c.onWait = nil
	c.mu.Unlock()
	if wait != nil && err == nil {
		wait()
	}
	return f, err
}

// Read reads from the connection; it returns io.EOF at the end.
func (c *Polled) Read(p []byte) (int, error) {
	f, out := c.outside()
	if out {
		if c.sock.fd < 0 {
			c.mu.Unlock()
			return 0, c.opError("read", net.ErrClosed)
		}
		n, err := unix.Read(c.sock.fd, p)
		for err == unix.EINTR {
			n, err = unix.Read(c.sock.fd, p)
		}
		if err != unix.EAGAIN || len(p) == 0 {
			c.mu.Unlock()
			switch {
			case err != nil:
				return 0, c.opError("read", os.NewSyscallError("read", err))
			case n == 0 && len(p) > 0:
				return 0, io.EOF
			}
			return n, nil
		}
		if f, err = c.intoPoller(); err != nil {
			return 0, c.opError("read", err)
		}
	}
	n, err := f.Read(p)
	if err != nil && err != io.EOF {
		err = c.opError("read", err)
	}
	return n, err
}

// Write writes all of p to the connection.
func (c *Polled) Write(p []byte) (int, error) {
	done := 0
	f, out := c.outside()
	if out {
		if c.sock.fd < 0 {
			c.mu.Unlock()
			return 0, c.opError("write", net.ErrClosed)
		}
		for done < len(p) {
			n, err := unix.Write(c.sock.fd, p[done:])
			if err == unix.EAGAIN {
				break
			}
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				c.mu.Unlock()
				return done, c.opError("write", os.NewSyscallError("write", err))
			}
			done += n
		}
		if done == len(p) {
			c.mu.Unlock()
			return done, nil
		}
		var err error
		if f, err = c.intoPoller(); err != nil {
			return done, c.opError("write", err)
		}
	}
	n, err := f.Write(p[done:])
	if err != nil {
		err = c.opError("write", err)
	}
	return done + n, err
}

// Close closes the connection; a Read or Write in progress ends with
// net.ErrClosed.
func (c *Polled) Close() error {
	f, out := c.outside()
	if out {
		if c.sock.fd < 0 {
			c.mu.Unlock()
			return c.opError("close", net.ErrClosed)
		}
		fd := c.sock.fd
		c.sock.fd = -1
		c.onWait = nil
		c.mu.Unlock()
		if err := unix.Close(fd); err != nil {
			return c.opError("close", os.NewSyscallError("close", err))
		}
		return nil
	}
	if err := f.Close(); err != nil {
		return c.opError("close", err)
	}
	return nil
}

// CloseWrite shuts down the sending side of the connection.
func (c *Polled) CloseWrite() error {
	var serr error
	f, out := c.outside()
	if out {
		if c.sock.fd < 0 {
			c.mu.Unlock()
			return c.opError("close", net.ErrClosed)
		}
		serr = unix.Shutdown(c.sock.fd, unix.SHUT_WR)
		c.mu.Unlock()
	} else {
		rc, err := f.SyscallConn()
		if err != nil {
			return c.opError("close", err)
		}
		if err := rc.Control(func(fd uintptr) { serr = unix.Shutdown(int(fd), unix.SHUT_WR) }); err != nil {
			return c.opError("close", err)
		}
	}
	if serr != nil {
		return c.opError("close", os.NewSyscallError("shutdown", serr))
	}
	return nil
}

// LocalAddr returns the connection's local address, asked of the system
// the first time.
func (c *Polled) LocalAddr() net.Addr {
	f, out := c.outside()
	if !out {
		c.mu.Lock() // for laddr
	}
	defer c.mu.Unlock()
	switch {
	case c.laddr != nil:
	case out && c.sock.fd >= 0:
		c.laddr = localAddr(c.sock.fd)
	case !out:
		if rc, err := f.SyscallConn(); err == nil {
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

// file is the connection's os.File, in the poller from now on.
func (c *Polled) file() (*os.File, error) {
	f, out := c.outside()
	if !out {
		return f, nil
	}
	return c.intoPoller()
}

// SetDeadline sets the read and write deadlines.
func (c *Polled) SetDeadline(t time.Time) error { return c.setDeadline((*os.File).SetDeadline, t) }

// SetReadDeadline sets the time after which Read fails with
// os.ErrDeadlineExceeded.
func (c *Polled) SetReadDeadline(t time.Time) error {
	return c.setDeadline((*os.File).SetReadDeadline, t)
}

// SetWriteDeadline sets the time after which Write fails with
// os.ErrDeadlineExceeded.
func (c *Polled) SetWriteDeadline(t time.Time) error {
	return c.setDeadline((*os.File).SetWriteDeadline, t)
}

// setDeadline sets a deadline with set on the connection's file, which
// puts the connection in the poller: only the poller keeps deadlines.
func (c *Polled) setDeadline(set func(*os.File, time.Time) error, t time.Time) error {
	f, err := c.file()
	if err != nil {
		return c.opError("set deadline", err)
	}
	return c.deadline(set(f, t))
}

func (c *Polled) deadline(err error) error {
	if err != nil {
		return c.opError("set deadline", err)
	}
	return nil
}

// SyscallConn gives the socket's descriptor; its Read and Write wait in
// the poller.
func (c *Polled) SyscallConn() (syscall.RawConn, error) {
	f, err := c.file()
	if err != nil {
		return nil, c.opError("raw", err)
	}
	return f.SyscallConn()
}
