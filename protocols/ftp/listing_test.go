package ftp

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/golden"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func TestParseListing(t *testing.T) {
	tests := []struct {
		name, in string
		mlsd     bool
		want     []Line
	}{
		{"vsftpd (numeric owners)", "-rw-r--r--    1 0        0             383 Jan 02  2020 README.txt\r\ndrwxr-xr-x    2 0        0            4096 Jan 02  2020 pub\r\n", false, []Line{
			{Name: "README.txt", Size: 383, ModTime: time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC), Format: "unix"},
			{Name: "pub", Dir: true, Size: -1, ModTime: time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC), Format: "unix"},
		}},
		{"proftpd (names, time of day)", "-rw-r--r--   1 root     root          383 Nov  2 03:04 with space.txt\n", false, []Line{
			{Name: "with space.txt", Size: 383, ModTime: time.Date(2026, 11, 2, 3, 4, 0, 0, time.UTC), Format: "unix"},
		}},
		{"time of day in the future is last year", "-rw-r--r--   1 u g 5 Dec 25 10:00 xmas\n", false, []Line{
			{Name: "xmas", Size: 5, ModTime: time.Date(2025, 12, 25, 10, 0, 0, 0, time.UTC), Format: "unix"},
		}},
		{"symlink", "lrwxrwxrwx    1 0        0               7 Jan 02  2020 link -> target\n", false, []Line{
			{Name: "link", Link: true, Target: "target", Size: -1, ModTime: time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC), Format: "unix"},
		}},
		{"MLSD symlinks (proftpd with target, plain)", "type=OS.unix=slink:/etc/passwd;size=11;modify=20200102030405; pw\r\ntype=OS.unix=symlink;modify=20200102030405; other\r\n", true, []Line{
			{Name: "pw", Link: true, Target: "/etc/passwd", Size: -1, ModTime: time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC), Format: "mlsd"},
			{Name: "other", Link: true, Size: -1, ModTime: time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC), Format: "mlsd"},
		}},
		{"total line and dot entries skipped", "total 8\ndrwxr-xr-x 2 0 0 4096 Jan 02 2020 .\ndrwxr-xr-x 2 0 0 4096 Jan 02 2020 ..\n", false, nil},
		{"MS-DOS", "01-02-20  03:04AM       <DIR>          pub\r\n01-02-2020  03:04PM                383 READ ME.txt\r\n", false, []Line{
			{Name: "pub", Dir: true, Size: -1, ModTime: time.Date(2020, 1, 2, 3, 4, 0, 0, time.UTC), Format: "dos"},
			{Name: "READ ME.txt", Size: 383, ModTime: time.Date(2020, 1, 2, 15, 4, 0, 0, time.UTC), Format: "dos"},
		}},
		{"EPLF", "+i8388621.48594,m825718503,r,s280,\tdjb.html\r\n+i8388621.50690,m824255907,/,\t514\r\n", false, []Line{
			{Name: "djb.html", Size: 280, ModTime: time.Unix(825718503, 0).UTC(), Format: "eplf"},
			{Name: "514", Dir: true, Size: -1, ModTime: time.Unix(824255907, 0).UTC(), Format: "eplf"},
		}},
		{"MLSD", "type=cdir;modify=20200102030405; .\r\ntype=file;size=383;modify=20200102030405;UNIX.mode=0644; README.txt\r\ntype=dir;modify=20200102030405; pub dir\r\n", true, []Line{
			{Name: "README.txt", Size: 383, ModTime: time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC), Format: "mlsd"},
			{Name: "pub dir", Dir: true, Size: -1, ModTime: time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC), Format: "mlsd"},
		}},
		{"unparsed lines are kept", "some banner the server added\n-rw-r--r-- 1 0 0 1 Jan 02 2020 a\n", false, []Line{
			{Name: "some banner the server added", Size: -1},
			{Name: "a", Size: 1, ModTime: time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC), Format: "unix"},
		}},
	}
	for _, tt := range tests {
		got := ParseListing(tt.in, tt.mlsd, now)
		if len(got) != len(tt.want) {
			t.Errorf("%s: %d lines, want %d: %+v", tt.name, len(got), len(tt.want), got)
			continue
		}
		for i, g := range got {
			w := tt.want[i]
			if g.Name != w.Name || g.Dir != w.Dir || g.Link != w.Link || g.Target != w.Target || g.Size != w.Size || !g.ModTime.Equal(w.ModTime) || g.Format != w.Format {
				t.Errorf("%s: line %d = %+v, want %+v", tt.name, i, g, w)
			}
			if g.Raw == "" || strings.ContainsAny(g.Raw, "\r\n") {
				t.Errorf("%s: raw line %q", tt.name, g.Raw)
			}
		}
	}
}

