package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nlnwa/gowarc"

	"github.com/urlderef/deref/internal/testserver/ftpd"
	"github.com/urlderef/deref/internal/testserver/gopherd"
	"github.com/urlderef/deref/internal/testserver/nntpd"
)

// TestWARCFile: --warc-file writes a warcinfo record (the command line,
// password hidden), a resource record per object and listing with its
// protocol, an FTP file's control conversation (password hidden) linked
// to it, and a revisit record for a payload written already; the objects
// still reach their files.
func TestWARCFile(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, "pub"), 0o755)
	os.WriteFile(filepath.Join(root, "pub", "a.txt"), []byte("alpha\n"), 0o644)
	fs, err := ftpd.Start(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	gs := &gopherd.Server{Root: root}
	if err := gs.Start(); err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	ns := nntpd.New()
	ns.AddGroup("local.test", "")
	ns.Post("local.test", "<a1@test>", []string{"From: A <a@test>", "Subject: first"}, "Hello.\n")
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	defer ns.Close()

	dir := t.TempDir()
	name := filepath.Join(dir, "crawl")
	ftpFile := "ftp://alice:s3cret@" + fs.Addr() + "/pub/a.txt;type=i"
	r := runDeref(t, "", "--warc-file", name, "--output-dir", dir, "-o", "a.txt", "-o", "pub.txt", "-o", "g.txt", "-o", "article",
		ftpFile, "ftp://alice:s3cret@"+fs.Addr()+"/pub/", "gopher://"+gs.Addr()+"/0/pub/a.txt", "nntp://"+ns.Addr()+"/local.test/1")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	raw, _ := os.ReadFile(name + ".warc.gz")
	if len(raw) == 0 {
		t.Fatal("no WARC file")
	}
	var got []string
	var ids = map[string]string{}
	var conversation, info string
	for _, rec := range readWARC(t, name+".warc.gz") {
		h, body := rec.h, rec.body
		line := rec.typ.String() + " " + h.Get(gowarc.WarcTargetURI) + " " + h.Get("WARC-Protocol")
		got = append(got, strings.TrimSpace(line))
		switch rec.typ {
		case gowarc.Warcinfo:
			info = string(body)
		case gowarc.Metadata:
			if ids[h.Get(gowarc.WarcConcurrentTo)] == "ftp://alice:xxxxx@"+fs.Addr()+"/pub/a.txt" {
				conversation = string(body)
			}
		case gowarc.Resource:
			ids[h.Get(gowarc.WarcRecordID)] = h.Get(gowarc.WarcTargetURI)
			// Each as its server sent it: FTP's file, Gopher's text item
			// with its CRLFs and its "." line.
			want := map[string]string{"ftp": "alpha\n", "gopher": "alpha\r\n.\r\n"}[h.Get("WARC-Protocol")]
			if strings.HasSuffix(h.Get(gowarc.WarcTargetURI), "a.txt") && string(body) != want {
				t.Errorf("%s: %q, want %q", h.Get(gowarc.WarcTargetURI), body, want)
			}
		}
	}
	joined := strings.Join(got, "\n")
	for _, want := range []string{
		"warcinfo",
		"resource ftp://alice:xxxxx@" + fs.Addr() + "/pub/a.txt ftp", // fetched with ;type=i, known without it
		"metadata ftp://alice:xxxxx@" + fs.Addr() + "/pub/a.txt",
		"resource ftp://alice:xxxxx@" + fs.Addr() + "/pub/ ftp",
		"resource gopher://" + gs.Addr() + "/0/pub/a.txt gopher",
		"resource nntp://" + ns.Addr() + "/local.test/1 nntp",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("no record %q in\n%s", want, joined)
		}
	}
	if strings.Contains(info+conversation+joined, "s3cret") {
		t.Error("the password is in the WARC file")
	}
	if !strings.Contains(conversation, "> RETR a.txt") || !strings.Contains(conversation, "> USER alice") {
		t.Errorf("conversation:\n%s", conversation)
	}
	if !strings.Contains(info, "software: deref/") || !strings.Contains(info, "--warc-file") {
		t.Errorf("warcinfo:\n%s", info)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "alpha\n" {
		t.Errorf("a.txt: %q", b)
	}
}

