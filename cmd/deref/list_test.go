package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver/ftpscript"
)

// fetchListWith starts s and has deref -i -O --parallel 2 and flags fetch
// its paths into a new folder, which it returns; any exit but 0 fails the
// test.
func fetchListWith(t *testing.T, s *ftpscript.Server, flags []string, paths ...string) string {
	t.Helper()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	var list strings.Builder
	for _, p := range paths {
		list.WriteString("ftp://" + s.Addr() + p + "\n")
	}
	dir := t.TempDir()
	args := append([]string{"-s", "--no-netrc", "-O", "--output-dir", dir, "--parallel", "2", "-i", "-"}, flags...)
	r := runDeref(t, list.String(), args...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	return dir
}

// TestListSharesFolderTimes: where transfers cannot ask their times with
// their own commands (--ftp-sync here, TLS alike), URLs of -i that share an
// FTP folder get their times from one pipelined MDTM exchange before any
// transfer, and no transfer asks again; so too with -N, whose times
// decide the transfers. The files carry the server's time.
func TestListSharesFolderTimes(t *testing.T) {
	for _, flag := range []string{"--ftp-sync", "-N"} {
		listSharesFolderTimes(t, flag)
	}
}

func listSharesFolderTimes(t *testing.T, flag string) {
	s := &ftpscript.Server{Files: map[string]string{"pub/a.bin": "aa", "pub/b.bin": "bbb", "pub/c.bin": "c", "top.bin": "t"}}
	dir := fetchListWith(t, s, []string{flag}, "/pub/a.bin", "/pub/b.bin;type=i", "/pub/c.bin", "/top.bin")
	cmds := s.Commands()
	first := slices.IndexFunc(cmds, func(c string) bool { return strings.HasPrefix(c, "RETR ") })
	var mdtm []string
	for i, c := range cmds {
		if strings.HasPrefix(c, "MDTM ") {
			mdtm = append(mdtm, c)
			if i > first && c != "MDTM top.bin" {
				t.Errorf("%s: %q after the first RETR: %q", flag, c, cmds)
			}
		}
	}
	// top.bin is alone in its folder: its transfer asks for its own time.
	slices.Sort(mdtm)
	if want := []string{"MDTM a.bin", "MDTM b.bin", "MDTM c.bin", "MDTM top.bin"}; !slices.Equal(mdtm, want) {
		t.Errorf("%s: MDTM sent %q, want %q", flag, mdtm, want)
	}
	want := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	for name, content := range map[string]string{"a.bin": "aa", "b.bin": "bbb", "c.bin": "c", "top.bin": "t"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Error(err)
			continue
		}
		b, _ := os.ReadFile(filepath.Join(dir, name))
		if string(b) != content || !st.ModTime().Equal(want) {
			t.Errorf("%s: %s: %q at %v", flag, name, b, st.ModTime())
		}
	}
}

// TestListTimesInline: where transfers can ask their times with their own
// commands, no folder's times are asked beforehand: each file's MDTM goes
// with its SIZE, EPSV and RETR once its connection is in use, and the
// files carry the server's time.
func TestListTimesInline(t *testing.T) {
	files := map[string]string{"pub/a.bin": "aa", "pub/b.bin": "bbb", "pub/c.bin": "c", "pub/d.bin": "dd"}
	s := &ftpscript.Server{Files: files}
	s.Start()
	defer s.Close()
	dir := t.TempDir()
	var list strings.Builder
	for _, n := range []string{"a", "b", "c", "d"} {
		list.WriteString("ftp://" + s.Addr() + "/pub/" + n + ".bin\n")
	}
	if r := runDeref(t, list.String(), "-s", "--no-netrc", "-O", "--output-dir", dir, "-i", "-"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	cmds := s.Commands()
	if first := slices.IndexFunc(cmds, func(c string) bool { return strings.HasPrefix(c, "RETR ") }); first < 0 || slices.Contains(cmds[:first], "MDTM b.bin") {
		t.Errorf("times asked before the first transfer: %q", cmds)
	}
	// The first file's connection proves EPSV; the others go in one write.
	if early := s.Early(); !slices.Contains(early, "SIZE d.bin") || !slices.Contains(early, "RETR d.bin") {
		t.Errorf("d.bin's MDTM did not go with its SIZE, EPSV and RETR: early %q", early)
	}
	want := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	for name, content := range files {
		p := filepath.Join(dir, filepath.Base(name))
		st, err := os.Stat(p)
		b, _ := os.ReadFile(p)
		if err != nil || string(b) != content || !st.ModTime().Equal(want) {
			t.Errorf("%s: %q at %v (%v)", name, b, st, err)
		}
	}
}

// TestListFolderTimesAtOnce: with --parallel 2 (and --ftp-sync, for the
// times to be asked beforehand), the times of two folders are asked at
// once, on two connections: the server holds back its MDTM
// replies until both connections have asked (for at most 2 s), and
// records whether they did.
func TestListFolderTimesAtOnce(t *testing.T) {
	var (
		mu       sync.Mutex
		seen     = map[*ftpscript.Conn]bool{}
		both     = make(chan struct{})
		deadline time.Time
	)
	s := &ftpscript.Server{
		Files: map[string]string{"pub/a.bin": "a", "pub/b.bin": "b", "doc/c.bin": "c", "doc/d.bin": "d"},
		Handle: func(c *ftpscript.Conn, verb, arg string) bool {
			if verb != "MDTM" {
				return false
			}
			mu.Lock()
			if deadline.IsZero() {
				deadline = time.Now().Add(2 * time.Second)
			}
			if !seen[c] {
				seen[c] = true
				if len(seen) == 2 {
					close(both)
				}
			}
			wait := time.Until(deadline)
			mu.Unlock()
			select {
			case <-both:
			case <-time.After(wait):
			}
			return false
		},
	}
	dir := fetchListWith(t, s, []string{"--ftp-sync"}, "/pub/a.bin", "/pub/b.bin", "/doc/c.bin", "/doc/d.bin")
	mu.Lock()
	n := len(seen)
	mu.Unlock()
	if n < 2 {
		t.Errorf("the folders' times were asked on %d connection, want 2 at once: %q", n, s.Commands())
	}
	for _, name := range []string{"a.bin", "b.bin", "c.bin", "d.bin"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != name[:1] {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
}

// TestFTPSync: by default the second file of a list goes out as SIZE and
// RETR with its EPSV on the kept connection; --ftp-sync sends every
// command after the last reply.
func TestFTPSync(t *testing.T) {
	for _, sync := range []bool{false, true} {
		s := &ftpscript.Server{Files: map[string]string{"a.bin": "a", "b.bin": "b"}}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		base := "ftp://" + s.Addr()
		args := []string{"-s", "--no-netrc", base + "/a.bin", base + "/b.bin"}
		if sync {
			args = append([]string{"--ftp-sync"}, args...)
		}
		r := runDeref(t, "", args...)
		if r.code != 0 || r.stdout != "ab" {
			t.Fatalf("--ftp-sync %v: exit %d, %q: %s", sync, r.code, r.stdout, r.stderr)
		}
		early := s.Early()
		// b.bin's MDTM and SIZE (its size not known: the 150 replies
		// name sizes) go with its EPSV and RETR.
		if sync != (len(early) == 0) || !sync && !slices.Equal(early, []string{"SIZE b.bin", "EPSV", "RETR b.bin"}) {
			t.Errorf("--ftp-sync %v: commands sent ahead of a reply: %q", sync, early)
		}
	}
}
