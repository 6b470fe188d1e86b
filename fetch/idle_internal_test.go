package fetch

import (
	"net"
	"testing"
)

// waitConn is a connection that tells when a read has to wait.
type waitConn struct {
	net.Conn
	wait func()
}

func (c *waitConn) OnWait(wait func()) bool {
	c.wait = wait
	return true
}

// TestActiveConnOnWait: the idle watch's wrapper passes on OnWait to a
// connection that has it (the FTP body then asks no poll of the socket),
// and says false for one that does not.
func TestActiveConnOnWait(t *testing.T) {
	inner := &waitConn{}
	called := false
	if !(&activeConn{Conn: inner}).OnWait(func() { called = true }) || inner.wait == nil {
		t.Fatal("OnWait not passed on")
	}
	inner.wait()
	if !called {
		t.Error("the function passed on is not the one given")
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if (&activeConn{Conn: a}).OnWait(func() {}) {
		t.Error("OnWait said true for a connection without it")
	}
}
