package mirror_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
)

// TestOnlyNewerServerZone mirrors from a scripted server whose ls -l runs
// in local time (UTC+5, then UTC-5) with MDTM in UTC, as proftpd's
// "TimesGMT off" gives: a second --only-newer run transfers nothing, and
// a third fetches exactly the file that changed, with the same size and a
// time ten minutes later. Read as UTC, the listing would make every file
// look five hours newer (all fetched again) or older (the change missed).
func TestOnlyNewerServerZone(t *testing.T) {
	for _, hours := range []int{5, -5} {
		zone := time.FixedZone("local", hours*3600)
		now := time.Now().UTC().Truncate(time.Second)
		files := map[string]string{"pub/a.txt": "alpha\n", "pub/b.txt": "bravo\n", "pub/c.txt": "charlie\n"}
		times := map[string]time.Time{}
		for p := range files {
			times[p] = now.Add(-3 * time.Hour)
		}
		k := &ftpscript.Clock{Times: times, List: zone, Now: now}
		s := &ftpscript.Server{Files: files, Handle: k.Handle}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		src := "ftp://" + s.Addr() + "/pub/"
		dst := t.TempDir()

		rep := run(t, src, dst, mirror.Options{OnlyNewer: true})
		if rep.New != 3 || rep.Failed != 0 {
			t.Fatalf("UTC%+d: first run: %+v", hours, rep)
		}
		if st, err := os.Stat(filepath.Join(dst, "a.txt")); err != nil || !st.ModTime().Equal(now.Add(-3*time.Hour)) {
			t.Errorf("UTC%+d: local time %v, want %v", hours, st.ModTime().UTC(), now.Add(-3*time.Hour))
		}
		rep = run(t, src, dst, mirror.Options{OnlyNewer: true})
		if rep.New+rep.Updated != 0 || rep.Unchanged != 3 {
			t.Errorf("UTC%+d: second run transferred: %+v", hours, rep)
		}
		k.SetFile(s, "pub/b.txt", "BRAVO\n", now.Add(-3*time.Hour+10*time.Minute))
		rep = run(t, src, dst, mirror.Options{OnlyNewer: true})
		if rep.Updated != 1 || rep.Unchanged != 2 || rep.New != 0 {
			t.Errorf("UTC%+d: after one change: %+v", hours, rep)
		}
		if b, _ := os.ReadFile(filepath.Join(dst, "b.txt")); string(b) != "BRAVO\n" {
			t.Errorf("UTC%+d: b.txt is %q", hours, b)
		}
	}
}

// A file the listing names whose RETR is then refused (unreadable, or
// gone since), with its data connection open already (its data read
// before the 150, on a kept connection), fails as not found with no
// NAME.part left; the others come, every reply read in turn on the one
// connection.
func TestRefusedAfterListing(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	files := map[string]string{"pub/a.bin": "alpha", "pub/b.bin": "bravo", "pub/c.bin": "charlie", "pub/d.bin": "delta"}
	times := map[string]time.Time{}
	for p := range files {
		times[p] = now.Add(-time.Hour)
	}
	k := &ftpscript.Clock{Times: times, List: time.UTC, Now: now}
	s := &ftpscript.Server{Files: files, Handle: func(c *ftpscript.Conn, verb, arg string) bool {
		if verb == "RETR" && arg == "c.bin" {
			time.Sleep(50 * time.Millisecond) // after the 229 has gone on its own: the data is read early
			c.Reply("550 Failed to open file.")
			return true
		}
		return k.Handle(c, verb, arg)
	}}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dst := t.TempDir()
	rep, err := mirror.Run(context.Background(), fetch.NewClient(), "ftp://"+s.Addr()+"/pub/", dst, mirror.Options{Parallel: 1})
	if err != nil || rep.New != 3 || rep.Failed != 1 || !errors.Is(rep.FirstError(), fetch.ErrNotFound) {
		t.Fatalf("%v %+v (%v)", err, rep, rep.FirstError())
	}
	des, _ := os.ReadDir(dst)
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	if strings.Join(names, " ") != "a.bin b.bin d.bin" {
		t.Errorf("the destination holds %q", names)
	}
	logins := 0
	for _, c := range s.Commands() {
		if strings.HasPrefix(c, "USER ") {
			logins++
		}
	}
	if logins != 1 {
		t.Errorf("%d logins, want one connection throughout (its replies read in turn): %q", logins, s.Commands())
	}
}
