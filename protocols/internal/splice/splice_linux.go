//go:build linux

// Package splice moves bytes from a socket into a file or another socket
// without passing them through user space, one splice(2) at a time, so that the caller can
// account for every step (progress, idle time-outs, cancellation).
//
// os.File.ReadFrom splices too, but only in whole calls: it reports nothing
// until a call ends, and allocates on every call.
package splice

import (
	"errors"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

const pipeSize = 1 << 20

// minSplice is the smallest object worth a pipe: below it, Read and Write
// are cheaper than creating and sizing one.
const minSplice = 256 << 10

// ErrUnsupported means the pair cannot be spliced: the caller copies the
// rest (all but the bytes Copy reports as written) with Read and Write.
var ErrUnsupported = errors.New("splice: not supported for this pair")

// Copy moves up to n bytes from src into dst. After each splice it calls
// step with the bytes moved; an error from step ends the copy. It returns
// io.ErrUnexpectedEOF if src ends before n bytes, and ErrUnsupported, with
// what was moved so far, when the kernel cannot splice this pair or n is
// too small to be worth it.
func Copy(dst Dst, src syscall.Conn, n int64, step func(int64) error) (int64, error) {
	if n < minSplice {
		return 0, ErrUnsupported // a pipe costs more than it saves on a small object
	}
	srcRaw, err := src.SyscallConn()
	if err != nil {
		return 0, ErrUnsupported
	}
	dstRaw, err := dst.SyscallConn()
	if err != nil {
		return 0, ErrUnsupported
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return 0, ErrUnsupported
	}
	pr, pw := p[0], p[1]
	defer unix.Close(pr)
	defer unix.Close(pw)
	unix.FcntlInt(uintptr(pw), unix.F_SETPIPE_SZ, pipeSize)

	var (
		written int64
		inPipe  int64
		want    int
		serr    error
	)
	fill := func(fd uintptr) bool {
		var k int64
		k, serr = unix.Splice(int(fd), nil, pw, nil, want, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
		if serr == unix.EAGAIN {
			return false // wait until the socket is readable
		}
		if serr == nil {
			inPipe = k
		}
		return true
	}
	var out int64
	drain := func(fd uintptr) bool {
		var k int64
		k, serr = unix.Splice(pr, nil, int(fd), nil, int(inPipe), unix.SPLICE_F_MOVE)
		if serr == unix.EAGAIN {
			return false
		}
		if serr == nil {
			out = k
		}
		return true
	}
	for written < n {
		want = int(min(n-written, pipeSize))
		inPipe, serr = 0, nil
		if err := srcRaw.Read(fill); err != nil {
			return written, err // closed or past a deadline
		}
		if serr != nil {
			if written == 0 && (serr == unix.EINVAL || serr == unix.ENOSYS) {
				return 0, ErrUnsupported
			}
			return written, os.NewSyscallError("splice", serr)
		}
		if inPipe == 0 {
			return written, io.ErrUnexpectedEOF
		}
		moved := inPipe
		for inPipe > 0 {
			out, serr = 0, nil
			if err := dstRaw.Write(drain); err != nil {
				return written, &os.PathError{Op: "write", Path: name(dst), Err: err}
			}
			if serr == unix.EINVAL {
				// dst takes no splice (O_APPEND, some file systems): move
				// what sits in the pipe by hand and let the caller go on.
				k, err := drainByHand(dst, pr, inPipe)
				written += k
				if err != nil {
					return written, err
				}
				step(moved)
				return written, ErrUnsupported
			}
			if serr != nil {
				return written, &os.PathError{Op: "write", Path: name(dst), Err: serr}
			}
			inPipe -= out
			written += out
		}
		if err := step(moved); err != nil {
			return written, err
		}
	}
	return written, nil
}

// drainByHand copies n bytes from the pipe's read end into dst.
func drainByHand(dst io.Writer, pr int, n int64) (int64, error) {
	buf := make([]byte, 64<<10)
	var done int64
	for done < n {
		k, err := unix.Read(pr, buf[:min(int64(len(buf)), n-done)])
		if err != nil || k == 0 {
			return done, os.NewSyscallError("read", err)
		}
		if _, err := dst.Write(buf[:k]); err != nil {
			return done, err
		}
		done += int64(k)
	}
	return done, nil
}
