//go:build interop

package interop

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/fetch/warc"
)

// warcioRecord is one line of internal/interop/warcio/payloads.js: a
// record as warcio.js, the field's own reader, parses it.
type warcioRecord struct {
	Offset       int64  `json:"offset"`
	Type         string `json:"type"`
	URI          string `json:"uri"`
	Protocol     string `json:"protocol"`
	ConcurrentTo string `json:"concurrentTo"`
	ID           string `json:"id"`
	RefersTo     string `json:"refersTo"`
	// PayloadDigest is the record's WARC-Payload-Digest, SHA1 the digest
	// of the payload warcio.js read, in the same form.
	PayloadDigest string `json:"payloadDigest"`
	SHA1          string `json:"sha1"`
	SHA256        string `json:"sha256"`
	Length        int64  `json:"length"`
}

// gopherWire is a text file as an RFC 1436 server sends it: CRLF line
// ends, a "." starting a line doubled, and the "." line at the end.
func gopherWire(lf []byte) []byte {
	var b bytes.Buffer
	for _, l := range strings.SplitAfter(string(lf), "\n") {
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, ".") {
			b.WriteByte('.')
		}
		b.WriteString(strings.TrimSuffix(l, "\n") + "\r\n")
	}
	b.WriteString(".\r\n")
	return b.Bytes()
}