func FuzzParseListing(f *testing.F) {
	for _, pattern := range []string{"../../testdata/ftp/*.list", "../../testdata/ftp/*.mlsd"} {
		names, _ := filepath.Glob(pattern)
		for _, name := range names {
			if b, err := os.ReadFile(name); err == nil {
				f.Add(string(b), strings.HasSuffix(name, ".mlsd"))
			}
		}
	}
	f.Add("-rw-r--r--    1 0        0             383 Jan 02  2020 README.txt\r\n", false)
	f.Add("type=file;size=383;modify=20200102030405; README.txt\r\n", true)
	f.Add("01-02-20  03:04AM       <DIR>          pub\r\n", false)
	f.Add("+i8388621.48594,m825718503,r,s280,\tdjb.html\r\n", false)
	f.Fuzz(func(t *testing.T, s string, mlsd bool) {
		for _, l := range ParseListing(s, mlsd, now) {
			if l.Name == "" && l.Parsed {
				t.Fatalf("parsed line without a name: %+v", l)
			}
		}
	})
}

func TestCRLFReader(t *testing.T) {
	for in, want := range map[string]string{
		"a\r\nb\r\n":   "a\nb\n",
		"lone\rcr\r\n": "lone\rcr\n",
		"end\r":        "end\r",
		"\r\n\r\n":     "\n\n",
	} {
		// Read one byte at a time to cross every boundary.
		r := &crlfReader{r: &oneByte{s: in}}
		var out []byte
		buf := make([]byte, 1)
		for {
			n, err := r.Read(buf)
			out = append(out, buf[:n]...)
			if err != nil {
				break
			}
		}
		if string(out) != want {
			t.Errorf("%q -> %q, want %q", in, out, want)
		}
	}
}

type oneByte struct{ s string }

func (o *oneByte) Read(p []byte) (int, error) {
	if o.s == "" {
		return 0, io.EOF
	}
	p[0] = o.s[0]
	o.s = o.s[1:]
	return 1, nil
}

// TestCapturedListings parses listings captured from vsftpd (ls -l),
// proftpd (MLSD, and ls -l in local time at UTC+5) and pure-ftpd (ls -l
// and MLSD, with a symbolic link) in testdata/ftp at the top of the
// module, and compares the entries with the .golden files beside them;
// -update rewrites them.
func TestCapturedListings(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/ftp/*.list")
	mlsd, _ := filepath.Glob("../../testdata/ftp/*.mlsd")
	if len(files) == 0 || len(mlsd) == 0 {
		t.Fatal("no captures in testdata/ftp")
	}
	clock := time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)
	for _, in := range append(files, mlsd...) {
		raw, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, l := range ParseListing(string(raw), strings.HasSuffix(in, ".mlsd"), clock) {
			fmt.Fprintf(&b, "%s\tdir=%v link=%v target=%q size=%d time=%s precision=%v\n", l.Name, l.Dir, l.Link, l.Target, l.Size, l.ModTime.UTC().Format(time.RFC3339), l.Precision)
		}
		golden.Check(t, in+".golden", b.String())
	}
}
