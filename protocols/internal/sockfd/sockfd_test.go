package sockfd

import (
	"net"
	"testing"

	"github.com/urlderef/deref/internal/testserver"
)

// TestRaw: a TCP connection has a socket under it; a pipe has none.
func TestRaw(t *testing.T) {
	c, _ := testserver.Pair(t)
	rc, ok := Raw(c)
	if !ok {
		t.Fatal("a TCP connection: no raw connection")
	}
	var fd uintptr
	if err := rc.Control(func(s uintptr) { fd = s }); err != nil || fd == 0 {
		t.Errorf("Control: descriptor %d, %v", fd, err)
	}
	p, q := net.Pipe()
	defer p.Close()
	defer q.Close()
	if _, ok := Raw(p); ok {
		t.Error("a pipe: a raw connection")
	}
}
