package warc

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// cdxEntry is one record as its index line says it.
type cdxEntry struct {
	url, mime, status, digest, file string
	protocol                        string // WARC-Protocol, where the record has one
	date                            time.Time
	offset                          int64
	revisit                         bool
}

// cdxTime is the 14-digit timestamp of CDX lines.
const cdxTime = "20060102150405"

// writeIndexes writes a CDXJ file beside each WARC file of this writer.
func (w *Writer) writeIndexes() error {
	byFile := map[string][]cdxEntry{}
	for _, e := range w.index {
		byFile[e.file] = append(byFile[e.file], e)
	}
	for file, entries := range byFile {
		if err := writeIndex(filepath.Join(w.dir, file), entries, w.recordOffsets(file)); err != nil {
			return err
		}
	}
	return nil
}

// writeIndex writes the CDXJ file of the WARC file at path: sorted by
// SURT key and time, each line's length the record's bytes in the file
// (up to the next record, or the file's end); offsets are where all its
// records start, sorted.
func writeIndex(path string, entries []cdxEntry, offsets []int64) error {
	lines, err := indexLines(path, entries, offsets)
	if err != nil {
		return err
	}
	// Through a temporary name: a disk that fills leaves no index cut short.
	name := IndexName(path)
	tmp := name + ".part"
	err = os.WriteFile(tmp, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("warc: %w", err)
	}
	return nil
}

// indexLines are the CDXJ lines of the WARC file at path, sorted, each
// naming the file by its base name.
func indexLines(path string, entries []cdxEntry, offsets []int64) ([]string, error) {
	return indexLinesAs(path, filepath.Base(path), entries, offsets)
}

// indexLinesAs is indexLines with the file named file in each line.
func indexLinesAs(path, file string, entries []cdxEntry, offsets []int64) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("warc: indexing %s: %w", file, err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].offset < entries[j].offset })
	var lines []string
	for _, e := range entries {
		end := st.Size()
		if i := sort.Search(len(offsets), func(i int) bool { return offsets[i] > e.offset }); i < len(offsets) {
			end = offsets[i]
		}
		lines = append(lines, cdxjLine(e, file, end))
	}
	sort.Strings(lines)
	return lines, nil
}

// IndexName is the name of the CDXJ index of the WARC file at path:
// NAME.cdxj for NAME.warc.gz.
func IndexName(path string) string {
	return strings.TrimSuffix(strings.TrimSuffix(path, ".gz"), ".warc") + ".cdxj"
}

// Index writes the CDXJ index of a finished WARC file, as a Writer with
// Options.CDX writes it, from the records the file holds: for a file whose
// writer stopped before it could (a crawl killed and resumed).
func Index(path string) error {
	entries, offsets, err := scanIndex(path)
	if err != nil {
		return err
	}
	return writeIndex(path, entries, offsets)
}

