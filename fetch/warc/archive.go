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
	"slices"
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
	File     string    // the WARC file's path; in a WACZ, the WACZ's, "#" and its name there ("x.wacz#archive/data.warc.gz")
	Offset   int64     // where the record starts in it
	Length   int64     // the record's length there (compressed, as stored); 0 where the index does not say
	Protocol string    // WARC-Protocol, where recorded
	// RefersToURL and RefersToTime name the record a revisit repeats the
	// payload of, where it says so.
	RefersToURL  string
	RefersToTime time.Time
}

// Timestamp is the capture's 14-digit time, as replay URLs name it.
func (c Capture) Timestamp() string { return c.Time.UTC().Format(cdxTime) }

// Archive is a set of WARC files read back: every capture, found by URL
// and time. Open builds it. Its captures are looked up in sorted CDXJ
// indexes on disk, by binary search, as pywb looks them up: the index
// beside a WARC file (IndexName) where there is one, else one Open
// writes to a temporary file; memory stays flat however large the
// collection. Close removes what Open wrote.
type Archive struct {
	indexes []capIndex
	temps   []string
	files   []io.Closer // the WACZ files open
	pages   []pageSource
	// Skipped names what could not be read, each with why: a file, or
	// the rest of a file past a record that is not whole (a truncated
	// gzip member, a Content-Length that lies). The rest is served.
	Skipped []string
}

// capIndex is an index of captures: a sorted CDXJ file (sortedIndex)
// or a ZipNum one (zipnumIndex).
type capIndex interface {
	// find calls fn with each line whose key is key, in order.
	find(key string, fn func(line string))
	// each calls fn with every line, in order, until fn returns false.
	each(fn func(line string) bool)
	// from calls fn with every line from key's on, in order, until fn
	// returns false.
	from(key string, fn func(line string) bool)
	// before is up to n URLs whose keys come just before key and begin
	// with prefix, in order.
	before(lf *lineForm, key, prefix string, n int) []URLRow
	// lineForm says how the lines name keys and files.
	form() *lineForm
	close() error
}

// lineForm says how an index's lines are keyed and where the WARC files
// they name are.
type lineForm struct {
	dir  string // the folder of the WARC files its lines name
	wacz string // the WACZ whose archive/ holds them, where it is one
	// waczKeys says the lines are keyed as wabac.js keys them (waczKey),
	// as a WACZ's are, rather than by surt.
	waczKeys bool
}

// keys are the keys a URL's lines may have in an index of this form.
func (lf *lineForm) keys(raw string) []string {
	if !lf.waczKeys {
		return []string{surt(raw)}
	}
	k := []string{waczKey(raw)}
	if n := waczKey(lookupKey(raw)); n != k[0] {
		k = append(k, n)
	}
	return k
}

// sortedIndex is one CDXJ file, its lines sorted, read where a lookup
// leads.
type sortedIndex struct {
	r    io.ReaderAt
	c    io.Closer // nil where another closes r
	size int64
	lf   lineForm
}

func (ix *sortedIndex) form() *lineForm { return &ix.lf }

func (ix *sortedIndex) close() error {
	if ix.c == nil {
		return nil
	}
	return ix.c.Close()
}

