package warc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/urlderef/deref/url"
)

// Capture is one archived retrieval: a response, resource or revisit
// record, as an index knows it.
type Capture struct {
	URL      string    // the WARC-Target-URI, as recorded (wget's <...> taken off)
	Time     time.Time // the WARC-Date
	Type     string    // "response", "resource" or "revisit"
	Mime     string    // the record's payload type ("text/html", "application/gopher-menu")
	Status   string    // an HTTP response's status code; "-" for the rest
	Digest   string    // the payload's digest, "sha1:..."; "" when not recorded
	File     string    // the WARC file's path
	Offset   int64     // where the record starts in it
	Protocol string    // WARC-Protocol, where recorded
	// RefersToURL and RefersToTime name the record a revisit repeats the
	// payload of, where it says so.
	RefersToURL  string
	RefersToTime time.Time
}

// Timestamp is the capture's 14-digit time, as replay URLs name it.
func (c Capture) Timestamp() string { return c.Time.UTC().Format(cdxTime) }

// Archive is a set of WARC files read back: every capture, found by URL
// and time. Open builds it.
type Archive struct {
	caps     []Capture // sorted by key, then time
	keys     []string  // caps[i]'s lookup key
	byDigest map[string]int
	// Skipped names what could not be read, each with why: a file, or
	// the rest of a file past a record that is not whole (a truncated
	// gzip member, a Content-Length that lies). The rest is served.
	Skipped []string
}

// lookupKey is how captures are compared: the URL in its one canonical
// form (url.Normalize: scheme and host in lower case, the default port
// dropped, escapes brought to one level). A path's case is kept: a
// Gopher selector or an FTP path that differs only in case is another
// capture.
func lookupKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Normalize().String()
}

// Open reads the WARC files at paths (files, gzip or not, and folders of
// them, a --warc-max-size series included) into an Archive. A WARC file
// whose CDXJ index (IndexName) is beside it is known by its index;
// another is read through once, record by record, never held whole.
func Open(paths ...string) (*Archive, error) {
	a := &Archive{byDigest: map[string]int{}}
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("warc: %w", err)
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		des, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("warc: %w", err)
		}
		for _, de := range des {
			if n := de.Name(); !de.IsDir() && (strings.HasSuffix(n, ".warc") || strings.HasSuffix(n, ".warc.gz")) {
				files = append(files, filepath.Join(p, n))
			}
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("warc: no WARC files in %s", strings.Join(paths, ", "))
	}
	sort.Strings(files)
	for _, f := range files {
		caps, skipped := readCaptures(f)
		a.caps = append(a.caps, caps...)
		a.Skipped = append(a.Skipped, skipped...)
	}
	a.keys = make([]string, len(a.caps))
	for i, c := range a.caps {
		a.keys[i] = lookupKey(c.URL)
	}
	idx := make([]int, len(a.caps))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool {
		ki, kj := a.keys[idx[i]], a.keys[idx[j]]
		if ki != kj {
			return ki < kj
		}
		return a.caps[idx[i]].Time.Before(a.caps[idx[j]].Time)
	})
	caps, keys := make([]Capture, len(idx)), make([]string, len(idx))
	for i, j := range idx {
		caps[i], keys[i] = a.caps[j], a.keys[j]
	}
	a.caps, a.keys = caps, keys
	for i, c := range a.caps {
		if c.Type != "revisit" && c.Digest != "" {
			if j, ok := a.byDigest[c.Digest]; !ok || c.Time.Before(a.caps[j].Time) {
				a.byDigest[c.Digest] = i
			}
		}
	}
	return a, nil
}

// readCaptures reads a WARC file's captures from its CDXJ index where
// one is beside it, else from the file itself.
func readCaptures(path string) ([]Capture, []string) {
	if caps, err := readCDXJ(path); err == nil {
		return caps, nil
	}
	r, err := gowarc.NewWarcFileReader(path, 0, lenient...)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %v", path, err)}
	}
	defer r.Close()
	var caps []Capture
	for {
		rec, off, _, err := r.Next()
		if err == io.EOF {
			return caps, nil
		}
		if err != nil {
			return caps, []string{fmt.Sprintf("%s from byte %d: %v", path, off, err)}
		}
		h := rec.WarcHeader()
		t := rec.Type()
		if t != gowarc.Response && t != gowarc.Resource && t != gowarc.Revisit {
			rec.Close()
			continue
		}
		c := Capture{URL: strings.Trim(h.Get(gowarc.WarcTargetURI), "<>"), Type: t.String(), Mime: h.Get(gowarc.ContentType),
			Status: "-", Digest: h.Get(gowarc.WarcPayloadDigest), File: path, Offset: off, Protocol: h.Get("WARC-Protocol"),
			RefersToURL: strings.Trim(h.Get(gowarc.WarcRefersToTargetURI), "<>")}
		c.Time, _ = time.Parse(time.RFC3339, h.Get(gowarc.WarcDate))
		c.RefersToTime, _ = time.Parse(time.RFC3339, h.Get(gowarc.WarcRefersToDate))
		raw, err := rec.Block().RawBytes()
		if err != nil {
			rec.Close()
			return caps, []string{fmt.Sprintf("%s from byte %d: %v", path, off, err)}
		}
		head := make([]byte, 64<<10)
		n, _ := io.ReadFull(raw, head)
		head = head[:n]
		// The block read through: a record that is not whole (a gzip
		// member cut short, a Content-Length that lies) is no capture.
		rest, err := io.Copy(io.Discard, raw)
		if want, cerr := strconv.ParseInt(h.Get(gowarc.ContentLength), 10, 64); err != nil || cerr == nil && want != int64(n)+rest {
			rec.Close()
			return caps, []string{fmt.Sprintf("%s from byte %d: the record of %s is not whole", path, off, c.URL)}
		}
		if t == gowarc.Response || t == gowarc.Revisit && strings.HasPrefix(c.Mime, "application/http") {
			if i := bytes.Index(head, []byte("\r\n\r\n")); i >= 0 {
				head = head[:i+2]
			}
			c.Status, c.Mime = statusAndType(head)
		}
		rec.Close()
		caps = append(caps, c)
	}
}

