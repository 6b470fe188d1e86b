package ftp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// TestPipelinedRetr checks that once EPSV has worked on a connection, a
// transfer's RETR is sent with its EPSV (the server has it before it
// answers 229), a file's MDTM with them when its time is not known, text
// files' too, and a binary file's SIZE when its size is not, that the
// time is the file's, that nothing else changes in the conversation, and
// that NoPipelining sends every command on its own.
func TestPipelinedRetr(t *testing.T) {
	files := map[string]string{"a.bin": "aaa", "b.bin": "bbb", "c.txt": "c\r\n"}
	want := map[string]string{"a.bin": "aaa", "b.bin": "bbb", "c.txt": "c\n"}
	for _, off := range []bool{false, true} {
		s := scriptServer(t, files, nil)
		c := newTraced()
		c.FTP.NoPipelining = off
		for _, n := range []string{"a.bin", "b.bin", "c.txt"} {
			body, resp := c.get(t, "ftp://"+s.Addr()+"/"+n)
			if body != want[n] {
				t.Errorf("%s: %q", n, body)
			}
			if mod := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC); !resp.ModTime.Equal(mod) {
				t.Errorf("NoPipelining %v: %s dated %v, want %v", off, n, resp.ModTime, mod)
			}
		}
		// b.bin's time and size, not known (the 150 replies name sizes),
		// are asked in the same write as its EPSV and RETR, MDTM first;
		// c.txt's time too, after its TYPE A.
		early := []string{"SIZE b.bin", "EPSV", "RETR b.bin", "EPSV", "RETR c.txt"}
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
		if inlineTimes(c, "ftp://"+s.Addr()+"/") {
			t.Errorf("%q: times said to go with transfers", greeting)
		}
	}
}

// inlineTimes asks the Client's FTP Fetcher whether transfers from u's
// server ask their times with their own commands.
func inlineTimes(c *traced, u string) bool {
	return c.FTP.InlineTimes(&protocols.Request{URL: url.MustParse(u)})
}

// TestInlineTimes: plain FTP asks each file's time with its transfer;
// implicit or explicit TLS and NoPipelining do not.
func TestInlineTimes(t *testing.T) {
	c := newTraced()
	if !inlineTimes(c, "ftp://127.0.0.1:21/") || inlineTimes(c, "ftps://127.0.0.1:990/") {
		t.Error("ftp: inline; ftps: not")
	}
	c.FTP.ExplicitTLS = true
	if inlineTimes(c, "ftp://127.0.0.1:21/") {
		t.Error("explicit TLS: inline")
	}
	c = newTraced()
	c.FTP.NoPipelining = true
	if inlineTimes(c, "ftp://127.0.0.1:21/") {
		t.Error("NoPipelining: inline")
	}
}

// TestEarlyRead: on a connection where EPSV has worked, a binary file's
// data is read before its 150 comes, and its 226 is read with the next
// command's reply. A RETR refused after its SIZE was answered (the file
// went in between), or a SIZE refused, is the file's not-found error,
// whatever was read, and the connection serves the next file, one login
// in all. A server that sends every byte and then refuses (426) is
// taken at its bytes: the next file comes on the same connection.
func TestEarlyRead(t *testing.T) {
	files := map[string]string{"a.bin": "aaaa", "b.bin": "bbbb", "gone.bin": "gggg", "late.bin": "llll", "c.bin": "cccc"}
	s := scriptServer(t, files, func(c *ftpscript.Conn, verb, arg string) bool {
		switch {
		case verb == "RETR" && arg == "gone.bin":
			c.Reply("550 Failed to open file.")
			return true
		case verb == "RETR" && arg == "late.bin":
			transfer(c, "150 Opening BINARY mode data connection for late.bin (4 bytes).", func(c *ftpscript.Conn, d net.Conn) {
				d.Write([]byte("llll"))
				d.Close()
				c.Reply("426 Failure writing network stream.")
			})
			return true
		}
		return false
	})
	c := newTraced()
	base := "ftp://" + s.Addr() + "/"
	for _, n := range []string{"a.bin", "b.bin"} {
		if body, _ := c.get(t, base+n); body != files[n] {
			t.Errorf("%s: %q", n, body)
		}
	}
	for _, n := range []string{"gone.bin", "missing.bin"} {
		if err := fetchErr(c, base+n); !errors.Is(err, fetch.ErrNotFound) {
			t.Errorf("%s: %v, want not found", n, err)
		}
	}
	for _, n := range []string{"late.bin", "c.bin"} {
		if body, _ := c.get(t, base+n); body != files[n] {
			t.Errorf("%s: %q", n, body)
		}
	}
	if n := logins(s.Commands()); n != 1 {
		t.Errorf("%d logins, want the one connection throughout: %q\n%s", n, s.Commands(), c.all.String())
	}
	if !contains(s.Early(), "RETR b.bin") || !contains(s.Early(), "RETR c.bin") {
		t.Errorf("sent ahead %q: want the RETRs with their EPSVs", s.Early())
	}
}

