package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/internal/testserver/ftpd"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
)

// TestMirrorPlanPassword: --plan prints an FTP URL with its user and
// without its password, which a job then finds in the netrc file.
func TestMirrorPlanPassword(t *testing.T) {
	s := startFTPD(t, "f.bin")
	dst := filepath.Join(t.TempDir(), "m")
	r := runDeref(t, "", "mirror", "--plan", "ftp://alice:wonder@"+s.Addr()+"/", dst)
	u, target, _ := strings.Cut(strings.TrimSpace(r.stdout), "\t")
	if r.code != 0 || !strings.HasPrefix(u, "ftp://alice@"+s.Addr()+"/f.bin") || target != filepath.Join(dst, "f.bin") {
		t.Fatalf("--plan: %d %q %q", r.code, r.stdout, r.stderr)
	}
	// The job, against a server that records what it is sent.
	js := &ftpscript.Server{Files: map[string]string{"f.bin": "x"}}
	start(t, js.Start, js.Close)
	netrc := filepath.Join(t.TempDir(), "netrc")
	os.WriteFile(netrc, []byte("machine 127.0.0.1 login alice password wonder\n"), 0o600)
	job := strings.Replace(u, s.Addr(), js.Addr(), 1)
	if r := runDeref(t, "", "-s", "--netrc-file", netrc, "--create-dirs", "-o", target, job); r.code != 0 || !strings.Contains(strings.Join(js.Commands(), "|"), "USER alice|PASS wonder") {
		t.Errorf("job %s: %d %q, sent %q", job, r.code, r.stderr, js.Commands())
	}
}

