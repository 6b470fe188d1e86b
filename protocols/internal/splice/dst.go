package splice

import (
	"io"
	"syscall"
)

// Dst is what Copy writes into: a file (*os.File) or a socket
// (*net.TCPConn, *net.UnixConn).
type Dst interface {
	io.Writer
	syscall.Conn
}

// name names dst in an error: a file's name, else "socket".
func name(dst Dst) string {
	if n, ok := dst.(interface{ Name() string }); ok {
		return n.Name()
	}
	return "socket"
}
