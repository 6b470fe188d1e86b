package mirror_test

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
)

// TestExactTimesOfCopiesOnly: a listing that dates files only to the day
// (ls -l of old files), from a server whose transfers ask their times with
// their own commands: the exact times of the files here already, which
// decide whether they are fetched, are asked at once before any transfer;
// new files' times come with their transfers, each asked once. Every file
// ends with the server's time.
func TestExactTimesOfCopiesOnly(t *testing.T) {
	when := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	files := map[string]string{"a.bin": "aa", "b.bin": "bb", "c.bin": "cc", "d.bin": "dd"}
	k := &ftpscript.Clock{Times: map[string]time.Time{}, List: time.UTC, Now: time.Now()}
	for name := range files {
		k.Times[name] = when
	}
	s := &ftpscript.Server{Files: files, Handle: k.Handle}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dst := t.TempDir()
	old := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, name := range []string{"b.bin", "c.bin"} {
		p := filepath.Join(dst, name)
		os.WriteFile(p, []byte("old"), 0o644)
		os.Chtimes(p, old, old)
	}
	rep := run(t, "ftp://"+s.Addr()+"/", dst, mirror.Options{OnlyNewer: true, Parallel: 1})
	if rep.New != 2 || rep.Updated != 2 || rep.Failed != 0 {
		t.Fatalf("report %+v", rep)
	}
	// Each file's MDTM once: a transfer's goes just before its EPSV and
	// RETR, the folder's ones before any transfer's.
	cmds := s.Commands()
	byTransfer := map[string]bool{}
	n := 0
	for i, c := range cmds {
		if name, ok := strings.CutPrefix(c, "MDTM "); ok {
			n++
			byTransfer[name] = i+2 < len(cmds) && cmds[i+2] == "RETR "+name
		}
	}
	want := map[string]bool{"a.bin": true, "b.bin": false, "c.bin": false, "d.bin": true}
	if n != 4 || !maps.Equal(byTransfer, want) {
		t.Errorf("MDTM asked by a transfer %v, want %v: %q", byTransfer, want, cmds)
	}
	for name, content := range files {
		p := filepath.Join(dst, name)
		b, _ := os.ReadFile(p)
		st, err := os.Stat(p)
		if err != nil || string(b) != content || !st.ModTime().Equal(when) {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
}
