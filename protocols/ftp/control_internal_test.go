package ftp

import "testing"

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
