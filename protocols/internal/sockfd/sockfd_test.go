package sockfd

import (
	"net"
	"testing"
)

// TestRaw: a TCP connection has a socket under it; a pipe has none.
func TestRaw(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
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
