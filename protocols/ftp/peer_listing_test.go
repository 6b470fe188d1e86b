package ftp

import (
	"testing"
	"time"
	_ "time/tzdata" // ParseZone's IANA names on a system without a zone database
)

// The listing lines of github.com/jlaffaye/ftp's parse_test.go (v0.2.4:
// listTests, listTestsSymlink, listTestsFail and TestSettime), collected
// there from real servers, with the reading this package gives them.
// Where the two differ, the comment says why. That file's clock is
// 2017-03-10 23:00 UTC.
func TestPeerListingLines(t *testing.T) {
	peerNow := time.Date(2017, 3, 10, 23, 0, 0, 0, time.UTC)
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	at := func(y int, m time.Month, d, h, min int) time.Time { return time.Date(y, m, d, h, min, 0, 0, time.UTC) }
	const unknown = -1
	tests := []struct {
		line   string
		name   string
		kind   string // "file", "dir", "link" or "" (not understood, kept whole)
		size   int64
		mod    time.Time
		target string
	}{
		// UNIX ls -l style. Folders have no size here (theirs: the
		// listed block size).
		{"drwxr-xr-x    3 110      1002            3 Dec 02  2009 pub", "pub", "dir", unknown, day(2009, 12, 2), ""},
		{"drwxr-xr-x    3 110      1002            3 Dec 02  2009 p u b", "p u b", "dir", unknown, day(2009, 12, 2), ""},
		{"-rw-r--r--   1 marketwired marketwired    12016 Mar 16  2016 2016031611G087802-001.newsml", "2016031611G087802-001.newsml", "file", 12016, day(2016, 3, 16), ""},
		{"-rwxr-xr-x    3 110      1002            1234567 Dec 02  2009 fileName", "fileName", "file", 1234567, day(2009, 12, 2), ""},
		// A link's size is the link's own: unknown for what it points to.
		{"lrwxrwxrwx   1 root     other          7 Jan 25 00:17 bin -> usr/bin", "bin", "link", unknown, at(2017, 1, 25, 0, 17), "usr/bin"},
		{"lrwxrwxrwx    1 0        1001           27 Jul 07  2017 R-3.4.0.pkg -> el-capitan/base/R-3.4.0.pkg", "R-3.4.0.pkg", "link", unknown, day(2017, 7, 7), "el-capitan/base/R-3.4.0.pkg"},
		// Another ls style
		{"drwxr-xr-x               folder        0 Aug 15 05:49 !!!-Tipp des Haus!", "!!!-Tipp des Haus!", "dir", unknown, at(2016, 8, 15, 5, 49), ""},
		{"drwxrwxrwx               folder        0 Aug 11 20:32 P0RN", "P0RN", "dir", unknown, at(2016, 8, 11, 20, 32), ""},
		// 2^64-1 does not fit an int64: the size is unknown, the rest read.
		{"-rw-r--r--        0   18446744073709551615 18446744073709551615 Nov 16  2006 VIDEO_TS.VOB", "VIDEO_TS.VOB", "file", unknown, day(2006, 11, 16), ""},
		// Microsoft's FTP servers for Windows
		{"----------   1 owner    group         1803128 Jul 10 10:18 ls-lR.Z", "ls-lR.Z", "file", 1803128, at(2016, 7, 10, 10, 18), ""},
		{"d---------   1 owner    group               0 Nov  9 19:45 Softlib", "Softlib", "dir", unknown, at(2016, 11, 9, 19, 45), ""},
		// WFTPD for MSDOS
		{"-rwxrwxrwx   1 noone    nogroup      322 Aug 19  1996 message.ftp", "message.ftp", "file", 322, day(1996, 8, 19), ""},
		// DOS DIR command output
		{"08-07-15  07:50PM                  718 Post_PRR_20150901_1166_265118_13049.dat", "Post_PRR_20150901_1166_265118_13049.dat", "file", 718, at(2015, 8, 7, 19, 50), ""},
		{"08-10-15  02:04PM       <DIR>          Billing", "Billing", "dir", unknown, at(2015, 8, 10, 14, 4), ""},
		{"08-07-2015  07:50PM                  718 Post_PRR_20150901_1166_265118_13049.dat", "Post_PRR_20150901_1166_265118_13049.dat", "file", 718, at(2015, 8, 7, 19, 50), ""},
		{"08-10-2015  02:04PM       <DIR>          Billing", "Billing", "dir", unknown, at(2015, 8, 10, 14, 4), ""},
		// names with runs of spaces
		{"drwxr-xr-x    3 110      1002            3 Dec 02  2009 spaces   dir   name", "spaces   dir   name", "dir", unknown, day(2009, 12, 2), ""},
		{"-rwxr-xr-x    3 110      1002            1234567 Dec 02  2009 file   name", "file   name", "file", 1234567, day(2009, 12, 2), ""},
		{"-rwxr-xr-x    3 110      1002            1234567 Dec 02  2009  foo bar ", " foo bar ", "file", 1234567, day(2009, 12, 2), ""},
		// Odd link count from hostedftp.com
		{"-r--------   0 user group     65222236 Feb 24 00:39 RegularFile", "RegularFile", "file", 65222236, at(2017, 2, 24, 0, 39), ""},
		// ACL permissions
		{"-rwxrw-r--+  1 521      101         2080 May 21 10:53 data.csv", "data.csv", "file", 2080, at(2016, 5, 21, 10, 53), ""},
		// Their listTestsFail. A three-digit year is no date: the line is
		// read, its time unknown (theirs: an error for the whole line).
		{"drwxr-xr-x    3 110      1002            3 Dec 02  209 pub", "pub", "dir", unknown, time.Time{}, ""},
		// NetWare lines have the ls -l shape from the size on: read
		// (theirs: unsupported).
		{"d [R----F--] supervisor            512       Jan 16 18:53 login", "login", "dir", unknown, at(2017, 1, 16, 18, 53), ""},
		{"- [R----F--] rhesus             214059       Oct 20 15:27 cx.exe", "cx.exe", "file", 214059, at(2016, 10, 20, 15, 27), ""},
		// An unknown type letter: kept whole, as every line not understood.
		{"Zrwxrwxrwx   1 root     other          7 Jan 25 00:17 bin -> usr/bin", "Zrwxrwxrwx   1 root     other          7 Jan 25 00:17 bin -> usr/bin", "", unknown, time.Time{}, ""},
		{"000000000x ", "000000000x ", "", unknown, time.Time{}, ""},
		// TestSettime: a time of day in the past is this year; one ahead of
		// the server's clock by more than a day is last year (theirs puts
		// dates up to six months ahead in this year; ls shows the time of
		// day only for files of the last six months, not future ones).
		{"-rw-r--r-- 1 u g 1 Feb 10 23:00 a", "a", "file", 1, at(2017, 2, 10, 23, 0), ""},
		{"-rw-r--r-- 1 u g 1 Sep 10 22:59 b", "b", "file", 1, at(2016, 9, 10, 22, 59), ""},
		{"-rw-r--r-- 1 u g 1 Sep 10 23:00 c", "c", "file", 1, at(2016, 9, 10, 23, 0), ""},
		{"-rw-r--r-- 1 u g 1 Jan 23  2019 d", "d", "file", 1, day(2019, 1, 23), ""},
	}
	for _, tt := range tests {
		got := ParseListing(tt.line, false, peerNow)
		if len(got) != 1 {
			t.Errorf("%q: %d lines", tt.line, len(got))
			continue
		}
		l := got[0]
		kind := ""
		switch {
		case !l.Parsed:
		case l.Dir:
			kind = "dir"
		case l.Link:
			kind = "link"
		default:
			kind = "file"
		}
		if l.Name != tt.name || kind != tt.kind || l.Size != tt.size || !l.ModTime.Equal(tt.mod) || l.Target != tt.target {
			t.Errorf("%q:\n got %q %s size %d time %v target %q\nwant %q %s size %d time %v target %q",
				tt.line, l.Name, kind, l.Size, l.ModTime, l.Target, tt.name, tt.kind, tt.size, tt.mod, tt.target)
		}
	}
	// Their MLSD lines (RFC 3659 §7, and facts in upper case).
	mlsd := "modify=20150813224845;perm=fle;type=cdir;unique=119FBB87U4;UNIX.group=0;UNIX.mode=0755;UNIX.owner=0; .\r\n" +
		"modify=20150806235817;perm=fle;type=dir;unique=1B20F360U4;UNIX.group=0;UNIX.mode=0755;UNIX.owner=0; movies\r\n" +
		"Modify=20150813175250;Perm=adfr;Size=951;Type=file;Unique=119FBB87UE;UNIX.group=0;UNIX.mode=0644;UNIX.owner=0; welcome.msg\r\n"
	got := ParseListing(mlsd, true, peerNow)
	if len(got) != 2 || got[0].Name != "movies" || !got[0].Dir || got[1].Name != "welcome.msg" || got[1].Size != 951 ||
		!got[1].ModTime.Equal(time.Date(2015, 8, 13, 17, 52, 50, 0, time.UTC)) || got[1].Precision != time.Second {
		t.Errorf("MLSD: %+v", got)
	}
}

