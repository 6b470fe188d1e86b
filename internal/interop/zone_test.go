//go:build interop

package interop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/mirror"
)

// TestServerZone lists and mirrors the files of two daemons whose clocks
// run at UTC+5 (files three hours old, so ls -l gives times of day).
// proftpd lists in local time with MDTM in UTC: the zone is found by
// itself. vsftpd's use_localtime makes MDTM local too: nothing tells the
// zone, and --ftp-timezone (FTP.TimeZone) gives it. Either way the
// listing gives the files' real times, a second --only-newer mirror
// transfers nothing, and a third fetches just the file that changed (same
// size, ten minutes later).
func TestServerZone(t *testing.T) {
	tree := env(t, "DEREF_INTEROP_ZONED_TREE")
	plus5 := time.FixedZone("UTC+05:00", 5*3600)
	for _, kv := range strings.Fields(env(t, "DEREF_INTEROP_FTP_ZONED")) {
		name, src, _ := strings.Cut(kv, "=")
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(tree, name)
			newClient := func() *fetch.Client {
				c := client()
				if name == "vsftpd" {
					c.FTP.TimeZone = plus5
				}
				return c
			}
			resp, err := newClient().Get(context.Background(), src)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if len(resp.Entries) != 3 {
				t.Fatalf("%d entries", len(resp.Entries))
			}
			for _, e := range resp.Entries {
				st, err := os.Stat(filepath.Join(dir, e.Name))
				if err != nil || !e.ModTime.Equal(st.ModTime().Truncate(time.Minute)) {
					t.Errorf("%s: listed %v, want %v (%v)", e.Name, e.ModTime.UTC(), st.ModTime().UTC().Truncate(time.Minute), err)
				}
			}

			dst := t.TempDir()
			mirrorRun := func() *mirror.Report {
				t.Helper()
				rep, err := mirror.Run(context.Background(), newClient(), src, dst, mirror.Options{OnlyNewer: true})
				if err != nil {
					t.Fatal(err)
				}
				return rep
			}
			if rep := mirrorRun(); rep.New != 3 || rep.Failed != 0 {
				t.Fatalf("first run: %+v", rep)
			}
			for _, n := range []string{"a.txt", "b.txt", "c.txt"} {
				w, _ := os.Stat(filepath.Join(dir, n))
				g, err := os.Stat(filepath.Join(dst, n))
				if err != nil || !g.ModTime().Equal(w.ModTime()) {
					t.Errorf("%s: local time %v, want %v (%v)", n, g.ModTime().UTC(), w.ModTime().UTC(), err)
				}
			}
			if rep := mirrorRun(); rep.New+rep.Updated != 0 || rep.Unchanged != 3 || rep.Bytes != 0 {
				t.Errorf("second run transferred: %+v", rep)
			}
			b := filepath.Join(dir, "b.txt")
			st, _ := os.Stat(b)
			if err := os.WriteFile(b, []byte("BRAVO\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			later := st.ModTime().Add(10 * time.Minute)
			os.Chtimes(b, later, later)
			if rep := mirrorRun(); rep.Updated != 1 || rep.Unchanged != 2 || rep.New != 0 {
				t.Errorf("after one change: %+v", rep)
			}
			if got, _ := os.ReadFile(filepath.Join(dst, "b.txt")); string(got) != "BRAVO\n" {
				t.Errorf("b.txt is %q", got)
			}
		})
	}
}

// TestLocalMDTMWithoutZone: without --ftp-timezone, vsftpd's local LIST and
// MDTM times agree with each other, so a mirror is still consistent (a
// second run transfers nothing), though every time is five hours ahead:
// the case --ftp-timezone is for.
func TestLocalMDTMWithoutZone(t *testing.T) {
	var src string
	for _, kv := range strings.Fields(env(t, "DEREF_INTEROP_FTP_ZONED")) {
		if name, u, _ := strings.Cut(kv, "="); name == "vsftpd" {
			src = u
		}
	}
	dst := t.TempDir()
	for run := range 2 {
		rep, err := mirror.Run(context.Background(), client(), src, dst, mirror.Options{OnlyNewer: true})
		if err != nil {
			t.Fatal(err)
		}
		if run == 1 && (rep.New+rep.Updated != 0 || rep.Bytes != 0) {
			t.Errorf("second run transferred: %+v", rep)
		}
	}
	w, _ := os.Stat(filepath.Join(env(t, "DEREF_INTEROP_ZONED_TREE"), "vsftpd", "a.txt"))
	g, _ := os.Stat(filepath.Join(dst, "a.txt"))
	if d := g.ModTime().Sub(w.ModTime()); d != 5*time.Hour {
		t.Errorf("local time %v ahead of the file's; want the server's 5h", d)
	}
}