// each calls fn with every line of the index, in order.
func (ix *sortedIndex) each(fn func(line string) bool) {
	sc := bufio.NewScanner(io.NewSectionReader(ix.r, 0, ix.size))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if !fn(sc.Text()) {
			return
		}
	}
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
// them, a --warc-max-size series included; deref's and wget's; CDXJ
// indexes, NAME.cdxj, of WARC files beside them; ZipNum indexes, NAME.idx,
// as WriteZipNum writes them, a folder's index.idx standing for its WARC
// files; WACZ packages, NAME.wacz, read in place) into an Archive. A WARC file whose CDXJ index is beside it is known by the
// index; the others are read through once, record by record, never held
// whole, and indexed together in a temporary file.
func Open(paths ...string) (*Archive, error) {
	a := &Archive{}
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("warc: %w", err)
		}
		if !st.IsDir() && strings.HasSuffix(p, ".cdx") {
			// wget's --warc-cdx: the older CDX format, naming its WARC
			// files by absolute path.
			if err := a.fromCDX(p); err != nil {
				a.Close()
				return nil, err
			}
			continue
		}
		if !st.IsDir() && strings.HasSuffix(p, ".cdxj") {
			// An index given as such (deref index's, pywb's): its lines
			// name WARC files beside it. It is read through once: a line
			// that is none is named, and an index out of order is sorted
			// into a temporary one, binary search needing the order.
			if err := a.givenIndex(p); err != nil {
				a.Close()
				return nil, err
			}
			continue
		}
		var err2 error
		switch {
		case !st.IsDir() && strings.HasSuffix(p, ".wacz"):
			err2 = a.openWACZ(p)
		case !st.IsDir() && strings.HasSuffix(p, ".idx"):
			err2 = a.zipnumFile(p) // deref index --zipnum's
		case !st.IsDir():
			files = append(files, p)
		}
		if err2 != nil {
			a.Close()
			return nil, err2
		}
		if !st.IsDir() {
			continue
		}
		des, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("warc: %w", err)
		}
		// A folder's ZipNum index (index.idx, as deref index --zipnum
		// writes it) stands for its WARC files, but for those written
		// after it (a crawl that went on), read as if it had none.
		var indexed time.Time
		zipnum := slices.ContainsFunc(des, func(de os.DirEntry) bool { return de.Name() == "index.idx" && !de.IsDir() })
		if zipnum {
			if err := a.zipnumFile(filepath.Join(p, "index.idx")); err != nil {
				a.Close()
				return nil, err
			}
			if st, err := os.Stat(filepath.Join(p, "index.idx")); err == nil {
				indexed = st.ModTime()
			}
		}
		newer := func(de os.DirEntry) bool {
			info, err := de.Info()
			return err == nil && info.ModTime().After(indexed)
		}
		for _, de := range des {
			n := de.Name()
			switch {
			case de.IsDir():
			case strings.HasSuffix(n, ".wacz"):
				if err := a.openWACZ(filepath.Join(p, n)); err != nil {
					a.Close()
					return nil, err
				}
			case (!zipnum || newer(de)) && (strings.HasSuffix(n, ".warc") || strings.HasSuffix(n, ".warc.gz")):
				files = append(files, filepath.Join(p, n))
			}
		}
	}
	if len(files) == 0 && len(a.indexes) == 0 {
		return nil, fmt.Errorf("warc: no WARC files in %s", strings.Join(paths, ", "))
	}
	sort.Strings(files)
	var unindexed []string
	for _, f := range files {
		if ix, err := openIndex(IndexName(f), filepath.Dir(f)); err == nil && ix.size > 0 {
			a.indexes = append(a.indexes, ix)
		} else {
			if err == nil {
				ix.close() // empty: made for a shell's redirection, or cut short
			}
			if idx, _ := ZipNumNames(strings.TrimSuffix(IndexName(f), ".cdxj")); exists(idx) {
				if err := a.zipnumFile(idx); err != nil {
					a.Close()
					return nil, err
				}
				continue
			}
			unindexed = append(unindexed, f)
		}
	}
	if len(unindexed) > 0 {
		if err := a.indexNow(unindexed); err != nil {
			a.Close()
			return nil, err
		}
	}
	return a, nil
}

// indexNow indexes WARC files that have no index into a temporary one:
// each file read through, record by record, its lines sorted in runs of
// sortRun written aside and merged, so that neither a file nor its index
// is ever held whole.
func (a *Archive) indexNow(files []string) error {
	ls := &lineSorter{}
	defer ls.cleanup()
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			abs = f
		}
		var werr error
		records := 0
		err = scanEach(f, func(e cdxEntry, end int64) {
			records++
			if werr == nil {
				werr = ls.add(cdxjLine(e, abs, end))
			}
		}, func(int64) {})
		if err != nil {
			a.Skipped = append(a.Skipped, err.Error())
		} else if records == 0 {
			a.Skipped = append(a.Skipped, f+": no capture in it (not a WARC file, or one of warcinfo records only)")
		}
		if werr != nil {
			return werr
		}
	}
	return a.tempIndex(func(w io.Writer) error { return ls.merge(w) })
}