// BenchmarkRoundTrips fetches binary files one after another on one
// control connection that a relay delays by a 50 ms round trip (the data
// connections go straight to the server), each with its size and time
// known as a mirror knows them from the listing: round-trips/file is the
// time a file takes on the kept connection over that round trip, the
// round trips on its critical path. "text" fetches .txt files (TYPE A)
// as deref -i does, their sizes and times not known.
func BenchmarkRoundTrips(b *testing.B) {
	const rtt = 50 * time.Millisecond
	files := map[string]string{}
	for i := range 11 {
		files[fmt.Sprintf("f%02d.bin", i)] = strings.Repeat("x", 100+i)
		files[fmt.Sprintf("f%02d.txt", i)] = strings.Repeat("x", 100+i)
	}
	for _, v := range []struct {
		name string
		off  bool
		ext  string
	}{{"pipelined", false, "bin"}, {"NoPipelining", true, "bin"}, {"text", false, "txt"}} {
		off := v.off
		b.Run(v.name, func(b *testing.B) {
			s := &ftpscript.Server{Files: files}
			if err := s.Start(); err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			relay, err := testserver.Relay(s.Addr(), rtt)
			if err != nil {
				b.Fatal(err)
			}
			defer relay.Close()
			var per time.Duration
			for range b.N {
				c := newTraced()
				c.FTP.NoPipelining = off
				base := "ftp://" + relay.Addr().String() + "/"
				readAll(b, c, base+"f00."+v.ext, "") // the login, and EPSV proven
				begin := time.Now()
				for i := 1; i < 11; i++ {
					name := fmt.Sprintf("f%02d.%s", i, v.ext)
					hint := files[name]
					if v.ext == "txt" {
						hint = "" // neither size nor time known beforehand
					}
					if got := readAll(b, c, base+name, hint); got != files[name] {
						b.Fatalf("%s: %d bytes", name, len(got))
					}
				}
				per += time.Since(begin) / 10
				c.FTP.CloseIdleConnections()
			}
			b.ReportMetric(float64(per)/float64(b.N)/float64(rtt), "round-trips/file")
		})
	}
}

// readAll reads the file at u whole; with want, its size and a time are
// given as a mirror's listing gives them, so that only the transfer is
// asked for.
func readAll(b *testing.B, c *traced, u, want string) string {
	pu, err := url.Parse(u)
	if err != nil {
		b.Fatal(err)
	}
	o := fetch.FetchOptions{}
	if want != "" {
		o.SizeHint, o.ModTimeHint = int64(len(want)), time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	}
	resp, err := c.FetchWith(context.Background(), pu, o)
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	return string(body)
}

