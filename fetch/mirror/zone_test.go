package mirror_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

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
