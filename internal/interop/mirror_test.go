//go:build interop

package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch/mirror"
)

// mirrorSources are the pub folder of the tree as vsftpd, proftpd,
// pygopherd and nginx serve it.
func mirrorSources(t *testing.T) map[string]string {
	ftp := ftpServers(t)
	gopher := gopherServers(t)
	return map[string]string{
		"vsftpd":    ftp["vsftpd"] + "/pub/",
		"proftpd":   ftp["proftpd"] + "/pub/",
		"pygopherd": gopher["pygopherd"] + "/1/pub",
		"nginx":     env(t, "DEREF_INTEROP_HTTP") + "/pub/",
	}
}

// compareTree checks that dir holds exactly the files of want, byte for
// byte; a Gopher text item may have had its CRLF line ends made LF.
func compareTree(t *testing.T, dir, want string, textLF bool) {
	t.Helper()
	got := map[string]bool{}
	filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		got[filepath.ToSlash(rel)] = true
		if !de.Type().IsRegular() {
			t.Errorf("%s is not a regular file", rel)
		}
		return nil
	})
	for _, rel := range treeFiles(t, want) {
		w, _ := os.ReadFile(filepath.Join(want, rel))
		g, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Errorf("missing %s", rel)
			continue
		}
		delete(got, rel)
		if !bytes.Equal(g, w) && !(textLF && bytes.Equal(g, bytes.ReplaceAll(w, []byte("\r\n"), []byte("\n")))) {
			t.Errorf("%s: %d bytes, want %d", rel, len(g), len(w))
		}
	}
	for rel := range got {
		t.Errorf("stray file %s", rel)
	}
}

// TestMirror mirrors the pub folder from each daemon, compares it file by
// file with the tree, and checks that a second --only-newer run transfers
// nothing.
func TestMirror(t *testing.T) {
	tree := filepath.Join(env(t, "DEREF_INTEROP_TREE"), "pub")
	for name, src := range mirrorSources(t) {
		t.Run(name, func(t *testing.T) {
			dst := t.TempDir()
			rep, err := mirror.Run(context.Background(), client(), src, dst, mirror.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Failed != 0 || rep.Refused != 0 || rep.New == 0 {
				t.Errorf("first run: %+v", rep)
			}
			compareTree(t, dst, tree, name == "pygopherd")
			if name != "pygopherd" {
				// The servers' exact times: MLSD (proftpd), MDTM asked for
				// a folder at once (vsftpd), Last-Modified (nginx).
				for _, rel := range treeFiles(t, tree) {
					w, _ := os.Stat(filepath.Join(tree, rel))
					g, err := os.Stat(filepath.Join(dst, rel))
					if err == nil && !g.ModTime().Equal(w.ModTime().Truncate(time.Second)) {
						t.Errorf("%s: time %v, want %v", rel, g.ModTime(), w.ModTime().Truncate(time.Second))
					}
				}
			}
			rep, err = mirror.Run(context.Background(), client(), src, dst, mirror.Options{OnlyNewer: true})
			if err != nil {
				t.Fatal(err)
			}
			if name == "pygopherd" {
				// Gopher+ Mod-Date makes the second run a comparison.
				if rep.New+rep.Updated != 0 || rep.Bytes != 0 {
					t.Errorf("second run transferred: %+v", rep)
				}
			} else if rep.New+rep.Updated != 0 || rep.Bytes != 0 || rep.Unchanged == 0 {
				t.Errorf("second run transferred: %+v", rep)
			}
		})
	}
}

// TestMirrorGophernicus mirrors the pub folder from gophernicus, whose
// selectors escape spaces and other bytes as #NNN (and whose items of such
// a folder sit below its unescaped path), and compares it with the tree:
// the local names are the files' own.
func TestMirrorGophernicus(t *testing.T) {
	tree := filepath.Join(env(t, "DEREF_INTEROP_TREE"), "pub")
	dst := t.TempDir()
	rep, err := mirror.Run(context.Background(), client(), gopherServers(t)["gophernicus"]+"/1/pub/", dst, mirror.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 0 || rep.Refused != 0 {
		t.Errorf("report: %+v", rep)
	}
	compareTree(t, dst, tree, true)
	// A plain menu dates nothing: the rerun fetches each file again, and
	// finds every one the same as its copy.
	again, err := mirror.Run(context.Background(), client(), gopherServers(t)["gophernicus"]+"/1/pub/", dst, mirror.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if again.New+again.Updated != 0 || again.Unchanged != rep.New || again.Failed != 0 {
		t.Errorf("a rerun with nothing changed: %+v (the first run: %d new)", again, rep.New)
	}
}

// TestMirrorKilled kills deref mirror halfway (SIGKILL: no clean-up at
// all), runs it again, and expects the tree complete with no .part file
// left.
func TestMirrorKilled(t *testing.T) {
	tree := filepath.Join(env(t, "DEREF_INTEROP_TREE"), "pub")
	bin := filepath.Join(t.TempDir(), "deref")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/deref").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, name := range []string{"vsftpd", "nginx"} {
		t.Run(name, func(t *testing.T) {
			src := mirrorSources(t)[name]
			dst := t.TempDir()
			cmd := exec.Command(bin, "mirror", "-s", "--no-netrc", "--parallel", "2", "--limit-rate", "1M", src, dst)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// random.bin (3 MiB) takes three seconds at 1 MiB/s: kill in
			// the middle of it.
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				if st, err := os.Stat(filepath.Join(dst, "random.bin.part")); err == nil && st.Size() > 512<<10 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()
			st, err := os.Stat(filepath.Join(dst, "random.bin.part"))
			if err != nil {
				t.Fatalf("no partial random.bin after the kill: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dst, "random.bin")); err == nil {
				t.Fatal("random.bin under its final name after the kill")
			}
			out, err := exec.Command(bin, "mirror", "--no-netrc", "--json", "--only-newer", src, dst).Output()
			if err != nil {
				t.Fatalf("second run: %v", err)
			}
			var rep mirror.Report
			if err := json.Unmarshal(out, &rep); err != nil {
				t.Fatal(err)
			}
			for _, it := range rep.Items {
				if it.Path == "random.bin" && it.Bytes >= 3<<20 {
					t.Errorf("random.bin fetched whole (%d bytes) although %d were there", it.Bytes, st.Size())
				}
			}
			compareTree(t, dst, tree, false)
			filepath.WalkDir(dst, func(p string, de os.DirEntry, err error) error {
				if strings.HasSuffix(p, ".part") {
					t.Errorf("stray %s", p)
				}
				return nil
			})
		})
	}
}

// TestMirrorProgress runs deref mirror in a tmux terminal, slowed down so
// that random.bin takes seconds: the pane shows a bar for the transfer
// under way and a total line, and the summary once it is over.
func TestMirrorProgress(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed")
	}
	src := mirrorSources(t)["nginx"]
	dir := t.TempDir()
	bin := filepath.Join(dir, "deref")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/deref").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	script := bin + " mirror --no-netrc --parallel 2 --limit-rate 768k " + src + " " + filepath.Join(dir, "out") + "; echo MIRROR-OVER; sleep 30"
	exec.Command("tmux", "-L", "deref-interop", "kill-server").Run()
	tmux(t, "new-session", "-d", "-s", "deref", "-x", "120", "-y", "20", "sh", "-c", script)
	defer exec.Command("tmux", "-L", "deref-interop", "kill-server").Run()

	// random.bin (3 MiB) takes four seconds at 768 KiB/s.
	screen := waitPane(t, "random.bin")
	var bar, total string
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "random.bin") {
			bar = l
		}
		if strings.HasPrefix(l, "total ") {
			total = l
		}
	}
	if !strings.Contains(bar, "/ 3.0 MiB") {
		t.Errorf("no bar with a byte count for random.bin: %q", bar)
	}
	if !strings.Contains(total, " files") {
		t.Errorf("no total line: %q\n%s", total, screen)
	}
	screen = waitPane(t, "MIRROR-OVER")
	files := len(treeFiles(t, filepath.Join(env(t, "DEREF_INTEROP_TREE"), "pub")))
	if !strings.Contains(screen, fmt.Sprintf("mirror: %d new, 0 updated, 0 unchanged, 0 deleted, 0 skipped, 0 failed", files)) {
		t.Errorf("no summary:\n%s", screen)
	}
	if strings.Contains(screen, "random.bin") {
		t.Errorf("a finished transfer's bar is still drawn:\n%s", screen)
	}
}

