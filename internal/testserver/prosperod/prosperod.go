// Package prosperod is a Prospero server for tests: ARDP over UDP on
// 127.0.0.1 and the version 5 request language, answering from a tree
// in memory as the notes on the protocol describe the Prospero 5.3
// server (dirsrv, "PreAlpha.5.3 17 May 94") and its captures show it:
// the same reply text, the same header forms, the same window of 16
// packets and done queue of 20 replies. It follows the notes, not the
// client, and scripts faults: datagrams dropped, duplicated, reordered
// or changed on their way out (Faults.Out), sent from another port
// (Faults.Spoof), ids written byte-swapped in packets sent again, and no
// answer at all.
package prosperod

import (
	"fmt"
	"net"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/urlderef/deref/protocols/prospero"
)

// Fixture is the tree of the notes' captures (their section 10): the
// server's -f area under "ftp/" and its -r root under "root/".
func Fixture() map[string]string {
	const alpha = "abcdefghijklmnopqrstuvwxyz" + "abcdefghijklmnopqrstuvwxyz" + "abcdefghijklmnopqrstuvwxyz"
	var big strings.Builder
	for n := 0; n < 500; n++ {
		fmt.Fprintf(&big, "%05d %s\n", n, alpha[n%26:n%26+53])
	}
	bytes := make([]byte, 256)
	for i := range bytes {
		bytes[i] = byte(i)
	}
	files := map[string]string{
		"ftp/pub/hello.txt":            "Hello from the Prospero server.\n",
		"ftp/pub/big.txt":              big.String(),
		"ftp/pub/bytes.bin":            string(bytes),
		"ftp/pub/it's here.txt":        "A file whose name has a space and a quote.\n",
		"ftp/pub/docs/readme.txt":      "The docs folder.\n",
		"ftp/pub/docs/nested/deep.txt": "Two folders down.\n",
		"root/readme.txt":              "A file of the -r root, outside the AFTP area.\n",
	}
	for i := 1; i <= 150; i++ {
		files[fmt.Sprintf("ftp/pub/many/f%03d.txt", i)] = fmt.Sprintf("file %03d\n", i)
	}
	return files
}

// FixtureOrder is the directory order the server reported for the
// fixture's folders (it comes from the file system: a fake takes it from
// the captures).
func FixtureOrder() map[string][]string {
	many := strings.Fields(`076 057 124 044 017 016 042 024 043 146 066 028 083 052 059 029 047 101 098 129 058 134 144 149 074 070 111 081 055 026 004 093 062 011 040 048 032 018 080 005 097 009 072 140 148 039 014 115 077 119 085 065 046 096 127 015 084 027 128 109 107 001 087 010 023 094 135 037 020 142 068 019 067 145 103 060 091 025 138 049 088 003 033 075 079 122 110 130 147 030 143 073 125 022 102 132 008 035 136 104 061 038 051 113 089 118 114 150 063 053 100 137 036 031 064 092 126 012 120 141 117 007 090 054 041 121 078 086 095 099 139 056 013 116 021 133 082 108 006 105 106 112 034 050 045 069 002 131 071 123`)
	for i, n := range many {
		many[i] = "f" + n + ".txt"
	}
	return map[string][]string{
		"ftp":          {"pub"},
		"ftp/pub":      {"bytes.bin", "it's here.txt", "big.txt", "many", "hello.txt", "docs"},
		"ftp/pub/docs": {"readme.txt", "nested"},
		"ftp/pub/many": many,
	}
}

// Faults script what goes wrong.
type Faults struct {
	// Out sees every datagram the server is about to send, numbered from
	// 1 over the server's life, and returns the datagrams to send in its
	// place: nil drops it, two copies duplicate it, a datagram held back
	// and returned with a later one reorders them, a changed header lies.
	Out func(n int, d []byte) [][]byte
	// In sees every datagram a client sends, numbered from 1 over the
	// server's life: false drops it unread (an ACK lost on its way).
	In func(n int, d []byte) bool
	// Spoof, when set, is given each datagram before it is sent; what it
	// returns (if anything) is sent first from another port of the same
	// address.
	Spoof func(d []byte) []byte
	// SwapIDs writes the connection id byte-swapped in every packet sent
	// from the done queue, as a little-endian build of the reference
	// server does (the notes' 8.3).
	SwapIDs bool
	// Silent answers nothing.
	Silent bool
}

