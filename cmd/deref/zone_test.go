package main

import (
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver/ftpscript"
)

// TestFTPTimeZoneFlag: --ftp-timezone reads a server's ls -l times (and
// its MDTM times, found local too) in the zone named; a zone deref does not
// know is a usage error before any connection.
func TestFTPTimeZoneFlag(t *testing.T) {
	minus3 := time.FixedZone("", -3*3600)
	now := time.Now().UTC()
	mod := now.Add(-2 * time.Hour).Truncate(time.Minute)
	k := &ftpscript.Clock{Times: map[string]time.Time{"f.bin": mod}, List: minus3, MDTM: minus3, Now: now}
	s := &ftpscript.Server{Files: map[string]string{"f.bin": "x"}, Handle: k.Handle}
	start(t, s.Start, s.Close)
	u := "ftp://" + s.Addr() + "/"
	want := "file\t1\t" + mod.Format(time.RFC3339) + "\tf.bin\t" + u + "f.bin\n"
	for _, zone := range []string{"-03:00", "America/Sao_Paulo"} {
		r := runDeref(t, "", "--ftp-timezone", zone, u)
		if r.code != 0 || r.stdout != want {
			t.Errorf("--ftp-timezone %s: exit %d\n%q\nwant\n%q\n%s", zone, r.code, r.stdout, want, r.stderr)
		}
	}
	// Without it, the local MDTM agrees with LIST: the server's wall clock.
	if r := runDeref(t, "", u); !strings.Contains(r.stdout, mod.Add(-3*time.Hour).Format(time.RFC3339)) {
		t.Errorf("without --ftp-timezone: %q", r.stdout)
	}
	before := len(s.Commands())
	r := runDeref(t, "", "--ftp-timezone", "Mars/Olympus", u)
	if r.code != 1 || !strings.Contains(r.stderr, "--ftp-timezone") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 1 || len(s.Commands()) != before {
		t.Errorf("bad zone: exit %d, %q, %d commands sent", r.code, r.stderr, len(s.Commands())-before)
	}
}