// TestWgetWARCFlags: wget's WARC flags do what wget's do, in deref URL,
// mirror and crawl alike: --no-warc-compression writes NAME.warc,
// --warc-header adds a line to the warcinfo record, --warc-tempdir is
// taken, --no-warc-keep-log is deref's way already; --no-warc-digests
// beside --warc-dedup, or any of them without --warc-file, is refused.
func TestWgetWARCFlags(t *testing.T) {
	gs := alphaHole(t)
	u := "gopher://" + gs.Addr() + "/0/a.txt"
	for _, cmd := range [][]string{{}, {"crawl", "-P"}} {
		dir := t.TempDir()
		name := filepath.Join(dir, "plain")
		args := append(append([]string(nil), cmd...), dir, "--warc-file", name, "--no-warc-compression", "--warc-header", "operator: Archive Team",
			"--warc-tempdir", dir, "--no-warc-keep-log", u)
		if len(cmd) == 0 {
			args = append([]string{"-o", filepath.Join(dir, "a.txt")}, args[1:]...)
		}
		r := runDeref(t, "", args...)
		if r.code != 0 {
			t.Fatalf("deref %q: exit %d: %s", args, r.code, r.stderr)
		}
		raw, err := os.ReadFile(name + ".warc")
		if err != nil || !strings.HasPrefix(string(raw), "WARC/1.1\r\n") {
			t.Fatalf("deref %q: %s.warc: %q %v", args, name, raw[:min(len(raw), 20)], err)
		}
		recs := readWARC(t, name+".warc")
		if len(recs) != 2 || !strings.Contains(string(recs[0].body), "\r\noperator: Archive Team\r\n") ||
			recs[1].h.Get(gowarc.WarcTargetURI) != u || string(recs[1].body) != "alpha\r\n.\r\n" {
			t.Errorf("deref %q: %d records, warcinfo %q", args, len(recs), recs[0].body)
		}
	}
	for _, args := range [][]string{
		{"--warc-file", "x", "--no-warc-digests", "--warc-dedup", "x.cdxj", u},
		{"--no-warc-compression", u},
		{"crawl", "--warc-header", "a: b", u},
	} {
		r := runDeref(t, "", args...)
		if r.code != 1 || !strings.Contains(r.stderr, "--warc") || !strings.Contains(r.stderr, "-h") { // a usage error
			t.Errorf("deref %q: exit %d: %s", args, r.code, r.stderr)
		}
	}
}