// WriteIndex writes the CDXJ index of the WARC files at paths to w, one
// sorted index of them all, as deref index does: what Options.CDX
// writes beside each file. A WARC file whose index is beside it
// (IndexName), no older than the file, is taken by that index; a path
// ending in .cdxj is such an index, given by itself. The indexes are
// merged as they are read, a line of each at a time: the workers of a
// shared crawl, each writing its own series, make one index so.
func WriteIndex(w io.Writer, paths ...string) error {
	var srcs []*indexSource
	defer func() {
		for _, s := range srcs {
			if s.f != nil {
				s.f.Close()
			}
		}
	}()
	for _, p := range paths {
		s, err := openIndexSource(p)
		if err != nil {
			return err
		}
		if err := s.next(); err != nil {
			return err
		}
		if s.ok {
			srcs = append(srcs, s)
		}
	}
	h := indexHeap(srcs)
	heap.Init(&h)
	bw := bufio.NewWriter(w)
	for h.Len() > 0 {
		s := h[0]
		bw.WriteString(s.line + "\n")
		if err := s.next(); err != nil {
			return err
		}
		if s.ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return bw.Flush()
}

// indexSource is a sorted index being read: a CDXJ file, or the lines of
// a WARC file read through.
type indexSource struct {
	f     *os.File
	sc    *bufio.Scanner
	lines []string
	path  string
	line  string
	ok    bool
}

// openIndexSource opens path's index: the file itself (.cdxj), the one
// beside it, or its lines.
func openIndexSource(path string) (*indexSource, error) {
	cdxj := path
	if !strings.HasSuffix(path, ".cdxj") {
		cdxj = IndexName(path)
		wi, werr := os.Stat(path)
		ci, cerr := os.Stat(cdxj)
		// An empty index is never a WARC file's with captures: it is
		// the one the shell has just made for this very output ("deref
		// index hole.warc.gz > hole.cdxj"), or one cut short.
		if werr != nil || cerr != nil || ci.ModTime().Before(wi.ModTime()) || ci.Size() == 0 {
			entries, offsets, err := scanIndex(path)
			if err != nil {
				return nil, err
			}
			lines, err := indexLines(path, entries, offsets)
			if err != nil {
				return nil, err
			}
			sort.Strings(lines)
			return &indexSource{lines: lines, path: path}, nil
		}
	}
	f, err := os.Open(cdxj)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	return &indexSource{f: f, sc: sc, path: cdxj}, nil
}

// next reads the source's next line into s.line; s.ok is false at its end.
func (s *indexSource) next() error {
	if s.sc == nil {
		s.ok = len(s.lines) > 0
		if s.ok {
			s.line, s.lines = s.lines[0], s.lines[1:]
		}
		return nil
	}
	for s.sc.Scan() {
		if l := s.sc.Text(); l != "" {
			if s.ok && l < s.line {
				return fmt.Errorf("warc: %s is not sorted (a CDXJ index is)", s.path)
			}
			s.line, s.ok = l, true
			return nil
		}
	}
	s.ok = false
	if err := s.sc.Err(); err != nil {
		return fmt.Errorf("warc: %s: %w", s.path, err)
	}
	return nil
}

// indexHeap orders sources by their current lines.
type indexHeap []*indexSource

func (h indexHeap) Len() int           { return len(h) }
func (h indexHeap) Less(i, j int) bool { return h[i].line < h[j].line }
func (h indexHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *indexHeap) Push(x any)        { *h = append(*h, x.(*indexSource)) }
func (h *indexHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	*h = old[:len(old)-1]
	return s
}

// scanIndex reads the WARC file at path through for its index entries
// and where each record starts. A record that is not whole (a gzip
// member cut short, a Content-Length that lies) ends the reading: the
// entries before it are returned with the error naming it.
func scanIndex(path string) ([]cdxEntry, []int64, error) {
	var entries []cdxEntry
	var offsets []int64
	err := scanEach(path, func(e cdxEntry, _ int64) { entries = append(entries, e) }, func(off int64) { offsets = append(offsets, off) })
	return entries, offsets, err
}

// scanEach reads the WARC file at path through, record by record, never
// holding one: it calls each with every index entry and where the
// entry's record ends (the next record's start, or the file's end), and
// at with where every record starts. A record that is not whole ends the
// reading, with an error naming it.
func scanEach(path string, each func(e cdxEntry, end int64), at func(off int64)) error {
	r, err := openReader(path, 0)
	if err != nil {
		return fmt.Errorf("warc: indexing %s: %w", path, err)
	}
	defer r.Close()
	var pending *cdxEntry
	flush := func(end int64) {
		if pending != nil {
			each(*pending, end)
			pending = nil
		}
	}
	for {
		rec, off, _, err := r.Next()
		if err == io.EOF {
			if size, serr := fileSize(path); serr == nil {
				flush(size)
			}
			return nil
		}
		if err != nil {
			flush(off)
			return fmt.Errorf("warc: %s from byte %d: %w", path, off, err)
		}
		h := rec.WarcHeader()
		t := rec.Type()
		raw, err := rec.Block().RawBytes()
		if err != nil {
			rec.Close()
			flush(off)
			return fmt.Errorf("warc: %s from byte %d: %w", path, off, err)
		}
		head := make([]byte, 64<<10)
		n, _ := io.ReadFull(raw, head)
		head = head[:n]
		rest, err := io.Copy(io.Discard, raw)
		if want, cerr := strconv.ParseInt(h.Get(gowarc.ContentLength), 10, 64); err != nil || cerr == nil && want != int64(n)+rest {
			rec.Close()
			flush(off)
			return fmt.Errorf("warc: %s from byte %d: a record that is not whole", path, off)
		}
		flush(off)
		at(off)
		if t != gowarc.Response && t != gowarc.Resource && t != gowarc.Revisit && !(t == gowarc.Metadata && h.Get(gowarc.ContentType) == ResultListType) {
			rec.Close()
			continue
		}
		e := cdxEntry{url: strings.Trim(h.Get(gowarc.WarcTargetURI), "<>"), mime: h.Get(gowarc.ContentType), status: "-", digest: h.Get(gowarc.WarcPayloadDigest),
			file: filepath.Base(path), offset: off, revisit: t == gowarc.Revisit, protocol: h.Get("WARC-Protocol")}
		e.date, _ = time.Parse(time.RFC3339, h.Get(gowarc.WarcDate))
		if headless(e.mime) {
			e.mime = h.Get("WARC-Identified-Payload-Type")
		} else if lineHead(e.mime) {
			e.status, e.mime = lineStatusAndType(head)
		} else if t == gowarc.Response || t == gowarc.Revisit && strings.HasPrefix(e.mime, "application/http") {
			if i := bytes.Index(head, []byte("\r\n\r\n")); i >= 0 {
				head = head[:i+2]
			}
			e.status, e.mime = statusAndType(head)
		}
		rec.Close()
		pending = &e
	}
}

// cdxjLine is an entry's CDXJ line, its file named file and its record
// ending at end.
func cdxjLine(e cdxEntry, file string, end int64) string {
	mime := e.mime
	if e.revisit {
		mime = "warc/revisit"
	}
	fields := map[string]string{
		"url": e.url, "mime": mime, "status": e.status,
		"length": fmt.Sprint(end - e.offset), "offset": fmt.Sprint(e.offset), "filename": file,
	}
	if e.digest != "" { // none without digests (Options.NoDigests)
		fields["digest"] = strings.TrimPrefix(e.digest, "sha1:")
	}
	if e.protocol != "" {
		fields["protocol"] = e.protocol // what Capture.Protocol reads back
	}
	j, _ := json.Marshal(fields)
	return surt(e.url) + " " + e.date.Format(cdxTime) + " " + string(j)
}

// Indexing says whether the writer writes CDXJ indexes (Options.CDX).
func (w *Writer) Indexing() bool { return w.opts.CDX }

// recordOffsets lists where every record written into the file starts.
func (w *Writer) recordOffsets(file string) []int64 {
	w.mu.Lock()
	out := append([]int64(nil), w.offsets[file]...)
	w.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// surt is the sort-friendly URI key of CDX indexes: the host's labels
// reversed and joined by commas, "www" dropped, then ")" and the rest,
// in lower case; for schemes other than HTTP the scheme is kept:
// "gopher://(org,example,)/1/".
func surt(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return strings.ToLower(raw)
	}
	u = u.Normalize() // one key for every spelling of a URL
	labels := strings.Split(strings.ToLower(u.Hostname()), ".")
	for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
		labels[i], labels[j] = labels[j], labels[i]
	}
	if n := len(labels); n > 1 && labels[n-1] == "www" {
		labels = labels[:n-1]
	}
	host := strings.Join(labels, ",")
	if u.Port != "" && u.PortNumber() != url.DefaultPorts[u.Scheme] {
		host += ":" + u.Port
	}
	rest := u.Path
	if u.HasQuery {
		rest += "?" + u.Query
	}
	if rest == "" {
		rest = "/"
	}
	if sc, _ := fetch.DefaultClient().Scheme(u.Scheme); sc.Tree == protocols.TreeIndexPage {
		return host + ")" + strings.ToLower(rest) // the web's, as pywb writes and folds them
	}
	// A Gopher selector's or an FTP path's case is its own: README and
	// readme are two captures.
	return u.Scheme + "://(" + host + ",)" + rest
}

