//go:build interop

package interop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tmux runs a tmux command on the suite's own server socket.
func tmux(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", "deref-interop"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// waitPane waits until the pane shows want.
func waitPane(t *testing.T, want string) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		screen := tmux(t, "capture-pane", "-p", "-t", "deref")
		if strings.Contains(screen, want) {
			return screen
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %q; the pane shows:\n%s", want, screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestTelnetTerminal logs in to inetutils telnetd with deref in a tmux
// terminal: the server sees the terminal's type and size, what is typed
// runs, ^] closes the session and the terminal is left as it was.
func TestTelnetTerminal(t *testing.T) {
	target := env(t, "DEREF_INTEROP_TELNET")
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "deref")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/deref").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	after := filepath.Join(dir, "stty-after")
	u := strings.Replace(target, "telnet://", "telnet://alice:secret@", 1) + "/"
	script := "TERM=vt220 " + bin + " --login " + u + "; stty -a > " + after + "; echo SESSION-OVER; sleep 30"
	exec.Command("tmux", "-L", "deref-interop", "kill-server").Run()
	tmux(t, "new-session", "-d", "-s", "deref", "-x", "120", "-y", "40", "sh", "-c", script)
	defer exec.Command("tmux", "-L", "deref-interop", "kill-server").Run()

	waitPane(t, "Password:")
	waitPane(t, "\n$") // the shell's prompt (the pane drops trailing spaces)
	tmux(t, "send-keys", "-t", "deref", "echo typed-$((6*7)) $TERM; stty size", "Enter")
	waitPane(t, "typed-42 vt220")
	waitPane(t, "40 120")
	tmux(t, "send-keys", "-t", "deref", "C-]")
	screen := waitPane(t, "SESSION-OVER")
	if !strings.Contains(screen, "session closed") {
		t.Errorf("no closing note:\n%s", screen)
	}
	st, err := os.ReadFile(after)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{" icanon", " echo ", " icrnl", " opost"} {
		if !strings.Contains(" "+strings.ReplaceAll(string(st), "\n", " ")+" ", mode) {
			t.Errorf("terminal not restored: %q missing from\n%s", mode, st)
		}
	}
}