// sortRun is how many index lines are sorted in memory at once (some
// 20 MiB of them).
var sortRun = 100_000

// lineSorter sorts more lines than memory should hold: in runs, each
// written to a temporary file, then merged.
type lineSorter struct {
	run  []string
	runs []string // the files of the runs written
}

func (ls *lineSorter) add(line string) error {
	ls.run = append(ls.run, line)
	if len(ls.run) >= sortRun {
		return ls.spill()
	}
	return nil
}

// spill writes the run held, sorted, to a file.
func (ls *lineSorter) spill() error {
	sort.Strings(ls.run)
	f, err := os.CreateTemp("", "deref-run-*.cdxj")
	if err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	ls.runs = append(ls.runs, f.Name())
	bw := bufio.NewWriterSize(f, 256<<10)
	for _, l := range ls.run {
		bw.WriteString(l + "\n")
	}
	ls.run = ls.run[:0]
	if err := errors.Join(bw.Flush(), f.Close()); err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	return nil
}

// merge writes every line added, in order, to w.
func (ls *lineSorter) merge(w io.Writer) error {
	if len(ls.runs) == 0 {
		sort.Strings(ls.run)
		for _, l := range ls.run {
			if _, err := io.WriteString(w, l+"\n"); err != nil {
				return err
			}
		}
		return nil
	}
	if len(ls.run) > 0 {
		if err := ls.spill(); err != nil {
			return err
		}
	}
	type head struct {
		line string
		sc   *bufio.Scanner
	}
	var heads []head
	for _, name := range ls.runs {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(bufio.NewReaderSize(f, 64<<10))
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		if sc.Scan() {
			heads = append(heads, head{sc.Text(), sc})
		}
	}
	// A binary heap of the runs' heads, least line first.
	less := func(i, j int) bool { return heads[i].line < heads[j].line }
	down := func(i int) {
		for {
			l, least := 2*i+1, i
			if l < len(heads) && less(l, least) {
				least = l
			}
			if r := l + 1; r < len(heads) && less(r, least) {
				least = r
			}
			if least == i {
				return
			}
			heads[i], heads[least] = heads[least], heads[i]
			i = least
		}
	}
	for i := len(heads)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for len(heads) > 0 {
		if _, err := io.WriteString(w, heads[0].line+"\n"); err != nil {
			return err
		}
		if heads[0].sc.Scan() {
			heads[0].line = heads[0].sc.Text()
		} else {
			heads[0] = heads[len(heads)-1]
			heads = heads[:len(heads)-1]
		}
		down(0)
	}
	return nil
}

// sorted writes every line added, in order, to a temporary file, and
// returns it open at its start; its caller closes and removes it.
func (ls *lineSorter) sorted() (*os.File, error) {
	f, err := os.CreateTemp("", "deref-sorted-*.cdxj")
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	if err := errors.Join(ls.merge(bw), bw.Flush()); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// cleanup removes the runs' files.
func (ls *lineSorter) cleanup() {
	for _, name := range ls.runs {
		os.Remove(name)
	}
}

// givenIndex adds a CDXJ file given as a collection: as it is when its
// lines are in order, else sorted into a temporary index; malformed
// lines are named in Skipped (the first ten, then their count).
func (a *Archive) givenIndex(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	defer f.Close()
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	ix := &lineForm{dir: filepath.Dir(abs)}
	sc := bufio.NewScanner(bufio.NewReaderSize(f, 256<<10))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	prev, sorted, bad, n := "", true, 0, 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if _, ok := ix.capture(line); !ok {
			if bad++; bad <= 10 {
				a.Skipped = append(a.Skipped, fmt.Sprintf("%s line %d: not a CDXJ line of a capture", path, n))
			}
			continue
		}
		if line < prev {
			sorted = false
		}
		prev = line
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("warc: %s: %w", path, err)
	}
	if bad > 10 {
		a.Skipped = append(a.Skipped, fmt.Sprintf("%s: %d lines in all that are not CDXJ lines of captures", path, bad))
	}
	if sorted {
		oi, err := openIndex(path, filepath.Dir(path))
		if err != nil {
			return fmt.Errorf("warc: %w", err)
		}
		a.indexes = append(a.indexes, oi)
		return nil
	}
	// Out of order: sorted into a temporary index, its file names made
	// absolute.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	ls := &lineSorter{}
	defer ls.cleanup()
	sc = bufio.NewScanner(bufio.NewReaderSize(f, 256<<10))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		c, ok := ix.capture(sc.Text())
		if !ok {
			continue
		}
		mime := c.Mime
		if c.Type == "revisit" {
			mime = "warc/revisit"
		}
		j, _ := json.Marshal(map[string]string{"url": c.URL, "mime": mime, "status": c.Status, "digest": strings.TrimPrefix(c.Digest, "sha1:"),
			"offset": strconv.FormatInt(c.Offset, 10), "filename": c.File})
		if err := ls.add(surt(c.URL) + " " + c.Timestamp() + " " + string(j)); err != nil {
			return err
		}
	}
	return a.tempIndex(func(w io.Writer) error { return ls.merge(w) })
}