// readWithWarcio parses WARC files with warcio.js.
func readWithWarcio(t *testing.T, files ...string) []warcioRecord {
	t.Helper()
	cmd := exec.Command("node", append([]string{filepath.Join("warcio", "payloads.js")}, files...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+env(t, "DEREF_INTEROP_WARCIO"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("warcio.js: %v\n%s", err, stderr.Bytes())
	}
	var recs []warcioRecord
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r warcioRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		// Every payload is the one its digest names (a revisit record's
		// is elsewhere).
		if r.PayloadDigest != "" && r.Type != "revisit" && r.PayloadDigest != r.SHA1 {
			t.Errorf("%s record of %s: WARC-Payload-Digest %s, its payload's %s", r.Type, r.URI, r.PayloadDigest, r.SHA1)
		}
		recs = append(recs, r)
	}
	return recs
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// TestWARCMirror mirrors the pub folder from vsftpd, pygopherd,
// gophernicus and nginx with a WARC recorder, and reads the WARC file
// with warcio.js: every record parses, a warcinfo record comes first,
// every file of the tree is a resource record (a response record over
// HTTP) whose payload is byte-equal to the file, or for a Gopher text item
// to what the server sent of it (CRLF lines, as gophernicus sends them,
// with the "." line as RFC 1436 has it, or the file as it is, as
// pygopherd sends it), every listing is recorded too, each FTP file's control
// conversation is a metadata record linked to it, and each HTTP response
// has its request.
func TestWARCMirror(t *testing.T) {
	tree := filepath.Join(env(t, "DEREF_INTEROP_TREE"), "pub")
	want := map[string]bool{} // payload digests of the tree's files
	wantLF := map[string]bool{}
	files := treeFiles(t, tree)
	for _, rel := range files {
		b, _ := os.ReadFile(filepath.Join(tree, rel))
		want[sha(b)] = true
		lf := bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
		wantLF[sha(lf)] = true
		// A text item as the server sent it, which the record holds: as
		// RFC 1436 has it, or with CRLF lines only (gophernicus 3.1, which
		// ends it by closing the connection).
		wantLF[sha(gopherWire(lf))] = true
		wantLF[sha(bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n")))] = true
	}
	ftp := ftpServers(t)
	gopher := gopherServers(t)
	for name, src := range map[string]string{
		"vsftpd":      ftp["vsftpd"] + "/pub/",
		"pygopherd":   gopher["pygopherd"] + "/1/pub",
		"gophernicus": gopher["gophernicus"] + "/1/pub",
		"nginx":       env(t, "DEREF_INTEROP_HTTP") + "/pub/",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := warc.Create(filepath.Join(dir, name), warc.Options{Software: "deref/interop", CDX: true})
			if err != nil {
				t.Fatal(err)
			}
			rec := &warc.Recorder{W: w}
			c := client()
			c.Recorder = rec
			rep, err := mirror.Run(context.Background(), c, src, filepath.Join(dir, "copy"), mirror.Options{})
			if err != nil || rep.Failed != 0 {
				t.Fatalf("mirror: %v %+v", err, rep)
			}
			if err := w.Close(); err != nil || rec.Err() != nil {
				t.Fatal(err, rec.Err())
			}
			recs := readWithWarcio(t, filepath.Join(dir, name+".warc.gz"))
			if len(recs) == 0 || recs[0].Type != "warcinfo" {
				t.Fatalf("records %+v", recs)
			}
			ids := map[string]warcioRecord{}
			matched, listings, conversations, requests := 0, 0, 0, 0
			for _, r := range recs[1:] {
				ids[r.ID] = r
				switch {
				case (r.Type == "response" || r.Type == "revisit") && strings.HasSuffix(r.URI, "/"):
					listings++ // an index page
				case r.Type == "response":
					if want[r.SHA256] {
						matched++
					} else {
						t.Errorf("%s: payload of %d bytes matches no file of the tree", r.URI, r.Length)
					}
				case r.Type == "request":
					requests++
					if ids[r.ConcurrentTo].Type != "response" || ids[r.ConcurrentTo].URI != r.URI {
						t.Errorf("%s: the request goes with %q", r.URI, r.ConcurrentTo)
					}
				case (r.Type == "resource" || r.Type == "revisit") && (strings.HasSuffix(r.URI, "/") || strings.Contains(r.URI, "/1/")):
					listings++
				case r.Type == "revisit":
					matched++ // a payload met before: the record it refers to was checked
				case r.Type == "resource":
					if want[r.SHA256] || name != "vsftpd" && wantLF[r.SHA256] {
						matched++
					} else {
						t.Errorf("%s: payload of %d bytes matches no file of the tree", r.URI, r.Length)
					}
					if wantProto := map[bool]string{true: "ftp", false: "gopher"}[name == "vsftpd"]; r.Protocol != wantProto {
						t.Errorf("%s: WARC-Protocol %q", r.URI, r.Protocol)
					}
				case r.Type == "metadata":
					conversations++
					if ids[r.ConcurrentTo].Type != "resource" {
						t.Errorf("%s: the conversation goes with %q", r.URI, r.ConcurrentTo)
					}
				default:
					t.Errorf("record %+v", r)
				}
			}
			// Every CDXJ line leads where warcio.js found the record of its URL.
			at := map[string]string{}
			for _, r := range recs {
				at[fmt.Sprint(r.Offset)] = r.URI
			}
			cdx, err := os.ReadFile(filepath.Join(dir, name+".cdxj"))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(cdx)), "\n")
			for _, l := range lines {
				parts := strings.SplitN(l, " ", 3)
				var j struct{ URL, Offset string }
				if len(parts) != 3 || json.Unmarshal([]byte(parts[2]), &j) != nil || at[j.Offset] != j.URL {
					t.Errorf("CDXJ line %q: warcio.js has %q at that offset", l, at[j.Offset])
				}
			}
			if len(lines) != matched+listings {
				t.Errorf("%d CDXJ lines for %d records", len(lines), matched+listings)
			}
			if matched != len(files) || listings == 0 {
				t.Errorf("%d files matched of %d, %d listings", matched, len(files), listings)
			}
			if name == "nginx" && requests != matched+listings {
				t.Errorf("%d requests for %d responses", requests, matched+listings)
			}
			if name == "vsftpd" && conversations < len(files) {
				t.Errorf("%d control conversations for %d files", conversations, len(files))
			}
		})
	}
}