// Server is a Prospero server. Set its fields before Start.
type Server struct {
	// Files is the tree: "ftp/..." the anonymous-FTP area (hsonames
	// AFTP/... and FTPArea/...), "root/..." the exported root (RootArea/...).
	// Folders are the paths' prefixes. Nil means Fixture.
	Files map[string]string
	// Order gives folders' entries in the order they are listed; a folder
	// it leaves out is listed sorted. Nil means FixtureOrder.
	Order map[string][]string
	// Port is the UDP port to listen on; 0 means any free one.
	Port int
	// Host is the server's name (its -h); "" means 127.0.0.1.
	Host string
	// FTPArea and RootArea are the full paths of the two areas; "" means
	// /srv/prospero/ftp and /srv/prospero/root.
	FTPArea, RootArea string
	// AFTPHost is the host AFTP access methods name; "" means Host (the
	// FTP port implied). A test that serves the area over FTP names
	// HOST(PORT).
	AFTPHost string
	// LinkPort is the port LINK lines name the server by (HOST(PORT),
	// the port left out when it is 1525); 0 means the one it listens on.
	LinkPort int
	// ModTime is every object's time; zero means 2024-01-02T03:04:05Z.
	ModTime time.Time
	// Reply, when set, answers a request's text: the answer and true, or
	// false to answer from the tree.
	Reply  func(request string) (string, bool)
	Faults Faults

	conn, other *net.UDPConn
	mu          sync.Mutex
	pending     map[string]*pending
	done        []*reply
	out         int
	requests    []string
	received    int
	stopped     chan struct{}
}

type pending struct {
	parts  map[uint16][]byte
	total  uint16
	window int
}

type reply struct {
	key    string
	cid    uint16
	addr   *net.UDPAddr
	pkts   [][]byte
	window int
	rcvd   uint16
	reqN   uint16 // the request's packets: the server's received-through
}

// Start listens on 127.0.0.1, on a port of its own.
func (s *Server) Start() error {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: s.Port})
	if err != nil {
		return err
	}
	o, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		c.Close()
		return err
	}
	s.conn, s.other, s.pending, s.stopped = c, o, map[string]*pending{}, make(chan struct{})
	if s.Files == nil {
		s.Files = Fixture()
		if s.Order == nil {
			s.Order = FixtureOrder()
		}
	}
	if s.Host == "" {
		s.Host = "127.0.0.1"
	}
	if s.FTPArea == "" {
		s.FTPArea = "/srv/prospero/ftp"
	}
	if s.RootArea == "" {
		s.RootArea = "/srv/prospero/root"
	}
	if s.AFTPHost == "" {
		s.AFTPHost = s.Host
	}
	if s.ModTime.IsZero() {
		s.ModTime = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	}
	go s.serve()
	return nil
}

// Addr is the server's address, HOST:PORT.
func (s *Server) Addr() string { return s.conn.LocalAddr().String() }

// Close stops the server.
func (s *Server) Close() error {
	s.conn.Close()
	s.other.Close()
	<-s.stopped
	return nil
}

// Requests returns the text of every request run so far, in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Received is the number of datagrams the server has read.
func (s *Server) Received() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.received
}

func (s *Server) serve() {
	defer close(s.stopped)
	buf := make([]byte, 65535)
	for {
		n, addr, err := s.conn.ReadFromUDP(buf)
		if err != nil {
			return
		}
		s.mu.Lock()
		s.received++
		n2 := s.received
		s.mu.Unlock()
		if s.Faults.Silent || s.Faults.In != nil && !s.Faults.In(n2, buf[:n]) {
			continue
		}
		s.datagram(addr, append([]byte(nil), buf[:n]...))
	}
}