// fromCDX indexes the captures a CDX file lists (wget's --warc-cdx: a
// header line " CDX a b a m s k r M V g u" naming the fields; a URL, b
// time, m type, s status, k digest, V offset, g file) into a temporary
// CDXJ index.
func (a *Archive) fromCDX(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var at map[byte]int
	var lines []string
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 0 && fields[0] == "CDX" {
			at = map[byte]int{}
			for i, l := range fields[1:] {
				if len(l) == 1 {
					if _, seen := at[l[0]]; !seen {
						at[l[0]] = i
					}
				}
			}
			continue
		}
		get := func(l byte) string {
			if i, ok := at[l]; ok && i < len(fields) && fields[i] != "-" {
				return fields[i]
			}
			return ""
		}
		u, ts, file, off := get('a'), get('b'), get('g'), get('V')
		if at == nil || u == "" || len(ts) != 14 || file == "" || off == "" {
			continue
		}
		if !filepath.IsAbs(file) {
			file = filepath.Join(filepath.Dir(path), file)
		}
		j, _ := json.Marshal(map[string]string{"url": u, "mime": get('m'), "status": get('s'), "digest": get('k'), "offset": off, "filename": file})
		lines = append(lines, surt(u)+" "+ts+" "+string(j))
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("warc: %s: %w", path, err)
	}
	if at == nil {
		return fmt.Errorf("warc: %s: no CDX header line", path)
	}
	return a.writeTemp(lines)
}

// writeTemp writes CDXJ lines, sorted, to a temporary index of the
// archive.
func (a *Archive) writeTemp(lines []string) error {
	sort.Strings(lines)
	return a.tempIndex(func(w io.Writer) error {
		for _, l := range lines {
			if _, err := io.WriteString(w, l+"\n"); err != nil {
				return err
			}
		}
		return nil
	})
}

// tempIndex adds to the archive a temporary index that write writes,
// sorted; Close removes it.
func (a *Archive) tempIndex(write func(w io.Writer) error) error {
	tmp, err := os.CreateTemp("", "deref-index-*.cdxj")
	if err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	a.temps = append(a.temps, tmp.Name())
	bw := bufio.NewWriterSize(tmp, 256<<10)
	if err := errors.Join(write(bw), bw.Flush(), tmp.Close()); err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	ix, err := openIndex(tmp.Name(), "")
	if err != nil {
		return err
	}
	a.indexes = append(a.indexes, ix)
	return nil
}

// openIndex opens a sorted CDXJ file.
func openIndex(path, dir string) (*sortedIndex, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &sortedIndex{r: f, c: f, size: st.Size(), lf: lineForm{dir: dir}}, nil
}

// Close closes the indexes and removes those Open wrote.
func (a *Archive) Close() error {
	var errs []error
	for _, ix := range a.indexes {
		errs = append(errs, ix.close())
	}
	for _, f := range a.files {
		errs = append(errs, f.Close())
	}
	for _, t := range a.temps {
		errs = append(errs, os.Remove(t))
	}
	return errors.Join(errs...)
}