// readCDXJ reads the captures of path from its CDXJ index (as Index and
// Options.CDX write it).
func readCDXJ(path string) ([]Capture, error) {
	f, err := os.Open(IndexName(path))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var caps []Capture
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		parts := strings.SplitN(line, " ", 3)
		if len(parts) != 3 {
			continue
		}
		var j struct {
			URL, Mime, Status, Digest, Offset, Filename string
		}
		if err := json.Unmarshal([]byte(parts[2]), &j); err != nil || j.Filename != filepath.Base(path) {
			continue
		}
		t, err := time.Parse(cdxTime, parts[1])
		if err != nil {
			continue
		}
		var off int64
		fmt.Sscan(j.Offset, &off)
		c := Capture{URL: j.URL, Time: t, Type: "resource", Mime: j.Mime, Status: j.Status, File: path, Offset: off}
		if j.Digest != "" {
			c.Digest = "sha1:" + j.Digest
		}
		switch {
		case j.Mime == "warc/revisit":
			c.Type, c.Mime = "revisit", ""
		case j.Status != "-" && j.Status != "":
			c.Type = "response"
		}
		caps = append(caps, c)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return caps, nil
}

// Captures lists the captures of a URL, oldest first.
func (a *Archive) Captures(raw string) []Capture {
	key := lookupKey(raw)
	i := sort.SearchStrings(a.keys, key)
	j := i
	for j < len(a.keys) && a.keys[j] == key {
		j++
	}
	return a.caps[i:j]
}

// Nearest is the capture of a URL nearest to t (the earlier of two as
// near), and whether there is one.
func (a *Archive) Nearest(raw string, t time.Time) (Capture, bool) {
	caps := a.Captures(raw)
	if len(caps) == 0 {
		return Capture{}, false
	}
	i := sort.Search(len(caps), func(i int) bool { return !caps[i].Time.Before(t) })
	switch {
	case i == len(caps):
		return caps[i-1], true
	case i == 0:
		return caps[0], true
	}
	if t.Sub(caps[i-1].Time) <= caps[i].Time.Sub(t) {
		return caps[i-1], true
	}
	return caps[i], true
}

// URLs calls fn with each URL the archive holds, in key order, and the
// number of its captures, until fn returns false.
func (a *Archive) URLs(fn func(url string, captures int) bool) {
	for i := 0; i < len(a.caps); {
		j := i
		for j < len(a.caps) && a.keys[j] == a.keys[i] {
			j++
		}
		if !fn(a.caps[i].URL, j-i) {
			return
		}
		i = j
	}
}

// Payload is a capture's payload: for an HTTP response its head too.
type Payload struct {
	io.ReadCloser
	// Head is an HTTP response's head (status line and fields, as
	// received); nil for the other records.
	Head *http.Response
	// From is the record the payload was read from: the capture's own,
	// or for a revisit the record it repeats.
	From Capture
}

// Open reads a capture's payload, a revisit's from the record it
// repeats (by digest, else by the URL and time it names), in this
// archive's files.
func (a *Archive) Open(c Capture) (*Payload, error) {
	from := c
	if c.Type == "revisit" {
		i, ok := a.byDigest[c.Digest]
		switch {
		case ok:
			from = a.caps[i]
		case c.RefersToURL != "":
			o, found := a.Nearest(c.RefersToURL, c.RefersToTime)
			if !found || o.Type == "revisit" {
				return nil, fmt.Errorf("warc: %s: the record this revisit repeats is not in the archive", c.URL)
			}
			from = o
		default:
			return nil, fmt.Errorf("warc: %s: the record this revisit repeats is not in the archive", c.URL)
		}
	}
	r, err := gowarc.NewWarcFileReader(from.File, from.Offset, lenient...)
	if err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	rec, _, _, err := r.Next()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("warc: %s at %d: %w", from.File, from.Offset, err)
	}
	raw, err := rec.Block().RawBytes()
	if err != nil {
		rec.Close()
		r.Close()
		return nil, fmt.Errorf("warc: %w", err)
	}
	p := &Payload{ReadCloser: closers{raw, rec, r}, From: from}
	if rec.Type() == gowarc.Response || strings.HasPrefix(rec.WarcHeader().Get(gowarc.ContentType), "application/http") {
		br := bufio.NewReader(raw)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("warc: %s: the recorded response: %w", from.URL, err)
		}
		p.Head = resp
		p.ReadCloser = closers{resp.Body, rec, r} // de-chunked, where a reader recorded it chunked (wget)
	}
	return p, nil
}

// closers is a record's payload reader, closing its record and file.
type closers struct {
	io.Reader
	rec gowarc.WarcRecord
	f   *gowarc.WarcFileReader
}

func (c closers) Close() error {
	return errors.Join(c.rec.Close(), c.f.Close())
}

// lenient reads other tools' archives as they are written: wget 1.21
// writes WARC-Target-URI as <URL>, which WARC 1.0's grammar has and 1.1's
// does not; gowarc would drop the field.
var lenient = []gowarc.WarcRecordOption{gowarc.WithSpecViolationPolicy(gowarc.ErrIgnore)}
