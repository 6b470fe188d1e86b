package main

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver/ftpd"
	"github.com/urlderef/deref/internal/testserver/gopherd"
)

// readmeCommands are the deref commands of the sh blocks of a README, as
// argument lists (the program's name left out), in order, with the file
// standard output is sent to (after ">"), if any.
func readmeCommands(t *testing.T, readme string) [][]string {
	var out [][]string
	in := false
	for _, l := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(l, "```"):
			in = !in && strings.TrimPrefix(l, "```") == "sh"
		case in && strings.HasPrefix(l, "deref "):
			words, err := shellWords(l)
			if err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			out = append(out, words[1:])
		}
	}
	return out
}

// shellWords splits a command line as sh does for the README's commands:
// words apart by spaces, quotes taken off, a word starting with # a
// comment to the end.
func shellWords(l string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
		case c == '#' && !inWord:
			return words, nil
		case c == '\'' || c == '"':
			j := strings.IndexByte(l[i+1:], c)
			if j < 0 {
				return nil, io.ErrUnexpectedEOF
			}
			w.WriteString(l[i+1 : i+1+j])
			i += j + 1
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// TestREADMECommands runs every deref command of the README, in order and
// in one folder (a crawl's archive is what the replay serves), against
// local servers standing in for the hosts it names: each exits 0; deref
// serve, given a free port, answers its front page and ends on an
// interrupt.
func TestREADMECommands(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("ends deref serve with an interrupt signal")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(t, string(readme))
	if len(cmds) < 12 {
		t.Fatalf("only %d commands in the README", len(cmds))
	}
	bin := buildDeref(t)

	write := func(root string, files map[string]string) {
		for name, content := range files {
			p := filepath.Join(root, filepath.FromSlash(name))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	ftpRoot, gopherRoot, webRoot := t.TempDir(), t.TempDir(), t.TempDir()
	write(ftpRoot, map[string]string{"pub/README": "read me\n", "pub/sub/notes.txt": "notes\n"})
	write(gopherRoot, map[string]string{"about.txt": "about this hole\n", "docs/one.txt": "one\n"})
	write(webRoot, map[string]string{"index.html": `<a href="a.txt">a</a>`, "a.txt": "a\n"})
	fs, err := ftpd.Start(ftpRoot)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	gs := &gopherd.Server{Root: gopherRoot}
	if err := gs.Start(); err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	web := httptest.NewServer(http.FileServer(http.Dir(webRoot)))
	defer web.Close()
	hosts := strings.NewReplacer("://www.example.org", "://"+strings.TrimPrefix(web.URL, "http://"),
		"://ftp.example.org", "://"+fs.Addr(), "://gopher.example.org", "://"+gs.Addr())

	work, home := t.TempDir(), t.TempDir()
	env := append(os.Environ(), "NETRC="+filepath.Join(home, "none"), "XDG_CONFIG_HOME="+home, "HOME="+home)
	for _, args := range cmds {
		line := "deref " + strings.Join(args, " ")
		var stdout string
		if n := len(args); n > 2 && args[n-2] == ">" {
			stdout, args = filepath.Join(work, args[n-1]), args[:n-2]
		}
		for i := range args {
			args[i] = hosts.Replace(args[i])
		}
		if args[0] == "serve" {
			serveOnce(t, bin, work, env, line, args)
			continue
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = work, env
		var errb strings.Builder
		cmd.Stderr = &errb
		if stdout != "" {
			f, err := os.Create(stdout)
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdout = f
			defer f.Close()
		}
		if err := cmd.Run(); err != nil {
			t.Errorf("%s: %v\n%s", line, err, errb.String())
		}
	}
	for _, name := range []string{"README", "copy.txt", "pub/sub/notes.txt", "hole.warc.gz", "hole.cdxj", "one.warc.gz"} {
		if _, err := os.Stat(filepath.Join(work, name)); err != nil {
			t.Errorf("the README's commands left no %s: %v", name, err)
		}
	}
}

// serveOnce runs a deref serve line of the README on a free port: its
// front page answers 200, and an interrupt ends it with exit code 0.
func serveOnce(t *testing.T, bin, dir string, env []string, line string, args []string) {
	t.Helper()
	cmd, base, errb := startServe(t, bin, dir, env, append(args, "--listen", "127.0.0.1:0")...)
	if base == "" {
		t.Errorf("%s: no address on its first line\n%s", line, errb.String())
		return
	}
	resp, err := http.Get(base)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("%s: its front page: %d", line, resp.StatusCode)
	}
	if err := interrupt(t, cmd); err != nil {
		t.Errorf("%s: exit: %v\n%s", line, err, errb.String())
	}
}

// startServe starts bin with args (a deref serve on a free port) in dir
// with env (nil: this process's), and returns it, the base URL its first
// line names ("" if none), and its standard error; the test's end kills it.
func startServe(t *testing.T, bin, dir string, env []string, args ...string) (*exec.Cmd, string, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	stdout, _ := cmd.StdoutPipe()
	errb := &syncBuffer{}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	first, _ := bufio.NewReader(stdout).ReadString('\n')
	base, _ := strings.CutPrefix(strings.TrimSpace(first), "deref serve: ")
	return cmd, base, errb
}

// interrupt sends cmd an interrupt and returns how it exited; a command
// still running 10 s later is killed and fails the test.
func interrupt(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%s did not stop on an interrupt", strings.Join(cmd.Args, " "))
		return nil
	}
}
