//go:build unix

package ftp

import (
	"net"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver"
)

// TestReadable: a socket with nothing come is not readable; one with bytes
// waiting is, and so is one whose peer has closed; a read is never taken.
func TestReadable(t *testing.T) {
	c, peer := testserver.Pair(t)
	if readable(c) {
		t.Error("nothing sent: readable")
	}
	peer.Write([]byte("x"))
	waitReadable(t, c, "a byte sent")
	var b [2]byte
	if n, _ := c.Read(b[:]); n != 1 {
		t.Errorf("the byte was taken by the check: read %d", n)
	}
	peer.Close()
	waitReadable(t, c, "the peer closed")
}

func waitReadable(t *testing.T, c net.Conn, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !readable(c); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not readable", what)
		}
	}
}