// datagram handles one datagram from a client (the notes' 3.9 and 9).
func (s *Server) datagram(addr *net.UDPAddr, d []byte) {
	if len(d) > 0 && d[0] > 31 {
		return // a version-1 request, with no header: not served
	}
	h, text, err := prospero.ParseHeader(d)
	if err != nil {
		return
	}
	key := fmt.Sprintf("%s/%d", addr, h.ConnID)
	if r := s.doneReply(key); r != nil && h.ConnID != 0 {
		if h.Option == prospero.OptCancel {
			return
		}
		if h.HasRcvd && h.Rcvd > r.rcvd {
			r.rcvd = min(h.Rcvd, uint16(len(r.pkts)))
		}
		if int(r.rcvd) < len(r.pkts) {
			s.window(r, true)
		}
		return
	}
	if h.Seq == 0 {
		if h.Option == prospero.OptCancel {
			delete(s.pending, key)
		}
		return
	}
	p := s.pending[key]
	if p == nil {
		p = &pending{parts: map[uint16][]byte{}}
		s.pending[key] = p
	}
	p.parts[h.Seq] = text
	if h.Total != 0 {
		p.total = h.Total
	}
	if h.Flags&prospero.FlagWindow != 0 {
		p.window = int(h.Window)
	}
	if len(p.parts) < int(max(p.total, 1)) {
		if len(p.parts) > 1 { // the ACK of a request of several packets
			var through uint16
			for p.parts[through+1] != nil {
				through++
			}
			s.send(addr, prospero.Header{ConnID: h.ConnID, Seq: 0, Rcvd: through, HasRcvd: true}.Append(nil), false)
		}
		return
	}
	delete(s.pending, key)
	var msg []byte
	for i := uint16(1); i <= max(p.total, 1); i++ {
		msg = append(msg, p.parts[i]...)
	}
	s.mu.Lock()
	s.requests = append(s.requests, string(msg))
	s.mu.Unlock()
	text2 := s.run(string(msg))
	var pkts [][]byte
	for len(text2) > prospero.PacketText {
		pkts = append(pkts, []byte(text2[:prospero.PacketText]))
		text2 = text2[prospero.PacketText:]
	}
	pkts = append(pkts, []byte(text2))
	w := p.window
	if w == 0 {
		w = prospero.DefaultWindow
	}
	w = min(w, 256)
	r := &reply{key: key, cid: h.ConnID, addr: addr, pkts: pkts, window: w, reqN: max(p.total, 1)}
	if h.HasRcvd {
		r.rcvd = min(h.Rcvd, uint16(len(pkts)))
	}
	s.window(r, false)
	if h.ConnID != 0 {
		s.done = append([]*reply{r}, s.done...)
		if len(s.done) > 20 {
			s.done = s.done[:20]
		}
	}
}

func (s *Server) doneReply(key string) *reply {
	for _, r := range s.done {
		if r.key == key {
			return r
		}
	}
	return nil
}

// window sends the packets after the client's received-through, as far
// as the window goes, in the header forms of the notes' 3.3: as the
// reply is produced (first) or again from the done queue.
func (s *Server) window(r *reply, again bool) {
	total := uint16(len(r.pkts))
	end := min(int(r.rcvd)+r.window, int(total))
	for k := int(r.rcvd) + 1; k <= end; k++ {
		h := prospero.Header{ConnID: r.cid, Seq: uint16(k)}
		windowEnd := k == int(r.rcvd)+r.window
		switch {
		case !again && total == 1 && r.cid == 0:
			h.Len = 1
		case !again && total == 1:
			h.Len = 3
		case windowEnd:
			h.Len, h.Rcvd, h.HasRcvd, h.HasWait, h.Flags = 12, r.reqN, true, true, prospero.FlagAck
			if again || k == int(total) {
				h.Total = total
			}
		case again:
			h.Len, h.Total, h.Rcvd, h.HasRcvd = 9, total, r.reqN, true
		default:
			h.Len = 7
			if k == int(total) {
				h.Total = total
			}
		}
		if again && s.Faults.SwapIDs {
			h.ConnID = h.ConnID<<8 | h.ConnID>>8
		}
		s.send(r.addr, append(h.Append(nil), r.pkts[k-1]...), true)
	}
}

func (s *Server) send(addr *net.UDPAddr, d []byte, reply bool) {
	s.mu.Lock()
	s.out++
	n := s.out
	s.mu.Unlock()
	if s.Faults.Spoof != nil {
		if f := s.Faults.Spoof(d); f != nil {
			s.other.WriteToUDP(f, addr)
		}
	}
	ds := [][]byte{d}
	if s.Faults.Out != nil {
		ds = s.Faults.Out(n, d)
	}
	for _, d := range ds {
		s.conn.WriteToUDP(d, addr)
	}
}

