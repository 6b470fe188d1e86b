package ftp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver/ftpscript"
)

// zoned starts a scripted server whose LIST runs in list and whose MDTM
// answers in mdtm, serving two files in pub/: one of two hours ago
// (listed to the minute) and one of 2020 (listed to the day).
func zoned(t *testing.T, list, mdtm *time.Location) (*ftpscript.Server, map[string]time.Time) {
	t.Helper()
	now := time.Now().UTC()
	times := map[string]time.Time{
		"pub/recent.bin": now.Add(-2 * time.Hour).Truncate(time.Second),
		"pub/old.bin":    time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	k := &ftpscript.Clock{Times: times, List: list, MDTM: mdtm, Now: now}
	s := scriptServer(t, map[string]string{"pub/recent.bin": "recent", "pub/old.bin": "old"}, k.Handle)
	return s, times
}

// TestLocalListTimes: a server whose ls -l runs at UTC+5 with MDTM in UTC
// has its LIST times read at UTC+5, found by one MDTM on its first
// listing, and said in the trace.
func TestLocalListTimes(t *testing.T) {
	plus5 := time.FixedZone("PKT", 5*3600)
	s, times := zoned(t, plus5, time.UTC)
	c := newTraced()
	for range 2 {
		_, resp := c.get(t, "ftp://"+s.Addr()+"/pub/")
		for _, e := range resp.Entries {
			want := times["pub/"+e.Name].Truncate(time.Minute)
			if e.Name == "old.bin" {
				want = time.Date(2020, 1, 1, 19, 0, 0, 0, time.UTC) // Jan  2  2020 at UTC+5
			}
			if !e.ModTime.Equal(want) {
				t.Errorf("%s: %v, want %v", e.Name, e.ModTime.UTC(), want)
			}
		}
	}
	if got := c.commands(); strings.Join(got, "|") != "TYPE I|CWD pub|LIST|MDTM recent.bin|LIST" {
		t.Errorf("sent %q: want one MDTM, after the first listing", got)
	}
	if !strings.Contains(c.all.String(), "LIST times are UTC+05:00") {
		t.Errorf("the trace does not say the zone found:\n%s", c.all.String())
	}
}

// TestUTCListTimes: a server listing in UTC keeps its times, and says so.
func TestUTCListTimes(t *testing.T) {
	s, times := zoned(t, time.UTC, time.UTC)
	c := newTraced()
	_, resp := c.get(t, "ftp://"+s.Addr()+"/pub/")
	for _, e := range resp.Entries {
		if want := times["pub/"+e.Name].Truncate(24 * time.Hour); e.Name == "old.bin" && !e.ModTime.Equal(want) {
			t.Errorf("%s: %v, want %v", e.Name, e.ModTime, want)
		}
		if want := times["pub/"+e.Name].Truncate(time.Minute); e.Name == "recent.bin" && !e.ModTime.Equal(want) {
			t.Errorf("%s: %v, want %v", e.Name, e.ModTime, want)
		}
	}
	if !strings.Contains(c.all.String(), "LIST times are UTC") {
		t.Errorf("trace:\n%s", c.all.String())
	}
}

// TestGivenZoneWithLocalMDTM: with the zone given, a server whose MDTM is
// local too (vsftpd's use_localtime) has both read in that zone: the
// listing and a retrieval's time are the file's real times.
func TestGivenZoneWithLocalMDTM(t *testing.T) {
	minus3 := time.FixedZone("BRT", -3*3600)
	s, times := zoned(t, minus3, minus3)
	c := newTraced()
	c.FTP.TimeZone = minus3
	_, resp := c.get(t, "ftp://"+s.Addr()+"/pub/")
	for _, e := range resp.Entries {
		if want := times["pub/"+e.Name].Truncate(time.Minute); e.Name == "recent.bin" && !e.ModTime.Equal(want) {
			t.Errorf("listed %s: %v, want %v", e.Name, e.ModTime.UTC(), want)
		}
	}
	_, resp = c.get(t, "ftp://"+s.Addr()+"/pub/recent.bin")
	if want := times["pub/recent.bin"]; !resp.ModTime.Equal(want) {
		t.Errorf("retrieved: %v, want %v", resp.ModTime.UTC(), want)
	}
	if !strings.Contains(c.all.String(), "MDTM times are local like LIST times") {
		t.Errorf("trace:\n%s", c.all.String())
	}

	// Without the zone, the listing and MDTM agree with each other, both
	// three hours early: nothing to correct by.
	c = newTraced()
	_, resp = c.get(t, "ftp://"+s.Addr()+"/pub/recent.bin")
	if want := times["pub/recent.bin"].Add(-3 * time.Hour); !resp.ModTime.Equal(want) {
		t.Errorf("without --ftp-timezone: %v, want the server's wall clock %v", resp.ModTime.UTC(), want)
	}
}