// TestWARCWholeObjects: an archived file is recorded whole, never the
// end of it that a resume fetches: deref mirror refetches a NAME.part an
// earlier run left, and deref -C - fetches from the first byte, each
// file's resource record then holding all of it (with FTP REST it held
// only the part after the offset, claiming to be the file). And it is
// archived though a copy is there: -N, -nc and the mirror's --only-newer
// are off, saying so.
func TestWARCWholeObjects(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, "pub"), 0o755)
	whole := []byte(strings.Repeat("0123456789abcdef", 40000))
	os.WriteFile(filepath.Join(root, "pub", "big.bin"), whole, 0o644)
	fs, err := ftpd.Start(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	u := "ftp://" + fs.Addr() + "/pub/big.bin;type=i"
	for _, tc := range []struct {
		name string
		args func(dir string) []string
		part string // the file the run finds
		n    int    // its length
		warn string // what deref says it turned off
	}{
		{"mirror", func(dir string) []string { return []string{"mirror", "ftp://" + fs.Addr() + "/pub/", dir} }, "big.bin.part", 100000, ""},
		{"-C -", func(dir string) []string { return []string{"-C", "-", "-o", filepath.Join(dir, "big.bin"), u} }, "big.bin", 100000, ""},
		// A copy as new as the server's, which -N and --only-newer leave
		// and -nc never replaces: archived all the same, as wget does.
		{"-N", func(dir string) []string { return []string{"-N", "-o", filepath.Join(dir, "big.bin"), u} }, "big.bin", len(whole), "-N (--only-newer)"},
		{"-nc", func(dir string) []string { return []string{"-nc", "-o", filepath.Join(dir, "big.bin"), u} }, "big.bin", len(whole), "-nc (--skip-existing)"},
		{"-z", func(dir string) []string { return []string{"-z", "2100-01-01", "-o", filepath.Join(dir, "big.bin"), u} }, "big.bin", len(whole), "-z (--time-cond)"},
		{"mirror --only-newer", func(dir string) []string {
			return []string{"mirror", "--only-newer", "ftp://" + fs.Addr() + "/pub/", dir}
		}, "big.bin", len(whole), "--only-newer"},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, tc.part), whole[:tc.n], 0o644)
		name := filepath.Join(t.TempDir(), "a")
		args := tc.args(dir)
		if args[0] == "mirror" {
			args = append([]string{"mirror", "--warc-file", name}, args[1:]...)
		} else {
			args = append([]string{"--warc-file", name}, args...)
		}
		r := runDeref(t, "", args...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, r.code, r.stderr)
		}
		if tc.warn != "" && !strings.Contains(r.stderr, "WARC output does not work with "+tc.warn+": it is off") {
			t.Errorf("%s: said %q", tc.name, r.stderr)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "big.bin")); !bytes.Equal(b, whole) {
			t.Errorf("%s: big.bin has %d bytes of %d", tc.name, len(b), len(whole))
		}
		found := false
		for _, rec := range readWARC(t, name+".warc.gz") {
			// Known by its URL: fetched verbatim (;type=i), recorded
			// without the typecode, as wget and Heritrix record it.
			if rec.typ == gowarc.Resource && strings.HasSuffix(rec.h.Get(gowarc.WarcTargetURI), "/big.bin") {
				found = true
				if !bytes.Equal(rec.body, whole) {
					t.Errorf("%s: the record holds %d bytes of %d", tc.name, len(rec.body), len(whole))
				}
			}
		}
		if !found {
			t.Errorf("%s: no record of big.bin", tc.name)
		}
	}
}

// TestWARCVerbatimFTP: with --warc-file, an FTP text file whose URL
// names no type comes in TYPE I, so that its record (and the file) holds
// the server's bytes, CRLFs and all, as wget archives it; without, deref
// asks TYPE A as RFC 1738 has it and writes the lines with LF.
func TestWARCVerbatimFTP(t *testing.T) {
	root := t.TempDir()
	text := "line one\r\nline two\r\n"
	os.WriteFile(filepath.Join(root, "crlf.txt"), []byte(text), 0o644)
	fs, err := ftpd.Start(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	u := "ftp://" + fs.Addr() + "/crlf.txt"
	dir := t.TempDir()
	if r := runDeref(t, "", "-o", filepath.Join(dir, "plain.txt"), u); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "plain.txt")); string(b) != "line one\nline two\n" {
		t.Errorf("without --warc-file: %q", b)
	}
	name := filepath.Join(dir, "a")
	if r := runDeref(t, "", "--warc-file", name, "-o", filepath.Join(dir, "archived.txt"), u); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "archived.txt")); string(b) != text {
		t.Errorf("with --warc-file: %q", b)
	}
	recs := readWARC(t, name+".warc.gz")
	if len(recs) < 2 || recs[1].typ != gowarc.Resource || string(recs[1].body) != text {
		t.Errorf("%d records; the first after warcinfo %v %q", len(recs), recs[min(1, len(recs)-1)].typ, recs[min(1, len(recs)-1)].body)
	}
}

// warcRecord is a record read back: its type, its header and its block.
type warcRecord struct {
	typ  gowarc.RecordType
	h    *gowarc.WarcFields
	body []byte
}