// loadIndex reads an earlier run's index: its payloads become revisit
// records here. It is a CDXJ index, as Options.CDX writes it, or a CDX
// file of wget's --warc-cdx, whose first line (" CDX a b a m s k r M V g
// u") names its fields: the URL (a), the time (b), the payload's digest
// (k) and the record's ID (u) are read.
func (w *Writer) loadIndex(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("warc: --warc-dedup: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var cdx map[byte]int // a CDX file's fields, by letter
	for first := true; sc.Scan(); first = false {
		line := sc.Text()
		if first {
			if fields := strings.Fields(line); len(fields) > 0 && fields[0] == "CDX" {
				cdx = map[byte]int{}
				for i, l := range fields[1:] {
					if _, dup := cdx[l[0]]; len(l) == 1 && !dup { // "a" twice: the first
						cdx[l[0]] = i
					}
				}
				if _, ok := cdx['a']; !ok {
					return fmt.Errorf("warc: --warc-dedup: %s: its CDX header names no URL field (a)", path)
				}
				if _, ok := cdx['k']; !ok {
					return fmt.Errorf("warc: --warc-dedup: %s: its CDX header names no digest field (k)", path)
				}
				continue
			}
		}
		var ref revisitRef
		var digest, date string
		if cdx != nil {
			fields := strings.Fields(line)
			field := func(l byte) string {
				if i, ok := cdx[l]; ok && i < len(fields) && fields[i] != "-" {
					return fields[i]
				}
				return ""
			}
			ref.uri, digest, date = field('a'), field('k'), field('b')
			ref.id = strings.TrimSuffix(strings.TrimPrefix(field('u'), "<"), ">")
			if field('m') == "warc/revisit" {
				continue
			}
		} else {
			parts := strings.SplitN(line, " ", 3)
			if len(parts) != 3 {
				continue
			}
			var j struct{ URL, Digest, Mime string }
			if json.Unmarshal([]byte(parts[2]), &j) != nil || j.Mime == "warc/revisit" {
				continue
			}
			ref.uri, digest, date = j.URL, j.Digest, parts[1]
		}
		digest = strings.TrimPrefix(digest, "sha1:")
		t, err := time.Parse(cdxTime, date)
		if digest == "" || ref.uri == "" || err != nil {
			continue
		}
		ref.date = t.UTC().Format(time.RFC3339)
		d := "sha1:" + digest
		if _, ok := w.seen[d]; !ok {
			w.seen[d] = ref
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("warc: --warc-dedup: %s: %w", path, err)
	}
	return nil
}

// lineHead says whether records of the media type ct hold a protocol's
// exchange whose response begins with one header line, STATUS META
// (Gemini's, as the Gemini archivers record it, and Spartan's), rather
// than HTTP's head.
func lineHead(ct string) bool {
	return strings.HasPrefix(ct, "application/gemini") || strings.HasPrefix(ct, "application/spartan")
}

// headless says whether records of the media type ct hold an exchange
// whose response has no head at all, the object alone (finger's, Nex's):
// its WARC-Identified-Payload-Type says what the object is.
func headless(ct string) bool {
	return strings.HasPrefix(ct, "application/finger") || strings.HasPrefix(ct, "application/nex")
}

// lineStatusAndType reads the status and the body's media type from a
// block that begins with a STATUS META line: the META of a success
// (2x), text/gemini where it is empty.
func lineStatusAndType(block []byte) (status, mediaType string) {
	line, _, _ := bytes.Cut(block, []byte("\n"))
	code, meta, _ := strings.Cut(strings.TrimRight(string(line), "\r"), " ")
	if strings.HasPrefix(code, "2") {
		mediaType, _, _ = strings.Cut(strings.TrimSpace(meta), ";")
		if mediaType == "" {
			mediaType = "text/gemini"
		}
	}
	return code, strings.TrimSpace(mediaType)
}