func TestMirrorCommand(t *testing.T) {
	src := t.TempDir()
	for name, content := range map[string]string{"a.txt": "a", "d/b.txt": "bb", "d/e/c.bin": "ccc"} {
		p := filepath.Join(src, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	os.Symlink("/etc/passwd", filepath.Join(src, "pw"))
	u := "file://" + filepath.ToSlash(src) + "/"
	dst := filepath.Join(t.TempDir(), "m")

	r := runDeref(t, "", "mirror", "--plan", u, dst)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	// The lines come as the walk decides (folders are listed in
	// parallel), in no set order.
	if r.code != 0 || len(lines) != 3 || !slices.Contains(lines, u+"a.txt\t"+filepath.Join(dst, "a.txt")) ||
		!slices.Contains(lines, u+"d/e/c.bin\t"+filepath.Join(dst, "d", "e", "c.bin")) {
		t.Errorf("--plan: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(dst); err == nil {
		t.Error("--plan created the destination")
	}
	// Each plan line is a job of its own.
	for _, l := range lines {
		u, target, _ := strings.Cut(l, "\t")
		if r := runDeref(t, "", "-s", "--create-dirs", "-o", target, u); r.code != 0 {
			t.Errorf("plan job %q: %d %q", l, r.code, r.stderr)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dst, "d", "e", "c.bin")); err != nil || string(b) != "ccc" {
		t.Errorf("plan jobs wrote %q, %v", b, err)
	}
	os.RemoveAll(dst)

	r = runDeref(t, "", "mirror", "--dry-run", u, dst)
	if r.code != 0 || !strings.Contains(r.stdout, "new\td/e/c.bin\n") || !strings.Contains(r.stdout, "refuse\tpw\n") || !strings.Contains(r.stderr, "dry run") {
		t.Errorf("--dry-run: %d %q %q", r.code, r.stdout, r.stderr)
	}

	r = runDeref(t, "", "mirror", u, dst)
	if r.code != 0 || !strings.Contains(r.stderr, "mirror: 3 new, 0 updated, 0 unchanged, 0 deleted, 1 skipped, 0 failed") || !strings.Contains(r.stderr, `skipped pw: symbolic link to "/etc/passwd"`) {
		t.Errorf("mirror: %d %q", r.code, r.stderr)
	}
	if strings.ContainsAny(r.stderr, "\r\x1b") || strings.Contains(r.stderr, "total ") {
		t.Errorf("progress drawn where standard error is no terminal: %q", r.stderr)
	}

	os.Remove(filepath.Join(src, "a.txt"))
	r = runDeref(t, "", "mirror", "--json", "--only-newer", "--delete", u, dst)
	var rep mirror.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 {
		t.Fatalf("--json: %d %v %q", r.code, err, r.stdout)
	}
	if rep.Deleted != 1 || rep.Unchanged != 2 || rep.Items[0].Path != "a.txt" || rep.Items[0].Action != mirror.ActionDelete {
		t.Errorf("--json report: %+v", rep)
	}
	if !strings.Contains(r.stdout, `"action": "delete"`) {
		t.Errorf("actions are not named in JSON: %s", r.stdout)
	}

	for _, args := range [][]string{
		{"mirror", u},
		{"mirror", "--shard", "3/3", u, dst},
		{"mirror", "--limit-rate", "fast", u, dst},
	} {
		if r := runDeref(t, "", args...); r.code != 1 || r.stderr == "" {
			t.Errorf("%q: %d %q", args, r.code, r.stderr)
		}
	}
	if r := runDeref(t, "", "mirror", "file:///nonexistent/folder/", dst); r.code != 4 {
		t.Errorf("missing source: %d %q", r.code, r.stderr)
	}
	if r := runDeref(t, "", "mirror", "ftp://h/a%00b/", dst); r.code != 2 || !strings.Contains(r.stderr, "NUL") {
		t.Errorf("bad URL: %d %q", r.code, r.stderr)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"100": 100, "2k": 2048, "1.5M": 1.5 * (1 << 20), "1g": 1 << 30, "0": 0, "3T": 3 << 40} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "k", "-1", "x", "1.5Q", "99999999T"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted", in)
		}
	}
}

func TestSummarySaysInterrupted(t *testing.T) {
	r := &mirror.Report{New: 2, Checked: 3, DryRun: true}
	if s := summary(r); !strings.HasPrefix(s, "mirror: 2 new") || !strings.Contains(s, "3 to check with the server") {
		t.Errorf("summary %q", s)
	}
	r.Interrupted = true
	if s := summary(r); !strings.HasPrefix(s, "mirror interrupted: ") {
		t.Errorf("summary of an interrupted run: %q", s)
	}
}

// TestMirrorVerboseLists: deref mirror -v with no terminal lists each file
// added, updated and deleted, a line each, and nothing unchanged, nor the
// protocol conversation (that is --debug's).
func TestMirrorVerboseLists(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("a\n"), 0o644)
	os.WriteFile(filepath.Join(src, "b.txt"), []byte("b\n"), 0o644)
	s := serveFTPRoot(t, src)
	dst := t.TempDir()
	if r := runDeref(t, "", "mirror", "-v", s, dst); r.code != 0 || !strings.Contains(r.stderr, "new\ta.txt\n") || !strings.Contains(r.stderr, "new\tb.txt\n") {
		t.Fatalf("first run: exit %d, %q", r.code, r.stderr)
	}
	os.Remove(filepath.Join(src, "b.txt"))
	os.WriteFile(filepath.Join(src, "c.txt"), []byte("c\n"), 0o644)
	r := runDeref(t, "", "mirror", "-v", "--delete", s, dst)
	if r.code != 0 || !strings.Contains(r.stderr, "new\tc.txt\n") || !strings.Contains(r.stderr, "delete\tb.txt\n") {
		t.Errorf("second run: exit %d, %q", r.code, r.stderr)
	}
	for _, not := range []string{"unchanged\ta.txt", "RETR", "220 "} {
		if strings.Contains(r.stderr, not) {
			t.Errorf("-v wrote %q: %q", not, r.stderr)
		}
	}
	if r := runDeref(t, "", "mirror", "--debug", s, dst); !strings.Contains(r.stderr, "unchanged\ta.txt") || !strings.Contains(r.stderr, "USER anonymous") {
		t.Errorf("--debug: %q", r.stderr)
	}
}

// serveFTPRoot serves root over FTP (ftpserverlib) and gives its URL.
func serveFTPRoot(t *testing.T, root string) string {
	t.Helper()
	s, err := ftpd.Start(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.URL()
}
