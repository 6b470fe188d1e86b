package ftp

import (
	"bytes"
	"strconv"
	"sync/atomic"
)

// control is the control connection's state as deref keeps it beside
// github.com/jlaffaye/ftp, which holds the connection for login, TLS,
// listings and the commands it sends well. The connection (traceConn)
// hands it each line that goes each way; the transfer code asks it and
// sets what it wants done. Two things the library cannot do happen here,
// openly:
//
//   - A greeting of 230 (RFC 959 lets a server log the client in at
//     once): the library knows only 220, so it is shown 220 (show220) and
//     the login is skipped (greet230).
//   - RETR pipelined with EPSV: once a 229 has come (epsvOK), a transfer
//     may set pipe; the next EPSV the library writes goes out with it
//     (outgoing), and the library's own RETR, written after it has
//     connected, is dropped. Anything else written while that RETR is
//     outstanding means a reply may be read out of turn: desync, and the
//     connection is never reused.
type control struct {
	// The greeting.
	greeted  bool // its first bytes have come
	greetEnd bool // its last line has been read
	greet230 bool // it was 230: logged in already
	syncOnly bool // it names a server known to lose commands sent ahead

	// TLS.
	authSent  bool // AUTH TLS went out
	encrypted bool // the conversation is inside TLS from here on

	// Transfers.
	epsvOK  bool         // a 229 came: EPSV works on this connection
	size150 atomic.Int64 // the size the last 150 reply named; -1 when none

	// Pipelining.
	pipe     string // "RETR name\r\n" to send with the next EPSV
	pipeSent string // that command, sent ahead of the library's own
	desync   bool   // a command went ahead and its reply may be unread

	// Early reading: a transfer whose size is known reads its data as
	// soon as the data connection is made, without waiting for the 150
	// (the library is shown one: inject), and ends without waiting for
	// the 226; those replies are owed, and taken out of what the library
	// reads next (take). preTime and preSize ask the time and the size
	// with the same write; their replies come after the owed ones of the
	// transfers before, and are known by their place (ends counts the
	// replies received; timeAt and sizeAt are the places of theirs).
	early    bool
	preTime  string  // "MDTM name\r\n" to send before the next EPSV
	mdtm     string  // MDTM's answer, "" when none (yet) or refused
	timeAt   awaited // where MDTM's reply comes, while it is to come
	preSize  string  // "SIZE name\r\n" to send before the next EPSV
	sizeN    int64   // SIZE's answer, -1 when none (yet)
	sizeBad  bool    // SIZE was refused
	sizeAt   awaited // where SIZE's reply comes, while it is to come
	ends     int     // replies received whole
	rmulti   bool    // received is inside a multi-line reply
	rcode    [3]byte // its code
	since229 int     // lines read since the last 229: the library may hold them
	partial  bool    // the library holds part of a line
	inject   []byte  // a reply shown to the library without the server's
	// refused150: a refusal came where a 150 was owed (given to the
	// library instead).
	refused150 bool
	owed       []owed // the replies still to take out, in order
	line       []byte // the first bytes of the line being taken out
	multi      bool   // inside a multi-line reply taken out
	code       [3]byte
}

// awaited is the place (counted as control.ends counts) of a reply still
// to come, plus one; zero when none is.
type awaited int

// set records that the reply at place is to come.
func (a *awaited) set(place int) { *a = awaited(place + 1) }

// take reports whether the reply at place is the one awaited, which then
// is no longer.
func (a *awaited) take(place int) bool {
	if *a == 0 || int(*a)-1 != place {
		return false
	}
	*a = 0
	return true
}

// owed is a reply to take out of what the library reads.
type owed int

const (
	owedSize owed = iota // SIZE's: its number is kept
	owedTime             // MDTM's: its time is kept
	owed150              // RETR's 150: a refusal instead is given to the library
	owed226              // a transfer's final reply, after every byte came
)

// syncGreetings name, in a greeting, servers that lose commands sent ahead
// of a reply: lftp's auto-sync-mode list.
var syncGreetings = [][]byte{[]byte("icrosoft FTP Service"), []byte("MadGoat")}

// show220 is told of the first bytes the server sends; it reports whether
// the library must be shown 220 in place of the greeting's 230.
func (c *control) show220(p []byte) bool {
	if c.greeted || len(p) == 0 {
		return false
	}
	c.greeted = true
	if len(p) >= 3 && string(p[:3]) == "230" {
		c.greet230 = true
		return true
	}
	return false
}

// received is told of each whole line the server sends (CR LF removed);
// it reports whether the conversation is encrypted from this line on.
func (c *control) received(line []byte) (encryptedNow bool) {
	if !c.greetEnd {
		for _, g := range syncGreetings {
			if bytes.Contains(line, g) {
				c.syncOnly = true
			}
		}
		c.greetEnd = len(line) < 4 || line[3] != '-'
	}
	if replyEnds(line, &c.rmulti, &c.rcode) {
		c.answered(c.ends, line)
		c.ends++
	}
	c.since229++
	switch {
	case bytes.HasPrefix(line, []byte("150")):
		c.size150.Store(sizeIn150(line))
	case bytes.HasPrefix(line, []byte("229 ")):
		c.epsvOK = true
		c.since229 = 0 // counted from the next line
	case c.authSent && bytes.HasPrefix(line, []byte("234")):
		c.encrypted = true
		return true
	}
	return false
}

