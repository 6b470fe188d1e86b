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
}

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
	switch {
	case bytes.HasPrefix(line, []byte("150")):
		c.size150.Store(sizeIn150(line))
	case bytes.HasPrefix(line, []byte("229 ")):
		c.epsvOK = true
	case c.authSent && bytes.HasPrefix(line, []byte("234")):
		c.encrypted = true
		return true
	}
	return false
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
			return nil
		}
		c.pipeSent = ""
		c.desync = true
	}
	if c.pipe != "" && string(p) == "EPSV\r\n" {
		both := make([]byte, 0, len(p)+len(c.pipe))
		both = append(append(both, p...), c.pipe...)
		c.pipeSent, c.pipe = c.pipe, ""
		return both
	}
	return p
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