// TestLftpRules: deref mirror takes lftp's mirror filters (-i RX, -x RX,
// -I GLOB, -X GLOB, in order, the last that matches deciding), lftp's
// -c, -e, -P and -r, and its --size-range, --newer-than, --older-than and
// --only-missing: lftp 4.9's mirror and deref's, of vsftpd's pub folder,
// write the same files, byte for byte.
func TestLftpRules(t *testing.T) {
	src := ftpServers(t)["vsftpd"]
	bin := buildDeref(t)
	for _, flags := range [][]string{
		{"-x", `\.bin$`, "-X", "crlf*", "-i", "txt$"},
		{"-i", "txt$"},
		{"-x", "^nested/deeper/", "-x", "bin$"},
		{"-I", "*.txt", "-X", "crlf*", "-i", "^crlf"},
		{"-X", "*.txt", "-I", "with*", "-x", "deeper/$"},
		{"-x", "^nested/", "-i", "^nested/sibling"},
		{"-c", "-e", "-P", "3", "-r"},
		{"--size-range=10-30"},
		{"--size-range=20-", "--older-than=2021-01-01"},
		{"--newer-than=2021-01-01"},
		{"--only-missing"},
	} {
		ours, theirs := t.TempDir(), t.TempDir()
		if flags[0] == "--only-missing" || flags[0] == "--newer-than=2021-01-01" {
			// a file there already, which --only-missing leaves, and
			// one for --newer-than (the tree's files are of 2020) to
			// leave alone too
			for _, d := range []string{ours, theirs} {
				os.WriteFile(filepath.Join(d, "README.txt"), []byte("mine\n"), 0o644)
			}
		}
		runTool(t, bin, append(append([]string{"mirror", "-s", "--no-netrc"}, flags...), src+"/pub/", ours)...)
		quoted := make([]string, len(flags))
		for i, f := range flags {
			quoted[i] = "'" + f + "'"
		}
		runTool(t, "lftp", "-c", "open "+src+"/; mirror "+strings.Join(quoted, " ")+" /pub "+theirs)
		sameFiles(t, fmt.Sprintf("%q", flags), ours, theirs, len(treeFiles(t, theirs)), "")
	}
}
