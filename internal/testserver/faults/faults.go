// Package faults is a catalogue of hostile servers: for each protocol, a
// table of the same faults (a server that never greets, greets for ever,
// sends a line, reply, listing or body without end, trickles, lies about
// a size, drops the connection mid-body or before its final reply, or
// resets it), each a server on 127.0.0.1 that plays that fault to every
// client. The fault tests drive every row of every table through the
// library and check how each retrieval ends; a new protocol gets the whole
// catalogue by adding its table.
package faults

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"time"

	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
)

// The faults, named alike for every protocol.
const (
	NeverGreet      = "never greet"             // accepts the connection and says nothing
	GreetForever    = "greet forever"           // a greeting (or response head) of endless lines
	EndlessLine     = "endless line"            // one line without end
	EndlessReply    = "endless reply"           // a multi-line reply without end
	EndlessListing  = "endless listing"         // a listing, menu or overview without end
	EndlessBody     = "endless body"            // an object without end
	Trickle         = "trickle"                 // a byte now and then, for ever
	LieAboutSize    = "lie about size"          // announces more bytes than it sends
	DropMidBody     = "drop mid-body"           // closes the connection in the middle of the object
	DropBeforeFinal = "drop before final reply" // sends the object, then closes without its final reply
	Reset           = "reset"                   // resets the connection at once
	// StallMidBody and StallBeforeFinal go silent, the connection open:
	// in the middle of the object, or after it and before the final reply.
	StallMidBody     = "stall mid-body"
	StallBeforeFinal = "stall before final reply"
)

// Server plays one fault to every client until closed.
type Server struct {
	// URL is what to fetch from it.
	URL string
	// Sent counts the bytes it wrote, over all connections.
	Sent  atomic.Int64
	close func() error
}

// Close stops the server.
func (s *Server) Close() error { return s.close() }

// A play acts out a fault on a connection just accepted.
type play func(s *Server, c net.Conn)

// Table is a protocol's catalogue: the faults it can play, and the path
// of the URL each is fetched by.
type Table struct {
	Scheme string
	Faults map[string]Fault
}

// Fault is one row of a table.
type Fault struct {
	Path string // the URL's path, after the host
	play play
	ftp  ftpscript.Handler // for FTP rows: the scripted server's handler
}

// Start starts the server of one fault of the table.
func (t Table) Start(fault string) (*Server, error) {
	f, ok := t.Faults[fault]
	if !ok {
		return nil, fmt.Errorf("%s has no fault %q", t.Scheme, fault)
	}
	s := &Server{}
	if f.ftp != nil {
		fs := &ftpscript.Server{Files: map[string]string{"f.bin": "0123456789"}, Handle: func(c *ftpscript.Conn, verb, arg string) bool {
			return f.ftp(c, verb, arg)
		}}
		if err := fs.Start(); err != nil {
			return nil, err
		}
		s.URL, s.close = t.Scheme+"://"+fs.Addr()+f.Path, fs.Close
		return s, nil
	}
	ln, err := testserver.Listen(func(c net.Conn) {
		defer c.Close()
		f.play(s, c)
	})
	if err != nil {
		return nil, err
	}
	s.URL, s.close = t.Scheme+"://"+ln.Addr().String()+f.Path, ln.Close
	return s, nil
}

// counted writes to a connection, counting for Server.Sent.
type counted struct {
	s *Server
	w io.Writer
}

func (c counted) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.s.Sent.Add(int64(n))
	return n, err
}

// forever writes chunk until the peer goes away or 20 seconds pass, in
// writes of at least 32 KiB, so that the client, not the server, is what
// sets the pace.
func forever(w io.Writer, chunk string) {
	b := []byte(strings.Repeat(chunk, max(1, (32<<10)/max(len(chunk), 1))))
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); {
		if _, err := w.Write(b); err != nil {
			return
		}
	}
}

