//go:build linux

package quickack

import (
	"crypto/tls"
	"net"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/urlderef/deref/internal/testserver"
)

// Arm sets TCP_QUICKACK on a TCP connection, and on the one beneath a
// TLS connection.
func TestArm(t *testing.T) {
	for _, wrap := range []bool{false, true} {
		raw, _ := testserver.Pair(t)
		setQuickAck(t, raw, 0)
		var c net.Conn = raw
		if wrap {
			c = tls.Client(raw, &tls.Config{InsecureSkipVerify: true})
		}
		Arm(c)
		if got := quickAck(t, raw); got != 1 {
			t.Errorf("TLS %v: TCP_QUICKACK %d after Arm, want 1", wrap, got)
		}
	}
}

func setQuickAck(t *testing.T, c net.Conn, v int) {
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_QUICKACK, v) })
}

func quickAck(t *testing.T, c net.Conn) int {
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	rc.Control(func(fd uintptr) { v, gerr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_QUICKACK) })
	if gerr != nil {
		t.Fatal(gerr)
	}
	return v
}
