package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/urlderef/deref/internal/testserver/prosperod"
)

func prosperoServer(t *testing.T, s *prosperod.Server) string {
	t.Helper()
	if s == nil {
		s = &prosperod.Server{}
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return "prospero://" + s.Addr()
}

// prospero: from the command: a file, a listing in every form, -I, and
// the exit codes every scheme has, each error one line naming the URL.
func TestProspero(t *testing.T) {
	base := prosperoServer(t, &prosperod.Server{Reply: func(req string) (string, bool) {
		switch {
		case strings.Contains(req, "'AFTP/error'"):
			return "ERROR Unknown message: FROBNICATE\n", true
		case strings.Contains(req, "'AFTP/open'"):
			return "LINK  L FILE 'never closed\n", true
		}
		return "", false
	}})
	if r := runDeref(t, "", base+"/AFTP/pub/hello.txt"); r.code != 0 || r.stdout != "Hello from the Prospero server.\n" {
		t.Errorf("file: %+v", r)
	}
	r := runDeref(t, "", base+"/AFTP/pub/docs")
	if r.code != 0 || r.stdout != "file\t17\t2024-01-02T03:04:05Z\treadme.txt\t"+base+"/AFTP/pub/docs/readme.txt\ndirectory\t-\t2024-01-02T03:04:05Z\tnested\t"+base+"/AFTP/pub/docs/nested\n" {
		t.Errorf("listing: %+v", r)
	}
	if r := runDeref(t, "", "--raw", base+"/AFTP/pub/docs"); r.code != 0 || !strings.Contains(r.stdout, "LINK  L FILE readme.txt INTERNET-D ") {
		t.Errorf("--raw: %+v", r)
	}
	r = runDeref(t, "", "--json", base+"/AFTP/pub/docs")
	var e struct{ Kind, Name, URL string }
	if err := json.Unmarshal([]byte(strings.SplitN(r.stdout, "\n", 2)[0]), &e); r.code != 0 || err != nil || e.Kind != "file" || e.Name != "readme.txt" || e.URL != base+"/AFTP/pub/docs/readme.txt" {
		t.Errorf("--json: %+v %v", r, err)
	}
	if r := runDeref(t, "", "-I", base+"/AFTP/pub/big.txt"); r.code != 0 || !strings.Contains(r.stdout, "Content-Length: 30000\r\n") || !strings.Contains(r.stdout, "Last-Modified: Tue, 02 Jan 2024 03:04:05 GMT\r\n") || !strings.Contains(r.stdout, "Content-Type: text/plain\r\n") {
		t.Errorf("-I: %+v", r)
	}
	if r := runDeref(t, "", "-v", base+"/AFTP/pub/bytes.bin"); r.code != 0 || !strings.Contains(r.stderr, "> GET-OBJECT-INFO CONTENTS ASCII 'AFTP/pub/bytes.bin' 0") || strings.Contains(r.stderr, "\x01\x02\x03") {
		t.Errorf("-v: %d\n%s", r.code, r.stderr)
	}
	silent := prosperoServer(t, &prosperod.Server{Faults: prosperod.Faults{Silent: true}})
	for u, code := range map[string]int{
		base + "/AFTP/pub/nosuch":            4,
		base + "//etc/passwd":                5,
		base + "/AFTP/error":                 7,
		base + "/AFTP/open":                  7,
		base + "/AFTP/x;FORMAT=ps":           2,
		"prospero://u@127.0.0.1/AFTP/x":      2,
		silent + "/AFTP/pub/hello.txt":       6,
		base + "/AFTP/pub/hello.txt%00x":     2,
		base + "/AFTP/pub/docs;x":            2,
		base + "/AFTP/pub;OBJECT-VERSION=v1": 2,
	} {
		r := runDeref(t, "", "--connect-timeout", "0.2", u)
		if r.code != code || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "prospero://") {
			t.Errorf("%s: exit %d (want %d): %q", u, r.code, code, r.stderr)
		}
	}
}