// lineAt reads the line that starts at off, without its newline.
func (ix *sortedIndex) lineAt(off int64) (string, error) {
	var b []byte
	buf := make([]byte, 4096)
	for {
		n, err := ix.r.ReadAt(buf, off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return string(append(b, buf[:i]...)), nil
		}
		b = append(b, buf[:n]...)
		off += int64(n)
		if err != nil {
			if err == io.EOF && len(b) > 0 {
				return string(b), nil
			}
			return string(b), err
		}
		if len(b) > 1<<20 {
			return "", fmt.Errorf("an index line past 1 MiB")
		}
	}
}

// lineStart is where the first line beginning at or after off starts:
// off itself at the start of the file or of a line, else after the next
// newline; size when there is none.
func (ix *sortedIndex) lineStart(off int64) int64 {
	if off <= 0 {
		return 0
	}
	buf := make([]byte, 4096)
	for pos := off - 1; pos < ix.size; {
		n, err := ix.r.ReadAt(buf, pos)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return pos + int64(i) + 1
		}
		pos += int64(n)
		if err != nil {
			break
		}
	}
	return ix.size
}

// find calls fn with each line whose key (the text before its first
// space) is key, in order: a binary search for the first, then on.
func (ix *sortedIndex) find(key string, fn func(line string)) {
	for off := ix.firstAt(key); off < ix.size; {
		l, err := ix.lineAt(off)
		if err != nil {
			return
		}
		k, _, _ := strings.Cut(l, " ")
		if k != key {
			return
		}
		fn(l)
		off += int64(len(l)) + 1
	}
}

// firstAt is where the first line whose key is key or after it starts
// (size when there is none): a binary search of the file's bytes, each
// probe the line after it.
func (ix *sortedIndex) firstAt(key string) int64 {
	first := sort.Search(int(ix.size), func(mid int) bool {
		s := ix.lineStart(int64(mid))
		if s >= ix.size {
			return true
		}
		l, err := ix.lineAt(s)
		if err != nil {
			return true
		}
		k, _, _ := strings.Cut(l, " ")
		return k >= key
	})
	return ix.lineStart(int64(first))
}

// capture reads a CDXJ line; ok is false for a line that is not one.
// Its fields may be strings or numbers ("offset": "843" as pywb and
// js-wacz write them, or 843).
func (lf *lineForm) capture(line string) (Capture, bool) {
	parts := strings.SplitN(line, " ", 3)
	if len(parts) != 3 {
		return Capture{}, false
	}
	var j struct {
		URL, Mime, Status, Digest, Offset, Length, Filename, Protocol jsonText
	}
	if err := json.Unmarshal([]byte(parts[2]), &j); err != nil || j.Filename == "" {
		return Capture{}, false
	}
	t, err := time.Parse(cdxTime, parts[1])
	if err != nil {
		return Capture{}, false
	}
	off, err := strconv.ParseInt(string(j.Offset), 10, 64)
	if err != nil {
		return Capture{}, false
	}
	file := string(j.Filename)
	switch {
	case lf.wacz != "":
		file = lf.wacz + "#archive/" + strings.TrimPrefix(file, "archive/")
	case filepath.IsLocal(filepath.FromSlash(file)):
		file = filepath.Join(lf.dir, filepath.FromSlash(file))
	case !filepath.IsAbs(file):
		file = filepath.Join(lf.dir, filepath.Base(file))
	}
	length, _ := strconv.ParseInt(string(j.Length), 10, 64)
	c := Capture{URL: strings.Trim(string(j.URL), "<>"), Time: t, Type: "resource", Mime: string(j.Mime), Status: string(j.Status), File: file, Offset: off, Length: length, Protocol: string(j.Protocol)}
	if j.Digest != "" {
		c.Digest = "sha1:" + strings.TrimPrefix(string(j.Digest), "sha1:")
	}
	switch {
	case j.Mime == "warc/revisit":
		c.Type, c.Mime = "revisit", ""
	case j.Status != "-" && j.Status != "":
		c.Type = "response"
	}
	return c, true
}

