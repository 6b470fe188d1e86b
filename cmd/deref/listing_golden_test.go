package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/golden"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
	"github.com/urlderef/deref/internal/testserver/gopherd"
	"github.com/urlderef/deref/internal/testserver/nntpd"
	"github.com/urlderef/deref/internal/testserver/waisd"
)

// ftpListing is LIST as real servers sent it (vsftpd, a Windows server,
// an EPLF server), with the lines that trip parsers: a link, a size of
// 2^64-1, a three-digit year, month 13, and a line no parser reads.
const ftpListing = "-rw-r--r--    1 0        0             383 Jan 02  2020 README.txt\r\n" +
	"drwxr-xr-x    2 0        0            4096 Jan 02  2020 pub\r\n" +
	"lrwxrwxrwx    1 0        0               7 Jan 02  2020 bin -> usr/bin\r\n" +
	"-rw-r--r--        0   18446744073709551615 18446744073709551615 Nov 16  2006 VIDEO_TS.VOB\r\n" +
	"drwxr-xr-x    3 110      1002            3 Dec 02  209 old\r\n" +
	"13-02-20  03:04PM                  718 month13.dat\r\n" +
	"01-02-2020  03:04PM       <DIR>          Billing\r\n" +
	"+i8388621.48594,m825718503,r,s280,\tdjb.html\r\n" +
	"d [R----F--] supervisor            512       Jan 16  2020 login\r\n" +
	"some banner the server added\r\n"

// TestListingGolden prints the listing of each protocol's in-process
// server, as TAB lines and as --json, and compares both with
// testdata/listings/SCHEME.golden (the server's address written as HOST);
// -update rewrites them. cmd/deref/help/listings.md describes what
// these files show.
func TestListingGolden(t *testing.T) {
	t.Setenv("NNTPSERVER", "")
	stamp := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a b.txt"), []byte("spaced\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink("a b.txt", filepath.Join(dir, "link"))
	for _, n := range []string{"a b.txt", "sub"} {
		os.Chtimes(filepath.Join(dir, n), stamp, stamp)
	}
	fileURL := "file://" + filepath.ToSlash(dir) + "/"

	fs := &ftpscript.Server{Files: map[string]string{}, Handle: func(c *ftpscript.Conn, verb, arg string) bool {
		switch verb {
		case "LIST":
			d, err := c.AcceptData()
			if err != nil {
				c.Reply("425 No data connection.")
				return true
			}
			c.Reply("150 Here comes the directory listing.")
			d.Write([]byte(ftpListing))
			d.Close()
			c.Reply("226 Directory send OK.")
			return true
		case "MDTM":
			c.Reply("550 Could not get file modification time.")
			return true
		}
		return false
	}}
	start(t, fs.Start, fs.Close)

	gopherRoot := t.TempDir()
	os.WriteFile(filepath.Join(gopherRoot, "about.txt"), []byte("about\n"), 0o644)
	os.Mkdir(filepath.Join(gopherRoot, "docs"), 0o755)
	os.WriteFile(filepath.Join(gopherRoot, "image.gif"), []byte("GIF89a"), 0o644)
	gs := &gopherd.Server{Root: gopherRoot}
	start(t, gs.Start, gs.Close)

	ns := nntpd.New()
	ns.AddGroup("local.test", "Local test group")
	ns.Post("local.test", "<a1@test>", []string{"From: A <a@test>", "Subject: first", "Date: Sun, 22 Nov 2026 10:00:00 +0000"}, "Hello.\n")
	ns.Post("local.test", "<a2@test>", []string{"From: B <b@test>", "Subject: second", "Date: Mon, 23 Nov 2026 10:00:00 +0000"}, "Again.\n")
	start(t, ns.Start, ns.Close)

	ws := waisd.New()
	start(t, ws.Start, ws.Close)

	for _, tt := range []struct {
		name, addr string
		args       []string
	}{
		{"file", dir, []string{fileURL}},
		{"ftp", fs.Addr(), []string{"ftp://" + fs.Addr() + "/"}},
		{"gopher", gs.Addr(), []string{"gopher://" + gs.Addr() + "/1/"}},
		{"news", ns.Addr(), []string{"--news-server", ns.Addr(), "news:local.test"}},
		{"nntp-groups", ns.Addr(), []string{"--news-server", ns.Addr(), "--descriptions", "news:*"}},
		{"wais", ws.Addr(), []string{"wais://" + ws.Addr() + "/test?gophers"}},
	} {
		if tt.name == "file" && runtime.GOOS == "windows" {
			continue // the link needs privileges there
		}
		var b strings.Builder
		for _, asJSON := range []bool{false, true} {
			args := tt.args
			if asJSON {
				args = append([]string{"--json"}, args...)
			}
			r := runDeref(t, "", args...)
			if r.code != 0 {
				t.Fatalf("%s: exit %d: %s", tt.name, r.code, r.stderr)
			}
			b.WriteString("$ deref " + strings.Join(args, " ") + "\n" + r.stdout)
		}
		got := strings.ReplaceAll(b.String(), tt.addr, "HOST")
		if _, port, ok := strings.Cut(tt.addr, ":"); ok {
			got = strings.ReplaceAll(got, `"port":`+port, `"port":PORT`)
		}
		if st, err := os.Lstat(filepath.Join(dir, "link")); err == nil && tt.name == "file" {
			got = strings.ReplaceAll(got, st.ModTime().UTC().Format(time.RFC3339), "LINK-TIME") // a link's own time, not settable portably
		}
		golden.Check(t, filepath.Join("..", "..", "testdata", "listings", tt.name+".golden"), got)
	}
}

func start(t *testing.T, run func() error, stop func() error) {
	t.Helper()
	if err := run(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop() })
}
