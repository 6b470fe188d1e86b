package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/internal/testserver/telnetd"
)

// Without a terminal, standard input drives the session and its output
// goes to standard output; --login answers the prompts.
func TestTelnetScripted(t *testing.T) {
	s := &telnetd.Server{User: "alice", Pass: "secret"}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := runDeref(t, "echo scripted\nexit\n", "--login", "telnet://alice:secret@"+s.Addr()+"/")
	if r.code != 0 || !strings.Contains(r.stdout, "Welcome, alice.") || !strings.Contains(r.stdout, "\r\nscripted\r\n") || !strings.HasSuffix(r.stdout, "logout\r\n") {
		t.Errorf("%d %q %q", r.code, r.stdout, r.stderr)
	}
	// Without --login the user is a hint, and the dialogue is the script's.
	r = runDeref(t, "alice\nsecret\necho by hand\nexit\n", "telnet://alice@"+s.Addr()+"/")
	if r.code != 0 || !strings.Contains(r.stderr, "suggests logging in as alice") || !strings.Contains(r.stdout, "\r\nby hand\r\n") {
		t.Errorf("%d %q %q", r.code, r.stdout, r.stderr)
	}
}

func TestExternalSessions(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	r := runDeref(t, "", "tn3270://mainframe.example/")
	if r.code == 0 || !strings.Contains(r.stderr, "c3270") {
		t.Errorf("%d %q", r.code, r.stderr)
	}
	r = runDeref(t, "", "--rlogin", "/bin/echo", "rlogin://bob@h.example/")
	if r.code != 0 || r.stdout != "-l bob h.example\n" {
		t.Errorf("%d %q %q", r.code, r.stdout, r.stderr)
	}
}

// A telnet: URL asked to be saved, or crawled, designates no object: a
// clear error and no file, not a crash.
func TestTelnetNoObject(t *testing.T) {
	s := &telnetd.Server{User: "alice", Pass: "secret"}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := filepath.Join(t.TempDir(), "session.out")
	for _, args := range [][]string{{"-o", out, "telnet://" + s.Addr() + "/"}, {"crawl", "telnet://" + s.Addr() + "/"}} {
		r := runDeref(t, "", args...)
		if r.code == 0 || !strings.Contains(r.stderr, "designates an interactive session, not an object") {
			t.Errorf("%q: %d %q", args, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s: %v", out, err)
	}
}