// run answers a request message: its lines in order, the reply the
// concatenation of their outputs, the first FAILURE or ERROR ending it.
func (s *Server) run(msg string) string {
	if s.Reply != nil {
		if r, ok := s.Reply(msg); ok {
			return r
		}
	}
	lines, err := prospero.Lines(msg)
	if err != nil {
		return "ERROR unterminated quote\n"
	}
	var out strings.Builder
	dir := ""
	haveDir := false
	for _, line := range lines {
		tok, err := prospero.Tokens(line)
		if err != nil {
			out.WriteString("ERROR unterminated quote\n")
			break
		}
		if len(tok) == 0 {
			continue
		}
		stop := false
		switch tok[0] {
		case "VERSION":
			switch {
			case len(tok) == 1:
				out.WriteString("VERSION 5 P53.17May94b\n")
			case tok[1] != "5":
				out.WriteString("VERSION-NOT-SUPPORTED TRY 1-5")
				stop = true
			}
		case "AUTHENTICATE":
		case "STATUS":
			fmt.Fprintf(&out, "Prospero server (PreAlpha.5.3 17 May 94, patchlevel b) %s\nRequests since startup %d (0 V1)\n   Root: %s\n   AFTP: %s\n", s.Host, len(s.Requests()), s.RootArea, s.FTPArea)
		case "GET-OBJECT-INFO":
			if len(tok) < 4 || len(tok) > 5 {
				out.WriteString("ERROR wrong number of arguments\n")
				stop = true
				break
			}
			stop = s.objectInfo(&out, tok[1], tok[3])
		case "DIRECTORY":
			if len(tok) < 3 {
				out.WriteString("ERROR wrong number of arguments\n")
				stop = true
				break
			}
			p, ok := s.resolve(tok[2])
			if !ok {
				out.WriteString("FAILURE NOT-AUTHORIZED\n")
				stop = true
				break
			}
			dir, haveDir = p, true
		case "LIST":
			if !haveDir || len(tok) < 3 || tok[2] != "COMPONENTS" {
				out.WriteString("ERROR wrong number of arguments\n")
				stop = true
				break
			}
			stop = s.list(&out, dir, tok[1], tok[3:])
		case "EDIT-OBJECT-INFO", "EDIT-LINK-INFO", "EDIT-ACL", "CREATE-LINK", "CREATE-OBJECT", "DELETE-LINK", "UPDATE", "PARAMETER", "ATOMIC", "LIST-ACL":
			out.WriteString("FAILURE UNIMPLEMENTED " + line + "\n")
			stop = true
		default:
			out.WriteString("ERROR Unknown message: " + line + "\n")
			stop = true
		}
		if stop {
			break
		}
	}
	return out.String()
}

// resolve maps an hsoname to a path of the tree, as check_handle allows
// it: AFTP... below the FTP area, the areas' full paths as plain string
// prefixes, no ".." component anywhere.
func (s *Server) resolve(h string) (string, bool) {
	for _, c := range strings.Split(h, "/") {
		if c == ".." {
			return "", false
		}
	}
	var p string
	switch {
	case strings.HasPrefix(h, "AFTP"):
		p = "ftp" + h[4:]
	case strings.HasPrefix(h, s.RootArea):
		p = "root" + h[len(s.RootArea):]
	case strings.HasPrefix(h, s.FTPArea):
		p = "ftp" + h[len(s.FTPArea):]
	default:
		return "", false
	}
	return path.Clean(p), true
}

// hsoname is the name the server gives a path of its tree.
func (s *Server) hsoname(p string) string {
	if rest, ok := strings.CutPrefix(p, "ftp"); ok {
		return "AFTP" + rest
	}
	return s.RootArea + strings.TrimPrefix(p, "root")
}

// isDir says whether p is a folder of the tree; isFile whether a file.
func (s *Server) isDir(p string) bool {
	if p == "ftp" || p == "root" {
		return true
	}
	for name := range s.Files {
		if strings.HasPrefix(name, p+"/") {
			return true
		}
	}
	return false
}

func (s *Server) isFile(p string) bool { _, ok := s.Files[p]; return ok }

// children lists a folder's entries in its order.
func (s *Server) children(p string) []string {
	seen := map[string]bool{}
	var names []string
	for name := range s.Files {
		if rest, ok := strings.CutPrefix(name, p+"/"); ok {
			c, _, _ := strings.Cut(rest, "/")
			if !seen[c] {
				seen[c] = true
				names = append(names, c)
			}
		}
	}
	sort.Strings(names)
	if order, ok := s.Order[p]; ok {
		var out []string
		for _, n := range order {
			if seen[n] {
				out = append(out, n)
				delete(seen, n)
			}
		}
		for _, n := range names {
			if seen[n] {
				out = append(out, n)
			}
		}
		return out
	}
	return names
}