// answered is told of the last line of the reply at place i.
func (c *control) answered(i int, line []byte) {
	ok := len(line) >= 4 && bytes.HasPrefix(line, []byte("213"))
	var msg string
	if ok {
		msg = string(bytes.TrimSpace(line[4:]))
	}
	switch {
	case c.timeAt.take(i):
		c.mdtm = msg
	case c.sizeAt.take(i):
		n, err := strconv.ParseInt(msg, 10, 64)
		if ok && err == nil && n >= 0 {
			c.sizeN = n
		} else {
			c.sizeBad = true
		}
	}
}

// sent is told of each whole line that goes to the server.
func (c *control) sent(line []byte) {
	if bytes.EqualFold(line, []byte("AUTH TLS")) {
		c.authSent = true
	}
}

// outgoing decides what goes on the wire when the library writes p: p
// itself, p with the pipelined RETR after it (an EPSV), or nothing (the
// library's own RETR, sent already).
func (c *control) outgoing(p []byte) []byte {
	if c.pipeSent != "" {
		if string(p) == c.pipeSent {
			c.pipeSent = ""
			c.early150()
			return nil
		}
		c.pipeSent = ""
		c.desync = true
	}
	if c.pipe != "" && string(p) == "EPSV\r\n" {
		both := make([]byte, 0, len(c.preTime)+len(c.preSize)+len(p)+len(c.pipe))
		both = append(append(append(append(both, c.preTime...), c.preSize...), p...), c.pipe...)
		if c.preTime != "" {
			c.timeAt.set(c.ends + len(c.owed))
			c.mdtm = ""
			c.owed = append(c.owed, owedTime)
			c.preTime = ""
		}
		if c.preSize != "" {
			c.sizeAt.set(c.ends + len(c.owed))
			c.owed = append(c.owed, owedSize)
			c.preSize = ""
		}
		c.pipeSent, c.pipe = c.pipe, ""
		return both
	}
	return p
}

// early150 is told that the library's RETR, sent ahead, would now be
// answered: when the transfer reads early and its size is known, the
// library is shown a 150 at once and the server's is owed.
func (c *control) early150() {
	if !c.early {
		return
	}
	c.early = false
	if c.sizeBad || c.sizeN < 0 || c.partial || c.since229 > 0 {
		// The library reads RETR's own reply: a refusal most likely, or
		// one it holds already (any line read after the 229, the 150
		// included), whole or in part.
		c.sizeBad = true
		return
	}
	c.inject = append(c.inject, "150 Not waited for: the data is read as it comes.\r\n"...)
	c.owed = append(c.owed, owed150)
	c.refused150 = false
}

// pending150 says a 150 is owed.
func (c *control) pending150() bool {
	for _, o := range c.owed {
		if o == owed150 {
			return true
		}
	}
	return false
}

// take removes from p the bytes of owed replies at its start and returns
// what is left, in p's array. A refusal in place of an owed 150 is left
// for the library, with the 226 that will not come dropped from the
// owed ones.
func (c *control) take(p []byte) []byte {
	i := 0
	for i < len(p) && len(c.owed) > 0 {
		if len(c.line) == 0 && c.owed[0] == owed150 && !c.multi && p[i] != '1' {
			c.refused150 = true
			c.owed = c.owed[1:]
			if len(c.owed) > 0 && c.owed[0] == owed226 {
				c.owed = c.owed[1:]
			}
			break // the library's reply: it ends the transfer in error
		}
		b := p[i]
		i++
		if len(c.line) < 4 {
			c.line = append(c.line, b)
		}
		if b != '\n' {
			continue
		}
		if replyEnds(c.line, &c.multi, &c.code) {
			c.owed = c.owed[1:]
		}
		c.line = c.line[:0]
	}
	return p[:copy(p, p[i:])]
}

// canPipeline says whether a RETR may go with the next EPSV: EPSV has
// worked, the server is not one that loses commands, and the conversation
// is not encrypted (the library holds its TLS).
func (c *control) canPipeline() bool {
	return c.epsvOK && !c.syncOnly && !c.encrypted
}

// retrDone is told that the library's RETR was answered: if the RETR went
// ahead with EPSV and the library's own was never written, the replies
// may be out of turn.
func (c *control) retrDone(ok bool) {
	c.pipe = ""
	if ok && c.pipeSent != "" {
		c.desync = true
	}
}

// reusable says whether the connection may serve another request.
func (c *control) reusable() bool {
	return !c.desync && c.pipeSent == ""
}

// sizeIn150 reads the size many servers put in their 150 reply to RETR,
// "150 Opening BINARY mode data connection for x (383 bytes).", or -1.
func sizeIn150(line []byte) int64 {
	end := bytes.LastIndex(line, []byte(" bytes)"))
	if end < 0 {
		return -1
	}
	start := bytes.LastIndexByte(line[:end], '(')
	if start < 0 {
		return -1
	}
	n, err := strconv.ParseInt(string(line[start+1:end]), 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// replyEnds is told of each reply line's first bytes (up to four) at the
// line's end, and says whether the line ends a reply: a line of its own,
// or the "DDD " closing the "DDD-" that multi and code keep.
func replyEnds(h []byte, multi *bool, code *[3]byte) bool {
	coded := len(h) >= 4 && h[0] >= '0' && h[0] <= '9' && h[1] >= '0' && h[1] <= '9' && h[2] >= '0' && h[2] <= '9'
	switch {
	case coded && !*multi && h[3] == '-':
		*multi = true
		copy(code[:], h[:3])
	case !*multi || coded && h[3] != '-' && [3]byte(h[:3]) == *code:
		*multi = false
		return true
	}
	return false
}
