package telnet_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver/telnetd"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/telnet"
	"github.com/urlderef/deref/url"
)

func open(t *testing.T, f *telnet.Fetcher, s *telnetd.Server) *telnet.Session {
	t.Helper()
	resp, err := f.Fetch(context.Background(), &protocols.Request{URL: url.MustParse("telnet://alice:secret@" + s.Addr() + "/")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Kind != protocols.KindSession {
		t.Fatalf("kind %v", resp.Kind)
	}
	sess := resp.Session.(*telnet.Session)
	t.Cleanup(func() { sess.Close() })
	return sess
}

// readUntil reads the session's output until it ends with want.
func readUntil(t *testing.T, r io.Reader, want string) string {
	t.Helper()
	var b bytes.Buffer
	buf := make([]byte, 1)
	deadline := time.Now().Add(3 * time.Second)
	for !strings.HasSuffix(b.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %q, got %q", want, b.String())
		}
		n, err := r.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			t.Fatalf("waiting for %q: %v (got %q)", want, err, b.String())
		}
	}
	return b.String()
}

// The opening of NOP, DM, DO TTYPE, DO NAWS, WILL ECHO and SB TTYPE SEND
// is answered as a real terminal would, and none of it reaches the output.
func TestNegotiation(t *testing.T) {
	s := &telnetd.Server{User: "alice", Pass: "secret"}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sess := open(t, &telnet.Fetcher{Term: "xterm-256color", Width: 132, Height: 43}, s)
	out := readUntil(t, sess, "login: ")
	if out != "deref's tour telnet server\r\n\r\nlogin: " {
		t.Errorf("output %q", out)
	}
	for _, want := range []string{"WILL 24", "WILL 31", "SB 31 0 132 0 43", "DO 1", "DO 3", "SB 24 0 88 84 69 82 77 45 50 53 54 67 79 76 79 82"} {
		if !s.WaitHeard(want) {
			t.Errorf("the client did not send %q: %q", want, s.Heard())
		}
	}
	if !sess.RemoteEcho() {
		t.Error("WILL ECHO not noticed")
	}
	// A resize is reported.
	if err := sess.SetWindowSize(100, 300); err != nil {
		t.Fatal(err)
	}
	if !s.WaitHeard("SB 31 0 100 1 44") {
		t.Errorf("resize: %q", s.Heard())
	}
}

func TestLoginAndShell(t *testing.T) {
	s := &telnetd.Server{User: "alice", Pass: "secret"}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sess := open(t, &telnet.Fetcher{Term: "vt100"}, s)
	var shown bytes.Buffer
	if err := sess.Login(context.Background(), "alice", "secret", true, &shown); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(shown.String(), "login: alice\r\nPassword:") {
		t.Errorf("shown %q", shown.String())
	}
	readUntil(t, sess, "Welcome, alice.\r\n$ ")
	io.WriteString(sess, "term\n")
	readUntil(t, sess, "term\r\nVT100\r\n$ ")
	io.WriteString(sess, "size\n")
	readUntil(t, sess, "size\r\n80x24\r\n$ ")
	io.WriteString(sess, "echo \xff byte\n") // IAC is doubled on the way out
	readUntil(t, sess, "echo \xff byte\r\n\xff byte\r\n$ ")
	io.WriteString(sess, "exit\n")
	rest, err := io.ReadAll(sess)
	if err != nil || !strings.HasSuffix(string(rest), "logout\r\n") {
		t.Errorf("%q %v", rest, err)
	}
}

func TestLoginRefusedPrompt(t *testing.T) {
	s := &telnetd.Server{User: "alice", Pass: "secret"}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sess := open(t, &telnet.Fetcher{}, s)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	// A prompt that never comes: the context ends the wait.
	sess.Login(ctx, "alice", "", false, io.Discard) // consumes "login:"
	err := sess.Login(ctx, "x", "y", true, io.Discard)
	if err == nil {
		t.Error("a login prompt that never came was accepted")
	}
}

// Commands split across reads, IAC IAC inside data and unknown
// subnegotiations are handled.
func TestFilterSplits(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	sess, err := (&telnet.Fetcher{Term: "dumb"}).Open(client, &protocols.Request{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	replies := make(chan []byte, 1)
	go func() {
		// The server writes byte by byte, then reads the client's answers.
		for _, b := range []byte{'a', 255, 241, 'b', 255, 255, 'c', 255, 250, 99, 1, 2, 255, 240, 'd', 255, 253, 24, 255, 250, 24, 1, 255, 240, '\n'} {
			server.Write([]byte{b})
		}
		buf := make([]byte, 64)
		var got []byte
		for len(got) < 3+10 {
			server.SetReadDeadline(time.Now().Add(2 * time.Second))
			n, err := server.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				break
			}
		}
		replies <- got
	}()
	line, err := bufio.NewReader(sess).ReadString('\n')
	if err != nil || line != "ab\xffcd\n" {
		t.Errorf("%q %v", line, err)
	}
	got := <-replies
	want := []byte{255, 251, 24, 255, 250, 24, 0, 'D', 'U', 'M', 'B', 255, 240}
	if !bytes.Contains(got, want) {
		t.Errorf("answers % x", got)
	}
}