// Captures lists the captures of a URL, oldest first.
func (a *Archive) Captures(raw string) []Capture {
	want := lookupKey(raw)
	var out []Capture
	for _, ix := range a.indexes {
		lf := ix.form()
		for _, key := range lf.keys(raw) {
			ix.find(key, func(line string) {
				if c, ok := lf.capture(line); ok && lookupKey(c.URL) == want && !slices.ContainsFunc(out, func(o Capture) bool { return o.File == c.File && o.Offset == c.Offset }) {
					out = append(out, c)
				}
			})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out
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

// URLs calls fn with each URL the archive holds, index by index in key
// order, and the number of its captures there, until fn returns false.
func (a *Archive) URLs(fn func(url string, captures int) bool) {
	for _, ix := range a.indexes {
		lf := ix.form()
		last, n, stop := "", 0, false
		ix.each(func(line string) bool {
			c, ok := lf.capture(line)
			if !ok {
				return true
			}
			if c.URL != last && n > 0 {
				if !fn(last, n) {
					stop = true
					return false
				}
				n = 0
			}
			last = c.URL
			n++
			return true
		})
		if stop || n > 0 && !fn(last, n) {
			return
		}
	}
}

// Empty reports whether the archive holds no capture at all.
func (a *Archive) Empty() bool {
	empty := true
	a.URLs(func(string, int) bool { empty = false; return false })
	return empty
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
		o, err := a.repeated(c)
		if err != nil {
			return nil, err
		}
		from = o
	}
	r, err := openReader(from.File, from.Offset)
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
	if ct := rec.WarcHeader().Get(gowarc.ContentType); headless(ct) {
		// The block is the object: no head to read.
	} else if lineHead(ct) {
		br := bufio.NewReader(raw)
		if _, err := br.ReadSlice('\n'); err != nil { // the header line; the payload follows
			p.Close()
			return nil, fmt.Errorf("warc: %s: the recorded response has no header line: %w", from.URL, err)
		}
		p.ReadCloser = closers{br, rec, r}
	} else if rec.Type() == gowarc.Response || strings.HasPrefix(ct, "application/http") {
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

// Related is the metadata record of media type mediaType that goes with
// a capture (its WARC-Concurrent-To the capture's record), as a recorder
// writes it after the capture, in the same file: a Gopher+ item's
// attribute block, an FTP file's control conversation. It looks at the
// 64 records after the capture's.
func (a *Archive) Related(c Capture, mediaType string) (*Payload, error) {
	r, err := openReader(c.File, c.Offset)
	if err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	rec, _, _, err := r.Next()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("warc: %s at %d: %w", c.File, c.Offset, err)
	}
	id := rec.WarcHeader().Get(gowarc.WarcRecordID)
	rec.Close()
	for range 64 {
		rec, _, _, err := r.Next()
		if err != nil {
			break
		}
		h := rec.WarcHeader()
		if rec.Type() == gowarc.Metadata && h.Get(gowarc.ContentType) == mediaType && h.Get(gowarc.WarcConcurrentTo) == id {
			raw, err := rec.Block().RawBytes()
			if err != nil {
				rec.Close()
				break
			}
			return &Payload{ReadCloser: closers{raw, rec, r}, From: c}, nil
		}
		rec.Close()
	}
	r.Close()
	return nil, fmt.Errorf("warc: %s: no %s record goes with it", c.URL, mediaType)
}

// repeated is the record a revisit repeats the payload of: a capture of
// the same URL with the same payload, else the one the revisit names
// (WARC-Refers-To-Target-URI and -Date, read from its record).
func (a *Archive) repeated(c Capture) (Capture, error) {
	for _, o := range a.Captures(c.URL) {
		if o.Type != "revisit" && o.Digest != "" && o.Digest == c.Digest {
			return o, nil
		}
	}
	r, err := openReader(c.File, c.Offset)
	if err == nil {
		defer r.Close()
		if rec, _, _, err := r.Next(); err == nil {
			h := rec.WarcHeader()
			to := strings.Trim(h.Get(gowarc.WarcRefersToTargetURI), "<>")
			at, _ := time.Parse(time.RFC3339, h.Get(gowarc.WarcRefersToDate))
			rec.Close()
			if to != "" {
				for _, o := range a.Captures(to) {
					if o.Type != "revisit" && (o.Time.Equal(at) || o.Digest == c.Digest) {
						return o, nil
					}
				}
			}
		}
	}
	return Capture{}, fmt.Errorf("warc: %s: the record this revisit repeats is not in the archive", c.URL)
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
