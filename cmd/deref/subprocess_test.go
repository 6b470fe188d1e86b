package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildDeref builds the command into a temporary folder.
func buildDeref(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "deref")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestSubprocess runs the built command as a user would: the exit code of
// every error class, one line on standard error each, the config file,
// and --write-out.
func TestSubprocess(t *testing.T) {
	bin := buildDeref(t)
	xdg := t.TempDir()
	os.MkdirAll(filepath.Join(xdg, "deref"), 0o755)
	os.WriteFile(filepath.Join(xdg, "deref", "config"), []byte("write-out = \"%{exitcode}\\n\"\n"), 0o644)
	s := server(t)
	file := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(file, nil, 0o644)

	run := func(args ...string) (int, string, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+xdg, "NETRC="+filepath.Join(xdg, "none"))
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		return code, out.String(), errb.String()
	}
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{s.URL + "/ok.txt"}, 0, ""},
		{[]string{"--no-such-flag", s.URL + "/ok.txt"}, 1, "unknown flag"},
		{[]string{"http://h/%zz"}, 2, "malformed escape"},
		{[]string{"x-unknown:thing"}, 3, "unsupported scheme"},
		{[]string{"file://" + filepath.ToSlash(xdg) + "/nope"}, 4, "not found"},
		{[]string{s.URL + "/secret"}, 5, "login refused"},
		{[]string{"http://127.0.0.1:1/"}, 6, "connection refused"},
		{[]string{s.URL + "/short"}, 7, "object ended early"},
		{[]string{"-o", filepath.Join(file, "x"), s.URL + "/ok.txt"}, 8, "write error"},
		{[]string{"--max-time", "0.3", s.URL + "/slow"}, 6, "timed out after 0.3 s (--max-time)"},
	} {
		code, stdout, stderr := run(tt.args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != tt.code || !strings.Contains(stderr, tt.msg) || tt.code > 1 && len(lines) != 1 {
			t.Errorf("deref %q: exit %d, stderr %q; want exit %d and %q", tt.args, code, stderr, tt.code, tt.msg)
		}
		// The config file's --write-out line ends standard output.
		// (after what part of the object came, as curl writes it).
		if tt.code != 1 && !strings.HasSuffix(stdout, strconv.Itoa(tt.code)+"\n") {
			t.Errorf("deref %q: stdout %q, want the --write-out line %d last", tt.args, stdout, tt.code)
		}
	}
	if code, stdout, _ := run("-q", s.URL+"/ok.txt"); code != 0 || stdout != "web object\n" {
		t.Errorf("-q: exit %d, %q", code, stdout)
	}

	if runtime.GOOS == "windows" {
		return
	}
	// Interrupted: exit 130, one line that says so, nothing under the
	// final name.
	out := filepath.Join(t.TempDir(), "slow.bin")
	cmd := exec.Command(bin, "-q", "-o", out, s.URL+"/slow")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.HasSuffix(errb.String(), ": interrupted\n") || strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("SIGINT: exit %d, %q", code, errb.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("an interrupted download sits under its final name: %v", err)
	}
}
