package ftp

import (
	"strings"
	"testing"
)

// The control state follows the conversation line by line, with no
// connection.
func TestControlState(t *testing.T) {
	var c control
	if !c.show220([]byte("230 Logged in already.\r\n")) || !c.greet230 || c.show220([]byte("230 again\r\n")) {
		t.Error("a 230 greeting is shown as 220 once")
	}
	c.received([]byte("230-Microsoft FTP Service"))
	c.received([]byte("230 ready"))
	if !c.syncOnly || !c.greetEnd {
		t.Error("a server that loses pipelined commands is known by its greeting")
	}
	c.received([]byte("150 Opening BINARY mode data connection for x (383 bytes)."))
	if c.size150.Load() != 383 {
		t.Errorf("150 size %d", c.size150.Load())
	}
	c.received([]byte("229 Entering Extended Passive Mode (|||5001|)"))
	if !c.epsvOK || c.canPipeline() {
		t.Error("EPSV works; a sync-only server is not pipelined")
	}
	c.sent([]byte("AUTH TLS"))
	if c.received([]byte("234 Proceed")) != true || !c.encrypted {
		t.Error("234 after AUTH TLS: encrypted from here on")
	}

	// Pipelining: RETR goes with the EPSV, the library's own is dropped.
	p := control{epsvOK: true}
	if !p.canPipeline() {
		t.Fatal("EPSV worked: pipelining allowed")
	}
	p.pipe = "RETR a\r\n"
	if got := string(p.outgoing([]byte("EPSV\r\n"))); got != "EPSV\r\nRETR a\r\n" {
		t.Errorf("EPSV went out as %q", got)
	}
	if got := p.outgoing([]byte("RETR a\r\n")); got != nil {
		t.Errorf("the library's RETR went out again: %q", got)
	}
	p.retrDone(true)
	if !p.reusable() {
		t.Error("in turn: reusable")
	}
	// Something else written while the RETR is outstanding.
	p.pipe = "RETR b\r\n"
	p.outgoing([]byte("EPSV\r\n"))
	if got := string(p.outgoing([]byte("PASV\r\n"))); got != "PASV\r\n" || p.reusable() {
		t.Errorf("PASV after a pipelined RETR: %q, reusable %v", got, p.reusable())
	}
	// A RETR answered that the library never wrote.
	q := control{epsvOK: true, pipe: "RETR c\r\n"}
	q.outgoing([]byte("EPSV\r\n"))
	q.retrDone(true)
	if q.reusable() {
		t.Error("the library's RETR never written: not reusable")
	}
}

// An MDTM and a SIZE sent with EPSV and RETR are answered after the
// replies still owed by the transfers before them: the 226 of the last
// file, not waited for, is not taken for either answer, and a refused
// MDTM leaves the size to SIZE.
func TestAnswersAfterOwedReplies(t *testing.T) {
	for _, mdtm := range []string{"213 20200102030405", "550 Could not get file modification time."} {
		c := control{epsvOK: true, owed: []owed{owed226}, sizeN: -1}
		c.early, c.pipe, c.preTime, c.preSize = true, "RETR b\r\n", "MDTM b\r\n", "SIZE b\r\n"
		if got := string(c.outgoing([]byte("EPSV\r\n"))); got != "MDTM b\r\nSIZE b\r\nEPSV\r\nRETR b\r\n" {
			t.Fatalf("sent %q", got)
		}
		for _, l := range []string{"226-Transfer complete.", " 280 bytes", "226 Done.", mdtm, "213 280", "229 Entering Extended Passive Mode (|||5001|)"} {
			c.received([]byte(l))
		}
		want := map[bool]string{true: "20200102030405", false: ""}[strings.HasPrefix(mdtm, "213")]
		if c.mdtm != want || c.sizeBad || c.sizeN != 280 {
			t.Errorf("MDTM answered %q: time %q, size %d (refused: %v)", mdtm, c.mdtm, c.sizeN, c.sizeBad)
		}
		c.outgoing([]byte("RETR b\r\n"))
		if !c.pending150() || c.sizeBad {
			t.Error("the size known: the data is read before the 150")
		}
	}
	// A refusal, a short line: refused, never a number.
	for _, reply := range []string{"550 No such file.", "5"} {
		d := control{epsvOK: true, sizeN: -1, early: true, pipe: "RETR c\r\n", preSize: "SIZE c\r\n"}
		d.outgoing([]byte("EPSV\r\n"))
		d.received([]byte(reply))
		if !d.sizeBad || d.sizeN != -1 {
			t.Errorf("SIZE answered %q: size %d, refused %v", reply, d.sizeN, d.sizeBad)
		}
	}
}
