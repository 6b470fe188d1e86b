package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/internal/testserver/geminid"
)

// gemini: from the command: a page as a listing, --raw, a prompt said
// with how to answer it, the exit codes of the statuses, and a changed
// key refused naming the known-hosts file and its line.
func TestGemini(t *testing.T) {
	s := &geminid.Server{Pages: map[string]string{
		"/":      "20 text/gemini\r\n# Home\n=> a.txt A\n",
		"/a.txt": "20 text/plain\r\nalpha\n",
		"/ask":   "10 Your name?\r\n",
		"/gone":  "52 Gone\r\n",
		"/cert":  "60 Who are you?\r\n",
		"/slow":  "44 1\r\n",
	}}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	kh := filepath.Join(t.TempDir(), "known_hosts")
	base := "gemini://" + s.Addr()
	if r := runDeref(t, "", "--known-hosts", kh, base+"/"); r.code != 0 || r.stdout != "file\t-\t-\tA\t"+base+"/a.txt\n" {
		t.Errorf("page: %+v", r)
	}
	if r := runDeref(t, "", "--known-hosts", kh, "--raw", base+"/"); r.code != 0 || r.stdout != "# Home\n=> a.txt A\n" {
		t.Errorf("--raw: %+v", r)
	}
	if r := runDeref(t, "", "--known-hosts", kh, base+"/ask"); r.code != 0 || !strings.Contains(r.stderr, "asks: Your name?; to answer: deref '"+base+"/ask?ANSWER'") {
		t.Errorf("prompt: %+v", r)
	}
	for p, code := range map[string]int{"/nosuch": 4, "/gone": 4, "/cert": 5, "/slow": 6} {
		if r := runDeref(t, "", "--known-hosts", kh, base+p); r.code != code || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%s: exit %d (want %d): %q", p, r.code, code, r.stderr)
		}
	}
	b, _ := os.ReadFile(kh)
	host, _, _ := strings.Cut(string(b), " ")
	os.WriteFile(kh, []byte(host+" sha256/"+strings.Repeat("1", 64)+" 2099-01-01T00:00:00Z\n"), 0o600)
	if r := runDeref(t, "", "--known-hosts", kh, base+"/a.txt"); r.code != 5 || !strings.Contains(r.stderr, "remove line 1 of "+kh) {
		t.Errorf("changed key: %+v", r)
	}
	if r := runDeref(t, "", "--known-hosts", kh, "-k", base+"/a.txt"); r.code != 0 || r.stdout != "alpha\n" {
		t.Errorf("-k: %+v", r)
	}
}