var q = prospero.QuoteAsServer

// attributes writes an object's intrinsic attributes, the ones named
// (#ALL: all but CONTENTS; CONTENTS alone when it is named at all).
func (s *Server) attributes(out *strings.Builder, p string, names map[string]bool) int {
	file := s.isFile(p)
	n := 0
	line := func(name string, values ...string) {
		if names != nil && !names[name] {
			return
		}
		n++
		out.WriteString("ATTRIBUTE OBJECT INTRINSIC " + name + " SEQUENCE " + strings.Join(values, " ") + "\n")
	}
	size, modes := "4096 bytes", "drwxr-xr-x"
	if file {
		size, modes = fmt.Sprintf("%d bytes", len(s.Files[p])), "-rw-r--r--"
	}
	line("SIZE", q(size))
	line("NATIVE-OWNER", "root")
	line("NATIVE-GROUP", "root")
	line("LAST-MODIFIED", s.ModTime.UTC().Format("20060102150405Z"))
	line("UNIX-MODES", modes)
	if file {
		line("ACCESS-METHOD", "PROSPERO-CONTENTS", "''", "''", "''", "''")
		line("ACCESS-METHOD", "LOCAL", "''", "''", "''", "''")
		if rest, ok := strings.CutPrefix(p, "ftp/"); ok {
			line("ACCESS-METHOD", "AFTP", "INTERNET-D", s.AFTPHost, "ASCII", q("/"+rest), "BINARY")
		}
	}
	return n
}

func (s *Server) objectInfo(out *strings.Builder, attrs, h string) bool {
	p, ok := s.resolve(h)
	if !ok {
		out.WriteString("FAILURE NOT-AUTHORIZED\n")
		return true
	}
	if !s.isFile(p) && !s.isDir(p) {
		out.WriteString("FAILURE NOT-FOUND\n")
		return true
	}
	var names map[string]bool
	contents := false
	for _, a := range strings.Split(attrs, "+") {
		switch a {
		case "#ALL", "#OBJECT", "#INTERESTING":
		case "CONTENTS":
			contents = true
		default:
			if names == nil {
				names = map[string]bool{}
			}
			names[a] = true
		}
	}
	if contents { // #ALL+CONTENTS gives CONTENTS alone (the notes' 8.1, 6)
		if !s.isFile(p) {
			out.WriteString("NONE-FOUND\n")
			return false
		}
		out.WriteString("ATTRIBUTE OBJECT INTRINSIC CONTENTS SEQUENCE DATA " + q(s.Files[p]) + "\n")
		return false
	}
	if s.attributes(out, p, names) == 0 {
		out.WriteString("NONE-FOUND\n")
	}
	return false
}

func (s *Server) list(out *strings.Builder, dir, options string, comps []string) bool {
	if !s.isDir(dir) {
		out.WriteString("FAILURE NOT-A-DIRECTORY\n")
		return true
	}
	withAttrs := strings.Contains(options, "ATTRIBUTES")
	kids := s.children(dir)
	switch {
	case len(comps) == 1 && comps[0] != "*":
		kids = nil
		if s.isDir(dir+"/"+comps[0]) || s.isFile(dir+"/"+comps[0]) {
			kids = []string{comps[0]}
		}
	case len(comps) > 1:
		p := dir + "/" + strings.Join(comps[:len(comps)-1], "/")
		dir, kids = p, nil
		last := comps[len(comps)-1]
		if s.isDir(p+"/"+last) || s.isFile(p+"/"+last) {
			kids = []string{last}
		}
	}
	if len(kids) == 0 {
		out.WriteString("NONE-FOUND\n")
		return false
	}
	host := strings.ToUpper(s.Host)
	port := s.LinkPort
	if port == 0 {
		port = s.conn.LocalAddr().(*net.UDPAddr).Port
	}
	if port != prospero.DefaultPort {
		host += fmt.Sprintf("(%d)", port)
	}
	for _, k := range kids {
		p := dir + "/" + k
		target, typ := "FILE", "L"
		if s.isDir(p) {
			target = "DIRECTORY"
		}
		if strings.HasPrefix(k, ".") {
			typ = "I"
		}
		fmt.Fprintf(out, "LINK  %s %s %s INTERNET-D %s ASCII %s 0\n", typ, target, q(k), host, q(s.hsoname(p)))
		if withAttrs {
			s.attributes(out, p, nil)
		}
	}
	return false
}