// TestWARCNews records INN's articles: warcio.js reads each payload as
// the article deref read.
func TestWARCNews(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "news"), warc.Options{Software: "deref/interop"})
	if err != nil {
		t.Fatal(err)
	}
	rec := &warc.Recorder{W: w}
	c := newsClient(t)
	c.Recorder = rec
	base := env(t, "DEREF_INTEROP_NEWS")
	read := map[string]string{}
	for _, p := range manifest(t) {
		u := base + "/local.test/" + p.number
		resp, err := c.Get(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		read[u] = sha(b)
		if !bytes.Equal(bodyOf(t, b), p.body) {
			t.Errorf("%s: body differs from what was posted", u)
		}
	}
	w.Close()
	n := 0
	for _, r := range readWithWarcio(t, filepath.Join(dir, "news.warc.gz"))[1:] {
		if r.Type != "resource" || r.Protocol != "nntp" || read[r.URI] != r.SHA256 {
			t.Errorf("record %+v", r)
		}
		n++
	}
	if n != len(read) {
		t.Errorf("%d records for %d articles", n, len(read))
	}
}

// TestWgetDedup: a site archived by wget --warc-file --warc-cdx, then by
// deref crawl given wget's CDX file (--warc-dedup) and writing its
// archive uncompressed (--no-warc-compression): warcio.js reads both
// files, and every URL both fetched is a revisit record in deref's,
// referring to a record of wget's with the same payload.
func TestWgetDedup(t *testing.T) {
	bin := buildDeref(t)
	site := env(t, "DEREF_INTEROP_HTTP") + "/acc/"
	dir := t.TempDir()
	runTool(t, "wget", "-q", "-r", "-np", "-P", filepath.Join(dir, "w"), "--warc-file="+filepath.Join(dir, "wget"), "--warc-cdx", "--no-warc-keep-log", site)
	runTool(t, bin, "crawl", "-s", "--no-netrc", "-r", "-np", "-P", filepath.Join(dir, "d"), "--warc-file", filepath.Join(dir, "deref"),
		"--warc-dedup", filepath.Join(dir, "wget.cdx"), "--no-warc-compression", "--warc-header", "operator: interop", site)
	payload := map[string]string{} // wget's record ID -> its payload's SHA-256
	fetched := map[string]string{} // URL -> the payload wget fetched
	for _, r := range readWithWarcio(t, filepath.Join(dir, "wget.warc.gz")) {
		if r.Type == "response" {
			payload[r.ID], fetched[r.URI] = r.SHA256, r.SHA256
		}
	}
	if len(fetched) < 5 {
		t.Fatalf("wget archived %d URLs", len(fetched))
	}
	revisits := 0
	for _, r := range readWithWarcio(t, filepath.Join(dir, "deref.warc")) {
		want, both := fetched[r.URI]
		switch {
		case r.Type == "revisit" && (!both || payload[r.RefersTo] != want):
			t.Errorf("%s: a revisit record of %s (payload %.12s), wget's %.12s", r.URI, r.RefersTo, payload[r.RefersTo], want)
		case r.Type == "revisit":
			revisits++
		case r.Type == "response" && both:
			t.Errorf("%s: written again, not a revisit record", r.URI)
		}
	}
	if revisits == 0 {
		t.Error("no revisit records")
	}
	// Replayed together, each of deref's revisit records gives the
	// payload of wget's record it refers to.
	a, err := warc.Open(filepath.Join(dir, "wget.warc.gz"), filepath.Join(dir, "deref.warc"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	replayed := 0
	a.URLs(func(u string, n int) bool {
		for _, c := range a.Captures(u) {
			if c.Type != "revisit" {
				continue
			}
			p, err := a.Open(c)
			if err != nil {
				t.Errorf("%s: %v", u, err)
				continue
			}
			b, _ := io.ReadAll(p)
			p.Close()
			if sha(b) != fetched[u] {
				t.Errorf("%s: the revisit replays %d bytes that are not wget's payload", u, len(b))
			}
			replayed++
		}
		return true
	})
	if replayed == 0 {
		t.Error("no revisit replayed")
	}
}
