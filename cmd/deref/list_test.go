package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver/ftpscript"
)

// TestListSharesFolderTimes: URLs of -i that share an FTP folder get their
// times from one pipelined MDTM exchange before any transfer, and no
// transfer asks again; the files carry the server's time.
func TestListSharesFolderTimes(t *testing.T) {
	s := &ftpscript.Server{Files: map[string]string{"pub/a.bin": "aa", "pub/b.bin": "bbb", "pub/c.bin": "c", "top.bin": "t"}}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := "ftp://" + s.Addr()
	list := strings.Join([]string{base + "/pub/a.bin", base + "/pub/b.bin;type=i", base + "/pub/c.bin", base + "/top.bin"}, "\n") + "\n"
	dir := t.TempDir()
	r := runDeref(t, list, "-s", "--no-netrc", "-O", "--output-dir", dir, "--parallel", "2", "-i", "-")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	cmds := s.Commands()
	first := slices.IndexFunc(cmds, func(c string) bool { return strings.HasPrefix(c, "RETR ") })
	var mdtm []string
	for i, c := range cmds {
		if strings.HasPrefix(c, "MDTM ") {
			mdtm = append(mdtm, c)
			if i > first && c != "MDTM top.bin" {
				t.Errorf("%q after the first RETR: %q", c, cmds)
			}
		}
	}
	// top.bin is alone in its folder: its transfer asks for its own time.
	slices.Sort(mdtm)
	if want := []string{"MDTM a.bin", "MDTM b.bin", "MDTM c.bin", "MDTM top.bin"}; !slices.Equal(mdtm, want) {
		t.Errorf("MDTM sent %q, want %q", mdtm, want)
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
			t.Errorf("%s: %q at %v", name, b, st.ModTime())
		}
	}
}
