// Package ftpscript is an FTP server for tests that need exact replies and
// faults no real server gives on demand: a dropped data connection, a
// stall, a 421, a malformed EPSV reply. It answers as RFC 959, RFC 2428
// and RFC 3659 say, records every command it receives, and lets a test
// override the reply to any command.
package ftpscript

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urlderef/deref/internal/testserver"
)

// Handler answers one command. It returns false to let the server give
// its default answer.
type Handler func(c *Conn, verb, arg string) bool

// Server is a scripted FTP server on 127.0.0.1.
type Server struct {
	// Files maps a path (as RETR or SIZE name it, relative to the current
	// directory joined with "/") to its content.
	Files map[string]string
	// Greeting is the first reply; empty means "220 ftpscript ready".
	Greeting string
	// Handle, when set, is asked first for every command.
	Handle Handler
	// IdleTimeout, when set, is how long a connection may go without a
	// command: then the server replies "421 Timeout." and closes it, as
	// vsftpd does after its idle_session_timeout.
	IdleTimeout time.Duration

	ln       net.Listener
	mu       sync.Mutex
	commands []string
	early    []string
}

// Start listens on a free port of 127.0.0.1.
func (s *Server) Start() error {
	return testserver.ListenInto(&s.ln, s.serve)
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops listening.
func (s *Server) Close() error { return s.ln.Close() }

// Commands returns the commands received so far, in order.
func (s *Server) Commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.commands...)
}

// Early returns the commands that arrived before the reply to the
// command ahead of them on the same connection was sent: commands a client
// pipelined.
func (s *Server) Early() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.early...)
}

// Conn is one control connection.
type Conn struct {
	s     *Server
	conn  net.Conn
	w     *bufio.Writer
	cwd   string
	pasv  net.Listener
	Rest  int64
	Ascii bool
	// Ahead says the command being handled came before the reply to the
	// one before it was sent: the client pipelined it.
	Ahead bool
}

// Write sends raw bytes on the control connection, for replies no
// well-behaved server sends.
func (c *Conn) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err == nil {
		err = c.w.Flush()
	}
	return n, err
}

// Close drops the control connection.
func (c *Conn) Close() error { return c.conn.Close() }

// Reply sends one reply line.
func (c *Conn) Reply(format string, args ...any) {
	fmt.Fprintf(c.w, format+"\r\n", args...)
	c.w.Flush()
}

// Path joins name to the current directory.
func (c *Conn) Path(name string) string {
	if strings.HasPrefix(name, "/") {
		return strings.TrimPrefix(name, "/")
	}
	if c.cwd == "" {
		return name
	}
	return c.cwd + "/" + name
}

