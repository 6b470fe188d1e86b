// Package redisd runs Debian's redis-server (or valkey-server) for tests:
// a real store on a free port of 127.0.0.1, its data in a temporary
// folder, append-only so that a restart keeps what it held.
package redisd

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is a redis-server the test started.
type Server struct {
	// Addr is its address, 127.0.0.1:PORT.
	Addr string
	bin  string
	dir  string
	args []string
	cmd  *exec.Cmd
	t    testing.TB
}

// Binary is the path of redis-server, or valkey-server, or "".
func Binary() string {
	for _, b := range []string{"redis-server", "valkey-server"} {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	return ""
}

// Start starts a store for t, stopped when t ends; extra are more
// configuration lines ("maxmemory 1gb"). Where no redis-server is
// installed the test is skipped, saying so.
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skip("no redis-server or valkey-server on this machine (Debian: apt-get install redis-server): the shared frontier's tests need a real store")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	s := &Server{Addr: addr, bin: bin, dir: t.TempDir(), t: t}
	s.args = append([]string{"--bind", "127.0.0.1", "--port", port, "--dir", s.dir, "--appendonly", "yes", "--appendfsync", "no",
		"--save", "", "--daemonize", "no", "--protected-mode", "yes", "--logfile", filepath.Join(s.dir, "log")}, lines(extra)...)
	s.start()
	t.Cleanup(s.Stop)
	return s
}

// lines turns configuration lines into arguments.
func lines(extra []string) []string {
	var out []string
	for _, l := range extra {
		f := strings.Fields(l)
		if len(f) > 0 {
			out = append(out, "--"+f[0])
			out = append(out, f[1:]...)
		}
	}
	return out
}

func (s *Server) start() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, s.args...)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		if c, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
			fmt.Fprint(c, "PING\r\n")
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if strings.HasPrefix(line, "+PONG") {
				return
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
	s.t.Fatalf("%s did not start on %s: %s", s.bin, s.Addr, log)
}

// Stop stops the store (SIGTERM, as a restart would).
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	s.cmd = nil
}

// Restart starts the stopped store again on its address, with its data.
func (s *Server) Restart() {
	s.t.Helper()
	s.start()
}

// Info is a field of INFO, such as "used_memory".
func (s *Server) Info(field string) int64 {
	s.t.Helper()
	out, err := exec.Command(strings.Replace(s.bin, "-server", "-cli", 1), "-h", "127.0.0.1", "-p", s.port(), "INFO").Output()
	if err != nil {
		s.t.Fatalf("redis-cli INFO: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), field+":"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	s.t.Fatalf("INFO has no %s", field)
	return 0
}

func (s *Server) port() string {
	_, p, _ := net.SplitHostPort(s.Addr)
	return p
}

// URL is the store's redis:// URL with a key prefix.
func (s *Server) URL(prefix string) string {
	return "redis://" + s.Addr + "/0?prefix=" + prefix
}
