package ftp_test

import (
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
)

// TestPipelinedRetr checks that once EPSV has worked on a connection, a
// transfer's RETR is sent with its EPSV (the server has it before it
// answers 229), that nothing else changes in the conversation, and that
// NoPipelining sends every command on its own.
func TestPipelinedRetr(t *testing.T) {
	files := map[string]string{"a.bin": "aaa", "b.bin": "bbb", "c.txt": "c\r\n"}
	want := map[string]string{"a.bin": "aaa", "b.bin": "bbb", "c.txt": "c\n"}
	for _, off := range []bool{false, true} {
		s := scriptServer(t, files, nil)
		c := newTraced()
		c.FTP.NoPipelining = off
		for _, n := range []string{"a.bin", "b.bin", "c.txt"} {
			if body, _ := c.get(t, "ftp://"+s.Addr()+"/"+n); body != want[n] {
				t.Errorf("%s: %q", n, body)
			}
		}
		early := []string{"RETR b.bin", "RETR c.txt"}
		if off {
			early = nil
		}
		if got := s.Early(); strings.Join(got, "|") != strings.Join(early, "|") {
			t.Errorf("NoPipelining %v: commands sent ahead of a reply %q, want %q", off, got, early)
		}
		seq := []string{"EPSV", "RETR a.bin", "EPSV", "RETR b.bin", "TYPE A", "EPSV", "RETR c.txt"}
		var got []string
		for _, cmd := range s.Commands() {
			if cmd == "EPSV" || strings.HasPrefix(cmd, "RETR") || cmd == "TYPE A" {
				got = append(got, cmd)
			}
		}
		if strings.Join(got, "|") != strings.Join(seq, "|") {
			t.Errorf("NoPipelining %v: sent %q, want %q", off, got, seq)
		}
		if n := logins(s.Commands()); n != 1 {
			t.Errorf("NoPipelining %v: %d logins", off, n)
		}
	}
}

// TestPipelineFaults checks what follows when the EPSV that a RETR went
// with fails, on a connection where EPSV had worked: the RETR's reply must
// not be taken for another command's, and the file still comes, through
// a new connection and PASV. A refused RETR leaves the connection usable.
func TestPipelineFaults(t *testing.T) {
	files := map[string]string{"a.bin": "aaa", "b.bin": "bbb"}
	// later refuses or breaks every EPSV after the first one.
	later := func(fault func(c *ftpscript.Conn)) ftpscript.Handler {
		var mu sync.Mutex
		n := 0
		return func(c *ftpscript.Conn, verb, arg string) bool {
			if verb != "EPSV" {
				return false
			}
			mu.Lock()
			n++
			first := n == 1
			mu.Unlock()
			if first {
				return false
			}
			fault(c)
			return true
		}
	}
	for _, tt := range []struct {
		name  string
		fault func(c *ftpscript.Conn)
	}{
		{"EPSV refused", func(c *ftpscript.Conn) { c.Reply("500 EPSV not understood") }},
		{"EPSV port unreachable", func(c *ftpscript.Conn) {
			ln, _ := net.Listen("tcp", "127.0.0.1:0")
			port := ln.Addr().(*net.TCPAddr).Port
			ln.Close()
			c.Reply("229 Entering Extended Passive Mode (|||%d|)", port)
		}},
	} {
		s := scriptServer(t, files, later(tt.fault))
		c := newTraced()
		for _, n := range []string{"a.bin", "b.bin"} {
			if body, _ := c.get(t, "ftp://"+s.Addr()+"/"+n); body != files[n] {
				t.Errorf("%s: %s: %q", tt.name, n, body)
			}
		}
		// The first connection's server goroutine reads what came with
		// EPSV while the client goes on with a second login: on a busy
		// machine it may not have yet when b.bin is in.
		for deadline := time.Now().Add(5 * time.Second); !contains(s.Early(), "RETR b.bin") && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		cmds := s.Commands()
		if !contains(s.Early(), "RETR b.bin") || !contains(cmds, "PASV") || logins(cmds) != 2 {
			t.Errorf("%s: want RETR b.bin pipelined, then PASV on a second login: %q", tt.name, cmds)
		}
	}

	// A refused EPSV whose RETR is refused too: the RETR's 550 comes as
	// the answer to the library's PASV, and the PASV's own reply after it;
	// the connection must not go back to the pool.
	s := scriptServer(t, files, later(func(c *ftpscript.Conn) { c.Reply("500 EPSV not understood") }))
	c := newTraced()
	c.get(t, "ftp://"+s.Addr()+"/a.bin")
	_, err := c.Get(t.Context(), "ftp://"+s.Addr()+"/gone.bin;type=i")
	if !errors.Is(err, fetch.ErrNotFound) || !strings.Contains(err.Error(), "Failed to open file") {
		t.Errorf("gone.bin with EPSV refused: %v, want RETR's own not found", err)
	}
	for _, n := range []string{"a.bin", "b.bin"} {
		if body, _ := c.get(t, "ftp://"+s.Addr()+"/"+n); body != files[n] {
			t.Errorf("%s after gone.bin: %q", n, body)
		}
	}
	if n := logins(s.Commands()); n != 2 {
		t.Errorf("%d logins, want 2 (the connection that lost step closed): %q", n, s.Commands())
	}

	s = scriptServer(t, files, nil)
	c = newTraced()
	c.get(t, "ftp://"+s.Addr()+"/a.bin")
	_, err = c.Get(t.Context(), "ftp://"+s.Addr()+"/gone.bin;type=i")
	if !errors.Is(err, fetch.ErrNotFound) {
		t.Errorf("gone.bin: %v, want not found", err)
	}
	if body, _ := c.get(t, "ftp://"+s.Addr()+"/b.bin"); body != "bbb" {
		t.Errorf("b.bin after a refused RETR: %q", body)
	}
	if cmds := s.Commands(); !contains(s.Early(), "RETR gone.bin") || logins(cmds) != 1 {
		t.Errorf("want RETR gone.bin pipelined and one login: %q, early %q", cmds, s.Early())
	}
}

// TestPipelineKnownServers: servers whose greeting names one that loses
// commands sent ahead of a reply (lftp's auto-sync list) get every
// command after the last reply, also when the name is on a later line of
// the greeting.
func TestPipelineKnownServers(t *testing.T) {
	for _, greeting := range []string{"220 Microsoft FTP Service", "220-Welcome.\r\n220 MadGoat FTP server ready"} {
		s := &ftpscript.Server{Files: map[string]string{"a.bin": "a", "b.bin": "b"}, Greeting: greeting}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		c := newTraced()
		for _, n := range []string{"a.bin", "b.bin"} {
			if body, _ := c.get(t, "ftp://"+s.Addr()+"/"+n); body != n[:1] {
				t.Errorf("%q: %s: %q", greeting, n, body)
			}
		}
		if early := s.Early(); len(early) > 0 {
			t.Errorf("%q: commands sent ahead of a reply: %q", greeting, early)
		}
	}
}