// OpenPassive listens for a data connection and returns its port.
func (c *Conn) OpenPassive() int {
	if c.pasv != nil {
		c.pasv.Close()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	c.pasv = ln
	return ln.Addr().(*net.TCPAddr).Port
}

// AcceptData waits for the client's data connection.
func (c *Conn) AcceptData() (net.Conn, error) {
	if c.pasv == nil {
		return nil, fmt.Errorf("no PASV or EPSV before the transfer")
	}
	c.pasv.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	d, err := c.pasv.Accept()
	c.pasv.Close()
	c.pasv = nil
	return d, err
}

func (s *Server) serve(conn net.Conn) {
	defer conn.Close()
	c := &Conn{s: s, conn: conn, w: bufio.NewWriter(conn)}
	g := s.Greeting
	if g == "" {
		g = "220 ftpscript ready"
	}
	c.Reply("%s", g)
	r := bufio.NewReader(conn)
	early := false // the line came before the previous one was answered
	for {
		if s.IdleTimeout > 0 {
			conn.SetReadDeadline(time.Now().Add(s.IdleTimeout))
		}
		line, err := r.ReadString('\n')
		if ne, ok := err.(net.Error); ok && ne.Timeout() && line == "" {
			c.Reply("421 Timeout.")
			return
		}
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		s.mu.Lock()
		s.commands = append(s.commands, line)
		if early {
			s.early = append(s.early, line)
		}
		s.mu.Unlock()
		c.Ahead = early
		early = r.Buffered() > 0
		verb, arg, _ := strings.Cut(line, " ")
		verb = strings.ToUpper(verb)
		if s.Handle != nil && s.Handle(c, verb, arg) {
			continue
		}
		if !c.defaults(verb, arg) {
			return
		}
	}
}

// defaults answers as a plain anonymous FTP server would.
func (c *Conn) defaults(verb, arg string) bool {
	s := c.s
	switch verb {
	case "USER":
		c.Reply("331 Please specify the password.")
	case "PASS":
		c.Reply("230 Login successful.")
	case "FEAT":
		c.Reply("211-Features:\r\n EPSV\r\n MDTM\r\n PASV\r\n REST STREAM\r\n SIZE\r\n211 End")
	case "TYPE":
		c.Ascii = strings.EqualFold(arg, "A")
		c.Reply("200 Switching to %s mode.", map[bool]string{true: "ASCII", false: "Binary"}[c.Ascii])
	case "PWD":
		c.Reply(`257 "/%s" is the current directory`, c.cwd)
	case "CWD":
		switch {
		case arg == "/":
			c.cwd = ""
		case arg == "":
			c.Reply("550 Failed to change directory.")
			return true
		default:
			c.cwd = c.Path(arg)
		}
		c.Reply("250 Directory successfully changed.")
	case "SIZE":
		f, ok := s.Files[c.Path(arg)]
		if !ok {
			c.Reply("550 Could not get file size.")
			return true
		}
		c.Reply("213 %d", len(f))
	case "MDTM":
		if _, ok := s.Files[c.Path(arg)]; !ok {
			c.Reply("550 Could not get file modification time.")
			return true
		}
		c.Reply("213 20200102030405")
	case "EPSV":
		c.Reply("229 Entering Extended Passive Mode (|||%d|)", c.OpenPassive())
	case "PASV":
		p := c.OpenPassive()
		c.Reply("227 Entering Passive Mode (127,0,0,1,%d,%d).", p/256, p%256)
	case "REST":
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil {
			c.Reply("501 Bad REST.")
			return true
		}
		c.Rest = n
		c.Reply("350 Restart position accepted (%d).", n)
	case "RETR":
		f, ok := s.Files[c.Path(arg)]
		if !ok {
			c.Reply("550 Failed to open file.")
			return true
		}
		d, err := c.AcceptData()
		if err != nil {
			c.Reply("425 Failed to establish connection.")
			return true
		}
		c.Reply("150 Opening BINARY mode data connection for %s (%d bytes).", arg, len(f))
		d.Write([]byte(f[min(c.Rest, int64(len(f))):]))
		c.Rest = 0
		d.Close()
		c.Reply("226 Transfer complete.")
	case "QUIT":
		c.Reply("221 Goodbye.")
		return false
	default:
		c.Reply("502 Command not implemented.")
	}
	return true
}

// Clock gives Server.Files times and serves LIST (as ls -l writes it)
// and MDTM for them, each in a zone of its own: a server whose ls -l
// runs in local time with MDTM in UTC, as RFC 3659 says, or one whose
// MDTM is local too (vsftpd's use_localtime). Its Handle is a Handler.
type Clock struct {
	Times map[string]time.Time // by the path Files uses; files without one are not listed
	List  *time.Location       // the zone of LIST times
	MDTM  *time.Location       // the zone of MDTM times (nil: UTC)
	Now   time.Time            // the server's clock, for ls -l's choice of year or time of day
	mu    sync.Mutex
}

// SetFile gives path new content and a new time.
func (k *Clock) SetFile(s *Server, path, content string, t time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	s.mu.Lock()
	s.Files[path] = content
	s.mu.Unlock()
	k.Times[path] = t
}

// Handle answers LIST and MDTM; everything else gets the defaults.
func (k *Clock) Handle(c *Conn, verb, arg string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch verb {
	case "MDTM":
		t, ok := k.Times[c.Path(arg)]
		if !ok {
			return false
		}
		z := k.MDTM
		if z == nil {
			z = time.UTC
		}
		c.Reply("213 %s", t.In(z).Format("20060102150405"))
		return true
	case "LIST":
		d, err := c.AcceptData()
		if err != nil {
			c.Reply("425 Failed to establish connection.")
			return true
		}
		c.Reply("150 Here comes the directory listing.")
		prefix := ""
		if c.cwd != "" {
			prefix = c.cwd + "/"
		}
		var b strings.Builder
		c.s.mu.Lock()
		for p, content := range c.s.Files {
			t, ok := k.Times[p]
			name, found := strings.CutPrefix(p, prefix)
			if !ok || !found || strings.Contains(name, "/") {
				continue
			}
			lt := t.In(k.List)
			stamp := lt.Format("Jan _2  2006")
			if age := k.Now.Sub(t); age < 180*24*time.Hour && age > -time.Hour {
				stamp = lt.Format("Jan _2 15:04")
			}
			fmt.Fprintf(&b, "-rw-r--r--    1 0        0        %8d %s %s\r\n", len(content), stamp, name)
		}
		c.s.mu.Unlock()
		d.Write([]byte(b.String()))
		d.Close()
		c.Reply("226 Directory send OK.")
		return true
	}
	return false
}
