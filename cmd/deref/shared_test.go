package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/internal/testserver/gopherd"
	"github.com/urlderef/deref/internal/testserver/redisd"
)

// TestCrawlSharedState: two deref crawl processes given the same
// --state redis://... crawl a Gopher server once between them, each into
// its own WARC series (NAME-WORKER-00000.warc.gz); --status prints the
// shared crawl's progress; deref index makes one index of both series;
// the shared flags without a store, a bad store URL, a store that does
// not answer and --status of a prefix no crawl began under are one-line
// errors with their exit codes, the password hidden.
func TestCrawlSharedState(t *testing.T) {
	s := redisd.Start(t)
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "docs"), 0o755)
	for i, name := range []string{"a.txt", "b.txt", "docs/c.txt", "docs/d.txt"} {
		os.WriteFile(filepath.Join(root, filepath.FromSlash(name)), []byte(strings.Repeat("x", i+1)+"\n"), 0o644)
	}
	gs := &gopherd.Server{Root: root}
	if err := gs.Start(); err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	dir := t.TempDir()
	store := s.URL("cmd")
	start := "gopher://" + gs.Addr() + "/1/"
	fetched := 0
	for _, w := range []string{"one", "two"} {
		r := runDeref(t, "", "crawl", "--json", "--state", store, "--worker", w, "--warc-file", filepath.Join(dir, "crawl"), "--warc-cdx", start)
		if r.code != 0 {
			t.Fatalf("worker %s: exit %d: %s", w, r.code, r.stderr)
		}
		var rep struct{ Fetched int }
		json.Unmarshal([]byte(r.stdout), &rep)
		fetched += rep.Fetched
	}
	if fetched != 6 {
		t.Errorf("the two workers fetched %d, want the 6 URLs once", fetched)
	}
	if _, err := os.Stat(filepath.Join(dir, "crawl-one-00000.warc.gz")); err != nil {
		t.Error(err)
	}
	r := runDeref(t, "", "crawl", "--state", store, "--status")
	if r.code != 0 || !strings.Contains(r.stdout, "gopher://"+gs.Addr()) || !strings.Contains(r.stdout, "all") {
		t.Errorf("--status: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	fields := strings.Fields(r.stdout[strings.LastIndex(r.stdout, "all"):])
	if len(fields) != 6 || fields[1] != "0" || fields[2] != "0" || fields[3] != "6" {
		t.Errorf("--status totals %q, want 0 queued, 0 leased, 6 settled", fields)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "crawl-*.warc.gz"))
	r = runDeref(t, "", append([]string{"index"}, files...)...)
	if n := strings.Count(r.stdout, "\n"); r.code != 0 || n != 6 {
		t.Errorf("deref index of %v: exit %d, %d lines: %s", files, r.code, n, r.stderr)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--worker", "w", start}, 1, "go with a shared crawl"},
		{[]string{"--state-timeout", "5", start}, 1, "go with a shared crawl"},
		{[]string{"--state", s.URL("none"), "--status"}, 4, "holds no crawl under its prefix"},
		{[]string{"--state", "redis-cluster://127.0.0.1:1/?shards=x", start}, 2, `shards="x"`},
		{[]string{"--state", "redis-sentinel://127.0.0.1:1/", start}, 2, "/MASTER/DB"},
		{[]string{"--state", "redis://127.0.0.1:1/0?prefx=a", start}, 2, `unknown option "prefx"`},
		{[]string{"--state", "redis://u:s3cret@127.0.0.1:1/0", start}, 6, "does not answer"},
	} {
		r := runDeref(t, "", append([]string{"crawl"}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "s3cret") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 1 {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
}