// TestImpossibleDates: a date no calendar has leaves the time unknown and
// the rest of the line read.
func TestImpossibleDates(t *testing.T) {
	for _, line := range []string{
		"-rw-r--r-- 1 0 0 5 Dec 02  209 three-digit-year",
		"-rw-r--r-- 1 0 0 5 Dec 02  0209 year-0209",
		"-rw-r--r-- 1 0 0 5 Feb 30  2020 february-30",
		"-rw-r--r-- 1 0 0 5 Jan 02 25:10 hour-25",
		"-rw-r--r-- 1 0 0 5 Jan 00  2020 day-0",
		"13-02-20  03:04PM                    5 month-13",
		"02-30-2020  03:04PM                  5 february-30-dos",
		"type=file;size=5;modify=20201302030405; mlsd-month-13",
	} {
		got := ParseListing(line, line[0] == 't', now)
		if len(got) != 1 || !got[0].Parsed || got[0].Size != 5 || got[0].Dir {
			t.Errorf("%q: %+v", line, got)
			continue
		}
		if !got[0].ModTime.IsZero() || got[0].Precision != 0 {
			t.Errorf("%q: time %v (precision %v), want unknown", line, got[0].ModTime, got[0].Precision)
		}
	}
}

// TestListingZone: ls -l and MS-DOS times are read in the zone of the
// clock given, MLSD and EPLF times stay UTC, and a year-less date is placed
// by the server's date, not this machine's.
func TestListingZone(t *testing.T) {
	plus5 := time.FixedZone("UTC+05:00", 5*3600)
	clock := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC).In(plus5)
	in := "-rw-r--r-- 1 0 0 5 Nov 23 15:04 recent\r\n" +
		"-rw-r--r-- 1 0 0 5 Jan 02  2020 old\r\n" +
		"11-23-26  03:04PM                    5 dos\r\n"
	got := ParseListing(in, false, clock)
	want := []time.Time{
		time.Date(2026, 11, 23, 10, 4, 0, 0, time.UTC),
		time.Date(2020, 1, 1, 19, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 23, 10, 4, 0, 0, time.UTC),
	}
	for i, l := range got {
		if !l.ModTime.Equal(want[i]) {
			t.Errorf("%s: %v, want %v", l.Name, l.ModTime.UTC(), want[i])
		}
	}
	if m := ParseListing("type=file;size=1;modify=20200102030405; m\r\n", true, clock); !m[0].ModTime.Equal(time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("MLSD time moved by the zone: %v", m[0].ModTime)
	}

	// 21:00 UTC on New Year's Eve is 02:00 on New Year's Day at UTC+5:
	// "Jan  1 01:30" is then an hour ago, not eleven months ahead.
	eve := time.Date(2026, 12, 31, 21, 0, 0, 0, time.UTC)
	line := "-rw-r--r-- 1 0 0 5 Jan  1 01:30 newyear\r\n"
	if got := ParseListing(line, false, eve.In(plus5)); !got[0].ModTime.Equal(time.Date(2026, 12, 31, 20, 30, 0, 0, time.UTC)) {
		t.Errorf("by the server's clock: %v", got[0].ModTime.UTC())
	}
}

func TestParseZone(t *testing.T) {
	at := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]int{
		"UTC": 0, "Z": 0, "+05:00": 5 * 3600, "-0330": -(3*3600 + 1800), "+5": 5 * 3600, "UTC+5": 5 * 3600,
		"UTC-03:30": -(3*3600 + 1800), "GMT+1": 3600, "Europe/Berlin": 3600, "Asia/Karachi": 5 * 3600,
	} {
		loc, err := ParseZone(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if _, off := at.In(loc).Zone(); off != want {
			t.Errorf("%q: offset %d, want %d", in, off, want)
		}
	}
	for _, bad := range []string{"", "+25:00", "+5:7", "+05:60", "Mars/Olympus", "Local", "+abc"} {
		if _, err := ParseZone(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