// readWARC reads every record of a WARC file.
func readWARC(t *testing.T, path string) []warcRecord {
	t.Helper()
	rd, err := gowarc.NewWarcFileReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var recs []warcRecord
	for {
		rec, _, _, err := rd.Next()
		if err == io.EOF {
			return recs
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := rec.Block().RawBytes()
		body, _ := io.ReadAll(b)
		recs = append(recs, warcRecord{rec.Type(), rec.WarcHeader(), body})
		rec.Close()
	}
}

// TestRedactArgs: the command line a warcinfo record holds hides every
// password, however the flag is spelt: attached and bundled short flags,
// -H credentials, URLs.
func TestRedactArgs(t *testing.T) {
	for _, tt := range []struct {
		cmd       command
		args, out []string
	}{
		{cmdGet, []string{"-ualice:pw1", "u"}, []string{"-ualice:***", "u"}},
		{cmdGet, []string{"-su", "alice:pw1", "u"}, []string{"-su", "alice:***", "u"}},
		{cmdGet, []string{"--user=alice:pw1", "--user", "bob:pw2", "u"}, []string{"--user=alice:***", "--user", "bob:***", "u"}},
		{cmdCrawl, []string{"-u", "alice", "u"}, []string{"-u", "alice", "u"}},
		{cmdGet, []string{"-H", "Authorization: Basic YWxpY2U6cHcx", "-H", "X-Other: kept"}, []string{"-H", "Authorization: Basic ***", "-H", "X-Other: kept"}},
		{cmdGet, []string{"--header=proxy-authorization:Bearer tok1", "-HAuthorization:tok2"}, []string{"--header=proxy-authorization: Bearer ***", "-HAuthorization: ***"}},
		{cmdGet, []string{"ftp://bob:pw3@h/x", "--proxy", "http://u:pw4@h:1/"}, []string{"ftp://bob:xxxxx@h/x", "--proxy", "http://u:xxxxx@h:1/"}},
		{cmdMirror, []string{"-su", "alice:pw1", "ftp://h/", "dir"}, []string{"-su", "alice:***", "ftp://h/", "dir"}},
		{cmdGet, []string{"--user=bob", "--password", "pw7", "--password=pw8"}, []string{"--user=bob", "--password", "***", "--password=***"}},
		{cmdGet, []string{"-b", "sid=1; k=2", "--cookie=sid=3", "-H", "Cookie: a=4; b=5"}, []string{"-b", "***", "--cookie=***", "-H", "Cookie: ***"}},
		{cmdGet, []string{"--url", "ftp://bob:pw5@h/x", "--url=ftp://bob:pw6@h/y"}, []string{"--url", "ftp://bob:xxxxx@h/x", "--url=ftp://bob:xxxxx@h/y"}},
		{cmdCrawl, []string{"--oauth2-bearer", "tok9", "--proxy-user", "p:pw10", "--proxy-user=p:pw11"}, []string{"--oauth2-bearer", "***", "--proxy-user", "***", "--proxy-user=***"}},
		{cmdGet, []string{"-U", "p:pw12"}, []string{"-U", "***"}},
		{cmdCrawl, []string{"-U", "agent/1", "--header", "Authorization: Basic YWxpY2U6cHcx"}, []string{"-U", "agent/1", "--header", "Authorization: Basic ***"}}, // -U is wget's user agent in crawl
	} {
		if got := redactArgs(tt.cmd, tt.args); strings.Join(got, "|") != strings.Join(tt.out, "|") {
			t.Errorf("%q: %q, want %q", tt.args, got, tt.out)
		}
	}
}

// TestIndexCommand: deref index writes the index --warc-cdx writes, on
// standard output.
func TestIndexCommand(t *testing.T) {
	gs := alphaHole(t)
	dir := t.TempDir()
	name := filepath.Join(dir, "x")
	if r := runDeref(t, "", "crawl", "-q", "--warc-file", name, "--warc-cdx", "gopher://"+gs.Addr()+"/1/"); r.code != 0 {
		t.Fatalf("crawl: exit %d: %s", r.code, r.stderr)
	}
	want, _ := os.ReadFile(name + ".cdxj")
	r := runDeref(t, "", "index", name+".warc.gz")
	if r.code != 0 || len(want) == 0 || r.stdout != string(want) {
		t.Errorf("exit %d: %q\nwant %q (%s)", r.code, r.stdout, want, r.stderr)
	}
	if r := runDeref(t, "", "index", filepath.Join(dir, "none.warc.gz")); r.code != 1 || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("a missing file: exit %d, %q", r.code, r.stderr)
	}
}

// alphaHole serves a folder holding a.txt ("alpha\n") over Gopher for
// the test's length.
func alphaHole(t *testing.T) *gopherd.Server {
	t.Helper()
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o644)
	gs := &gopherd.Server{Root: root}
	if err := gs.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gs.Close() })
	return gs
}
