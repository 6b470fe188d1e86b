// Package gopherd is a small Gopher server (RFC 1436) that serves a
// folder: folders as menus, .txt files as dot-terminated text (dot-stuffed,
// CRLF line ends), everything else as binary until close. It is the
// bundled server of the tour; the interoperability suite uses real ones.
package gopherd

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/urlderef/deref/internal/testserver"
)

// Server serves Root on a loopback port.
type Server struct {
	Root string
	ln   net.Listener
}

// Start listens on a free port of 127.0.0.1.
func (s *Server) Start() error {
	return testserver.ListenInto(&s.ln, s.serve)
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops listening.
func (s *Server) Close() error { return s.ln.Close() }

func (s *Server) serve(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	line, err := bufio.NewReader(io.LimitReader(c, 4096)).ReadString('\n')
	if err != nil {
		return
	}
	sel, _, _ := strings.Cut(strings.TrimRight(line, "\r\n"), "\t")
	clean := path.Clean("/" + sel)
	p := filepath.Join(s.Root, filepath.FromSlash(clean))
	w := bufio.NewWriter(c)
	defer w.Flush()
	st, err := os.Stat(p)
	if err != nil {
		fmt.Fprintf(w, "3'%s' does not exist\t\terror.host\t1\r\n.\r\n", sel)
		return
	}
	host, port, _ := net.SplitHostPort(s.Addr())
	if st.IsDir() {
		des, _ := os.ReadDir(p)
		for _, de := range des {
			t, child := byte('9'), path.Join(clean, de.Name())
			switch {
			case de.IsDir():
				t = '1'
			case strings.HasSuffix(de.Name(), ".txt"):
				t = '0'
			}
			fmt.Fprintf(w, "%c%s\t%s\t%s\t%s\r\n", t, de.Name(), child, host, port)
		}
		w.WriteString(".\r\n")
		return
	}
	f, err := os.Open(p)
	if err != nil {
		return
	}
	defer f.Close()
	if !strings.HasSuffix(p, ".txt") {
		io.Copy(w, f)
		return
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, ".") {
			l = "." + l
		}
		w.WriteString(l + "\r\n")
	}
	w.WriteString(".\r\n")
}
