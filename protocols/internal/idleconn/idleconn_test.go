//go:build unix

package idleconn

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver"
)

// TestUsable: an open connection with nothing unread is usable; one the
// server wrote to unasked, or closed, is not; the check leaves the bytes
// for a reader and never waits.
func TestUsable(t *testing.T) {
	c, s := testserver.Pair(t)
	if !Usable(c) {
		t.Fatal("an open, quiet connection: not usable")
	}
	s.Write([]byte("421 Timeout.\r\n"))
	waitFor(t, func() bool { return !Usable(c) }, "a connection the server wrote to unasked: usable")
	b := make([]byte, 3)
	if n, _ := c.Read(b); string(b[:n]) != "421" {
		t.Errorf("the peek took the bytes: read %q", b[:n])
	}

	c, s = testserver.Pair(t)
	s.Close()
	waitFor(t, func() bool { return !Usable(c) }, "a connection the server closed: usable")

	c, _ = testserver.Pair(t)
	c.Close()
	if Usable(c) {
		t.Error("a closed connection: usable")
	}

	// Under TLS the socket is what is looked at.
	c, s = testserver.Pair(t)
	tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true})
	if !Usable(tc) {
		t.Error("a quiet TLS connection: not usable")
	}
	s.Write([]byte{21, 3, 3, 0, 2, 1, 0}) // an alert record
	waitFor(t, func() bool { return !Usable(tc) }, "a TLS connection with a record waiting: usable")

	p, q := net.Pipe()
	defer p.Close()
	defer q.Close()
	if !Usable(p) {
		t.Error("a pipe, which cannot be checked: not usable")
	}
}

func waitFor(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Error(msg)
}