// TestRefusedRetrTimeNotKept: the time a refused RETR's MDTM brought
// (sent with its EPSV) dates no later file: a file whose own MDTM is
// refused is undated, on the same connection, text or binary.
func TestRefusedRetrTimeNotKept(t *testing.T) {
	for _, ext := range []string{"txt", "bin"} {
		files := map[string]string{"a." + ext: "aaa", "gone." + ext: "ggg", "b." + ext: "bbb"}
		s := scriptServer(t, files, func(c *ftpscript.Conn, verb, arg string) bool {
			switch {
			case verb == "RETR" && arg == "gone."+ext:
				c.Reply("550 Failed to open file.")
				return true
			case verb == "MDTM" && arg == "b."+ext:
				c.Reply("550 Could not get file modification time.")
				return true
			}
			return false
		})
		c := newTraced()
		base := "ftp://" + s.Addr() + "/"
		c.get(t, base+"a."+ext) // EPSV proven: the next MDTM goes with EPSV and RETR
		if err := fetchErr(c, base+"gone."+ext); !errors.Is(err, fetch.ErrNotFound) {
			t.Fatalf("gone.%s: %v, want not found", ext, err)
		}
		// A condition sends b's MDTM on its own; it is refused.
		resp, err := c.FetchWith(t.Context(), url.MustParse(base+"b."+ext), fetch.FetchOptions{IfModifiedSince: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatalf("b.%s: %v", ext, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if !resp.ModTime.IsZero() {
			t.Errorf("b.%s dated %v, the time of the refused gone.%s", ext, resp.ModTime, ext)
		}
		if n := logins(s.Commands()); n != 1 {
			t.Errorf("%s: %d logins, want one connection throughout", ext, n)
		}
	}
}

// TestPipelinedTimeRefused: an MDTM sent with a transfer's EPSV and RETR
// and refused leaves the file undated and the conversation in step: the
// next file comes on the same connection, dated.
func TestPipelinedTimeRefused(t *testing.T) {
	files := map[string]string{"a.bin": "aaa", "b.bin": "bbb", "c.bin": "ccc"}
	s := scriptServer(t, files, func(c *ftpscript.Conn, verb, arg string) bool {
		if verb == "MDTM" && arg == "b.bin" {
			c.Reply("550 Could not get file modification time.")
			return true
		}
		return false
	})
	c := newTraced()
	mod := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, n := range []string{"a.bin", "b.bin", "c.bin"} {
		body, resp := c.get(t, "ftp://"+s.Addr()+"/"+n)
		if body != files[n] {
			t.Errorf("%s: %q", n, body)
		}
		if want := map[bool]time.Time{true: {}, false: mod}[n == "b.bin"]; !resp.ModTime.Equal(want) {
			t.Errorf("%s dated %v, want %v", n, resp.ModTime, want)
		}
	}
	if got := s.Early(); !slices.Contains(got, "SIZE c.bin") {
		t.Errorf("c.bin's MDTM did not go with its SIZE, EPSV and RETR: early %q", got)
	}
	if n := logins(s.Commands()); n != 1 {
		t.Errorf("%d logins", n)
	}
}

// TestPipelineRefusedOutOfTurn: a server that refuses a RETR sent with
// its EPSV (503, bad sequence) is sent every later command in turn, on
// this connection and the next ones. A text file (not read early) comes
// at once, sent again; a binary one read early ends in a temporary error
// (its body was under way), and comes when asked again.
func TestPipelineRefusedOutOfTurn(t *testing.T) {
	files := map[string]string{"a.bin": "aaa", "b.txt": "b\r\n", "c.bin": "ccc", "d.bin": "ddd"}
	refuse := func(delay time.Duration) ftpscript.Handler {
		return func(c *ftpscript.Conn, verb, arg string) bool {
			if verb != "RETR" || !c.Ahead {
				return false
			}
			time.Sleep(delay)
			c.Reply("503 Bad sequence of commands.")
			return true
		}
	}
	s := scriptServer(t, files, refuse(0))
	c := newTraced()
	for _, n := range []string{"a.bin", "b.txt", "c.bin"} {
		if body, _ := c.get(t, "ftp://"+s.Addr()+"/"+n); body != strings.ReplaceAll(files[n], "\r", "") {
			t.Errorf("%s: %q", n, body)
		}
	}
	if early := s.Early(); !slices.Equal(early, []string{"EPSV", "RETR b.txt"}) {
		t.Errorf("sent ahead of a reply: %q, want only b.txt's EPSV (after its MDTM) and the refused RETR", early)
	}
	if inlineTimes(c, "ftp://"+s.Addr()+"/") {
		t.Error("a server that refused a pipelined RETR: times said to go with transfers")
	}
	if !strings.Contains(c.all.String(), "one command at a time from now on") {
		t.Errorf("the fallback is not in the trace:\n%s", c.all.String())
	}

	// Read early: the 503 comes after the data connection is made.
	s = scriptServer(t, files, refuse(50*time.Millisecond))
	c = newTraced()
	c.get(t, "ftp://"+s.Addr()+"/a.bin")
	resp, err := c.Get(t.Context(), "ftp://"+s.Addr()+"/c.bin")
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if !fetch.Temporary(err) || !strings.Contains(err.Error(), "503") {
		t.Errorf("c.bin refused out of turn: %v, want a temporary error naming the 503", err)
	}
	for _, n := range []string{"c.bin", "d.bin"} {
		if body, _ := c.get(t, "ftp://"+s.Addr()+"/"+n); body != files[n] {
			t.Errorf("%s again: %q", n, body)
		}
	}
	if early := s.Early(); len(early) == 0 || !slices.Contains(early, "RETR c.bin") || slices.Contains(early, "RETR d.bin") {
		t.Errorf("sent ahead of a reply: %q, want c.bin's first RETR and no later one", early)
	}
}

// fetchErr is the error of fetching u whole. A binary file of known size
// read early may come back before the refusal that takes its 150's
// place does, and then the refusal is the body's error.
func fetchErr(c *traced, u string) error {
	resp, err := c.Get(context.Background(), u)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	return err
}
