package main

import (
	"crypto/sha1"
	"encoding/base32"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nlnwa/gowarc"

	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/internal/testserver/waisd"
)

func TestWAIS(t *testing.T) {
	s := waisd.New()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base := "wais://" + s.Addr()
	r := runDeref(t, "", base+"/test")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "searchable index") {
		t.Errorf("index: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = runDeref(t, "", base+"/test?gophers")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "file\t127\t-\talpha.txt   /srv/wais/docs/\t"+base+"/test/TEXT/127/1=") {
		t.Fatalf("search: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r2 := runDeref(t, "", "--json", base+"/test?gophers")
	if !strings.Contains(r2.stdout, `"score":191,"lines":3`) {
		t.Errorf("--json: %q", r2.stdout)
	}
	// The URL printed for a hit fetches it.
	doc := strings.Split(lines[0], "\t")[4]
	if r := runDeref(t, "", doc); r.code != 0 || r.stdout != waisd.Alpha {
		t.Errorf("document: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = runDeref(t, "", "--raw", base+"/test?zebra")
	if r.code != 0 || !strings.Contains(r.stderr, "no documents matched") || !strings.Contains(r.stdout, "Catalog for database: test") {
		t.Errorf("no match: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = runDeref(t, "", base+"/nosuchdb?gophers")
	if r.code != 4 || !strings.Contains(r.stderr, "database is not available") {
		t.Errorf("unknown database: %d %q", r.code, r.stderr)
	}
	r = runDeref(t, "", base+"/test/TEXT/1=broken")
	if r.code != 2 || !strings.Contains(r.stderr, "wais wpath") {
		t.Errorf("bad wpath: %d %q", r.code, r.stderr)
	}
}

// A WAIS search is archived as a metadata record of its result list (as
// --raw prints it) and a document as a resource record, both spoken in
// wais.
func TestWAISWarc(t *testing.T) {
	s := waisd.New()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	search := "wais://" + s.Addr() + "/test?gophers"
	raw := runDeref(t, "", "--raw", search)
	doc := strings.Split(strings.Split(runDeref(t, "", search).stdout, "\n")[0], "\t")[4]
	name := filepath.Join(t.TempDir(), "wais")
	if r := runDeref(t, "", "-s", "--warc-file", name, search, doc); r.code != 0 || raw.code != 0 {
		t.Fatalf("exit %d: %s (--raw: %d)", r.code, r.stderr, raw.code)
	}
	var got []string
	for _, rec := range readWARC(t, name+".warc.gz") {
		h, body := rec.h, rec.body
		got = append(got, rec.typ.String()+" "+h.Get(gowarc.WarcTargetURI)+" "+h.Get("WARC-Protocol"))
		switch rec.typ {
		case gowarc.Metadata:
			if string(body) != raw.stdout || h.Get(gowarc.ContentType) != warc.ResultListType {
				t.Errorf("the search's record: %s\n%q, want the result list %q", h.Get(gowarc.ContentType), body, raw.stdout)
			}
		case gowarc.Resource:
			sum := sha1.Sum([]byte(waisd.Alpha))
			if string(body) != waisd.Alpha || h.Get(gowarc.WarcPayloadDigest) != "sha1:"+base32.StdEncoding.EncodeToString(sum[:]) {
				t.Errorf("the document's record: %q, %s", body, h.Get(gowarc.WarcPayloadDigest))
			}
		}
	}
	want := "warcinfo  \nmetadata " + search + " wais\nresource " + doc + " wais"
	if strings.Join(got, "\n") != want {
		t.Errorf("records:\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
}