// trickle writes a byte every 50 ms until the peer goes away or 20
// seconds pass.
func trickle(w io.Writer) {
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); {
		if _, err := w.Write([]byte("x")); err != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// silent holds the connection open without a word until the peer goes
// away or 20 seconds pass.
func silent(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	io.Copy(io.Discard, c)
}

// reset closes c so that the peer gets a reset, not an orderly end.
func reset(_ *Server, c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

// answer plays a server that reads the request line, sends text, and then
// does what then does (nothing when nil).
func answer(text string, then func(w io.Writer, c net.Conn)) play {
	return func(s *Server, c net.Conn) {
		readLine(bufio.NewReader(c))
		w := counted{s, c}
		io.WriteString(w, text)
		if then != nil {
			then(w, c)
		}
	}
}

// endlessly sends chunk for ever after the text; trickling a byte now and
// then; stalling nothing, the connection open.
func endlessly(chunk string) func(io.Writer, net.Conn) {
	return func(w io.Writer, _ net.Conn) { forever(w, chunk) }
}

func trickling(w io.Writer, _ net.Conn) { trickle(w) }

func stalling(_ io.Writer, c net.Conn) { silent(c) }

// readLine reads one request line.
func readLine(br *bufio.Reader) string {
	l, _ := br.ReadString('\n')
	return strings.TrimRight(l, "\r\n")
}

var long = strings.Repeat("x", 1000)

// HTTP is the catalogue of HTTP faults.
var HTTP = Table{Scheme: "http", Faults: map[string]Fault{
	NeverGreet:   {Path: "/f", play: func(s *Server, c net.Conn) { silent(c) }},
	GreetForever: {Path: "/f", play: answer("HTTP/1.1 200 OK\r\n", endlessly("X-More: "+long+"\r\n"))},
	EndlessLine:  {Path: "/f", play: answer("HTTP/1.1 200 OK ", endlessly(long))},
	EndlessBody:  {Path: "/f", play: answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", endlessly(fmt.Sprintf("%x\r\n%s\r\n", len(long), long)))},
	Trickle:      {Path: "/f", play: answer("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", trickling)},
	LieAboutSize: {Path: "/f", play: answer("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789", nil)},
	DropMidBody:  {Path: "/f", play: answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n", nil)},
	StallMidBody: {Path: "/f", play: answer("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789", stalling)},
	Reset:        {Path: "/f", play: reset},
}}

// ftpData answers RETR or LIST: it accepts the data connection, says 150
// and hands the connection to send; after it, it says 226 unless final is
// false.
func ftpData(c *ftpscript.Conn, send func(d net.Conn), final bool) bool {
	d, err := c.AcceptData()
	if err != nil {
		c.Reply("425 No data connection.")
		return true
	}
	c.Reply("150 Here it comes.")
	send(d)
	d.Close()
	if final {
		c.Reply("226 Done.")
	}
	return true
}

// FTP is the catalogue of FTP faults.
var FTP = Table{Scheme: "ftp", Faults: map[string]Fault{
	NeverGreet: {Path: "/f.bin", play: func(s *Server, c net.Conn) { silent(c) }},
	GreetForever: {Path: "/f.bin", play: func(s *Server, c net.Conn) {
		forever(counted{s, c}, "220-"+long+"\r\n")
	}},
	EndlessLine: {Path: "/f.bin", play: func(s *Server, c net.Conn) {
		w := counted{s, c}
		io.WriteString(w, "220 ")
		forever(w, long)
	}},
	EndlessReply: {Path: "/f.bin", ftp: func(c *ftpscript.Conn, verb, arg string) bool {
		if verb != "FEAT" {
			return false
		}
		c.Reply("211-Features:")
		forever(c, " MDTM\r\n")
		return true
	}},
	EndlessListing: {Path: "/", ftp: func(c *ftpscript.Conn, verb, arg string) bool {
		if verb != "LIST" && verb != "MLSD" {
			return false
		}
		return ftpData(c, func(d net.Conn) {
			forever(d, "-rw-r--r--    1 0        0             383 Jan 02  2020 README.txt\r\n")
		}, true)
	}},
	EndlessBody: {Path: "/f.bin", ftp: func(c *ftpscript.Conn, verb, arg string) bool {
		if verb != "RETR" {
			return false
		}
		return ftpData(c, func(d net.Conn) { forever(d, long) }, true)
	}},
	Trickle: {Path: "/f.bin", ftp: func(c *ftpscript.Conn, verb, arg string) bool {
		if verb != "RETR" {
			return false
		}
		return ftpData(c, func(d net.Conn) { trickle(d) }, true)
	}},
	LieAboutSize: {Path: "/f.bin", ftp: func(c *ftpscript.Conn, verb, arg string) bool {
		switch verb {
		case "SIZE":
			c.Reply("213 1000")
			return true
		case "RETR":
			return ftpData(c, func(d net.Conn) { io.WriteString(d, "0123456789") }, true)
		}
		return false
	}},
	DropMidBody: {Path: "/f.bin", ftp: func(c *ftpscript.Conn, verb, arg string) bool {
		if verb != "RETR" {
			return false
		}
		d, err := c.AcceptData()
		if err == nil {
			c.Reply("150 Here it comes (10 bytes).")
			io.WriteString(d, "01234")
			d.Close()
		}
		c.Close()
		return true
	}},
	StallMidBody: {Path: "/f.bin", ftp: func(c *ftpscript.Conn, verb, arg string) bool {
		if verb != "RETR" {
			return false
		}
		return ftpData(c, func(d net.Conn) { io.WriteString(d, "01234"); silent(d) }, true)
	}},
	StallBeforeFinal: {Path: "/f.bin", ftp: func(c *ftpscript.Conn, verb, arg string) bool {
		if verb != "RETR" {
			return false
		}
		ftpData(c, func(d net.Conn) { io.WriteString(d, "0123456789") }, false)
		time.Sleep(20 * time.Second) // the 226 never comes; the connection stays open
		return true
	}},
	DropBeforeFinal: {Path: "/f.bin", ftp: func(c *ftpscript.Conn, verb, arg string) bool {
		if verb != "RETR" {
			return false
		}
		ftpData(c, func(d net.Conn) { io.WriteString(d, "0123456789") }, false)
		c.Close()
		return true
	}},
	Reset: {Path: "/f.bin", play: reset},
}}

// Gopher is the catalogue of Gopher faults; Gopher has no greeting and no
// final reply.
var Gopher = Table{Scheme: "gopher", Faults: map[string]Fault{
	NeverGreet:     {Path: "/9/f", play: func(s *Server, c net.Conn) { silent(c) }},
	EndlessLine:    {Path: "/1/", play: answer("0", endlessly(long))},
	EndlessListing: {Path: "/1/", play: answer("", endlessly("0a file\t/f\t127.0.0.1\t70\r\n"))},
	EndlessBody:    {Path: "/9/f", play: answer("", endlessly(long))},
	Trickle:        {Path: "/9/f", play: answer("", trickling)},
	LieAboutSize:   {Path: "/9/f%09%09+", play: answer("+1000\r\n0123456789", nil)},
	// A plain Gopher text that ends without its "." line cannot be told
	// from one whose server omits the line (many do); a Gopher+ text
	// announced as dot-terminated (+-1) can.
	DropMidBody:  {Path: "/0/f%09%09+", play: answer("+-1\r\na text without its final dot\r\n", nil)},
	StallMidBody: {Path: "/9/f", play: answer("0123456789", stalling)},
	Reset:        {Path: "/9/f", play: reset},
}}

// NNTP is the catalogue of NNTP faults.
var NNTP = Table{Scheme: "nntp", Faults: map[string]Fault{
	NeverGreet: {Path: "/g/1", play: func(s *Server, c net.Conn) { silent(c) }},
	EndlessLine: {Path: "/g/1", play: func(s *Server, c net.Conn) {
		w := counted{s, c}
		io.WriteString(w, "200 ")
		forever(w, long)
	}},
	EndlessListing: {Path: "/g", play: nntp(func(w io.Writer, cmd string) bool {
		if !strings.HasPrefix(cmd, "OVER") && !strings.HasPrefix(cmd, "XOVER") {
			return false
		}
		io.WriteString(w, "224 Overview follows\r\n")
		forever(w, "1\tSubject\tFrom\tDate\t<id@x>\t\t10\t1\r\n")
		return true
	})},
	EndlessBody: {Path: "/g/1", play: nntp(func(w io.Writer, cmd string) bool {
		if !strings.HasPrefix(cmd, "ARTICLE") {
			return false
		}
		io.WriteString(w, "220 1 <id@x> article\r\nSubject: s\r\n\r\n")
		forever(w, long+"\r\n")
		return true
	})},
	Trickle: {Path: "/g/1", play: nntp(func(w io.Writer, cmd string) bool {
		if !strings.HasPrefix(cmd, "ARTICLE") {
			return false
		}
		io.WriteString(w, "220 1 <id@x> article\r\n")
		trickle(w)
		return true
	})},
	DropMidBody: {Path: "/g/1", play: nntp(func(w io.Writer, cmd string) bool {
		if !strings.HasPrefix(cmd, "ARTICLE") {
			return false
		}
		io.WriteString(w, "220 1 <id@x> article\r\nSubject: s\r\n\r\nthe start of a body\r\n")
		return true
	})},
	StallMidBody: {Path: "/g/1", play: nntp(func(w io.Writer, cmd string) bool {
		if !strings.HasPrefix(cmd, "ARTICLE") {
			return false
		}
		io.WriteString(w, "220 1 <id@x> article\r\nSubject: s\r\n\r\nthe start of a body\r\n")
		time.Sleep(20 * time.Second)
		return true
	})},
	Reset: {Path: "/g/1", play: reset},
}}

// nntp plays a reader server that answers the commands a retrieval sends
// before the fault, and hands each command to fault first; after a fault
// that answered, the connection is closed.
func nntp(fault func(w io.Writer, cmd string) bool) play {
	return func(s *Server, c net.Conn) {
		w := counted{s, c}
		br := bufio.NewReader(c)
		io.WriteString(w, "200 ready\r\n")
		for {
			cmd := readLine(br)
			if cmd == "" {
				return
			}
			if fault(w, cmd) {
				return
			}
			switch verb, _, _ := strings.Cut(strings.ToUpper(cmd), " "); verb {
			case "CAPABILITIES":
				io.WriteString(w, "101 Capabilities\r\nVERSION 2\r\nREADER\r\nOVER\r\n.\r\n")
			case "MODE":
				io.WriteString(w, "200 reader\r\n")
			case "GROUP":
				io.WriteString(w, "211 1 1 1 g\r\n")
			case "QUIT":
				io.WriteString(w, "205 bye\r\n")
				return
			default:
				io.WriteString(w, "500 what?\r\n")
			}
		}
	}
}

// waisHeader is a WAIS message header (Z39.50-1988 over TCP, as freeWAIS
// frames it) announcing n bytes.
func waisHeader(n int64) string {
	return fmt.Sprintf("%010dz2wais      000", n)
}

// waisRequest reads the client's first message, its initialisation.
func waisRequest(c net.Conn) {
	var h [25]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		return
	}
	var n int64
	fmt.Sscanf(string(h[:10]), "%d", &n)
	io.CopyN(io.Discard, c, n)
}

// WAIS is the catalogue of WAIS faults; the client speaks first, so a
// silent server is one that never answers the initialisation.
var WAIS = Table{Scheme: "wais", Faults: map[string]Fault{
	NeverGreet: {Path: "/db?word", play: func(s *Server, c net.Conn) { silent(c) }},
	// A length field of 4 GB: refused before anything is read.
	EndlessReply: {Path: "/db?word", play: func(s *Server, c net.Conn) {
		waisRequest(c)
		w := counted{s, c}
		io.WriteString(w, waisHeader(4294967295))
		forever(w, long)
	}},
	LieAboutSize: {Path: "/db?word", play: func(s *Server, c net.Conn) {
		waisRequest(c)
		io.WriteString(counted{s, c}, waisHeader(1000)+"0123456789")
	}},
	Trickle: {Path: "/db?word", play: func(s *Server, c net.Conn) {
		waisRequest(c)
		w := counted{s, c}
		io.WriteString(w, waisHeader(100000))
		trickle(w)
	}},
	StallMidBody: {Path: "/db?word", play: func(s *Server, c net.Conn) {
		waisRequest(c)
		io.WriteString(counted{s, c}, waisHeader(1000)+"0123456789")
		silent(c)
	}},
	Reset: {Path: "/db?word", play: reset},
}}

// smtpServer plays an SMTP server that answers the conversation of a
// mailto: message until fault, handed each command, takes over.
func smtpServer(greeting string, fault func(w io.Writer, c net.Conn, cmd string) bool) play {
	return func(s *Server, c net.Conn) {
		w := counted{s, c}
		br := bufio.NewReader(c)
		io.WriteString(w, greeting)
		for {
			cmd := readLine(br)
			if cmd == "" {
				return
			}
			if fault(w, c, cmd) {
				return
			}
			switch verb, _, _ := strings.Cut(strings.ToUpper(cmd), " "); verb {
			case "EHLO", "HELO":
				io.WriteString(w, "250-harness.test\r\n250 8BITMIME\r\n")
			case "MAIL", "RCPT":
				io.WriteString(w, "250 OK\r\n")
			case "DATA":
				io.WriteString(w, "354 go ahead\r\n")
				for readLine(br) != "." {
				}
				io.WriteString(w, "250 queued\r\n")
			case "QUIT":
				io.WriteString(w, "221 bye\r\n")
				return
			default:
				io.WriteString(w, "500 what?\r\n")
			}
		}
	}
}

// SMTP is the catalogue of faults of a server a mailto: message is sent
// through (deref --smtp); its URL names the server, as smtp://host:port.
var SMTP = Table{Scheme: "smtp", Faults: map[string]Fault{
	NeverGreet:   {play: func(s *Server, c net.Conn) { silent(c) }},
	GreetForever: {play: func(s *Server, c net.Conn) { forever(counted{s, c}, "220-"+long+"\r\n") }},
	EndlessLine: {play: func(s *Server, c net.Conn) {
		w := counted{s, c}
		io.WriteString(w, "220 ")
		forever(w, long)
	}},
	EndlessReply: {play: smtpServer("220 ready\r\n", func(w io.Writer, c net.Conn, cmd string) bool {
		if !strings.HasPrefix(strings.ToUpper(cmd), "EHLO") {
			return false
		}
		forever(w, "250-"+long+"\r\n")
		return true
	})},
	StallBeforeFinal: {play: smtpServer("220 ready\r\n", func(w io.Writer, c net.Conn, cmd string) bool {
		if cmd != "DATA" {
			return false
		}
		io.WriteString(w, "354 go ahead\r\n")
		silent(c)
		return true
	})},
	DropBeforeFinal: {play: smtpServer("220 ready\r\n", func(w io.Writer, c net.Conn, cmd string) bool {
		if cmd != "DATA" {
			return false
		}
		io.WriteString(w, "354 go ahead\r\n")
		return true
	})},
	Reset: {play: reset},
}}

// Tables are the catalogues of the protocols deref retrieves with; SMTP's
// is driven through the command's mailto: sending.
var Tables = []Table{HTTP, FTP, Gopher, NNTP, WAIS}

// PeakHeap samples the live heap (runtime/metrics) every 2 ms until stop
// is closed, and then sends the largest sample.
func PeakHeap(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				out <- peak
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return out
}
