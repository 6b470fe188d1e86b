package warc

import (
	"archive/zip"
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// A WARC file inside a WACZ is named by the WACZ's path, "#" and its
// name in the ZIP: "/srv/site.wacz#archive/data.warc.gz" (Capture.File).
const memberMark = ".wacz#"

// zipMember is where a file stored in a ZIP lies.
type zipMember struct {
	off, size int64
	stored    bool
}

// waczMembers holds, for each WACZ opened, where its files lie (its
// path to a map of member names).
var waczMembers sync.Map

// members reads where the files of the WACZ at file lie (its central
// directory only), once.
func members(file string) (map[string]zipMember, error) {
	if m, ok := waczMembers.Load(file); ok {
		return m.(map[string]zipMember), nil
	}
	zr, err := zip.OpenReader(file)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	m := membersOf(&zr.Reader)
	waczMembers.Store(file, m)
	return m, nil
}

func membersOf(zr *zip.Reader) map[string]zipMember {
	m := map[string]zipMember{}
	for _, f := range zr.File {
		off, err := f.DataOffset()
		if err != nil {
			continue
		}
		m[f.Name] = zipMember{off: off, size: int64(f.UncompressedSize64), stored: f.Method == zip.Store}
	}
	return m
}

// splitMember cuts a Capture.File that names a file in a WACZ into the
// WACZ's path and the file's name in it.
func splitMember(file string) (wacz, name string, ok bool) {
	i := strings.Index(file, memberMark)
	if i < 0 {
		return "", "", false
	}
	return file[:i+len(".wacz")], file[i+len(memberMark):], true
}

// sectionFile is a file stored in a ZIP, read in place.
type sectionFile struct {
	*io.SectionReader
	f *os.File
}

func (s sectionFile) Close() error { return s.f.Close() }

// openMember opens a file stored in a WACZ, read in place: the ZIP's
// bytes from where the file's start, never unpacked.
func openMember(wacz, name string) (sectionFile, error) {
	m, err := members(wacz)
	if err != nil {
		return sectionFile{}, err
	}
	e, ok := m[name]
	if !ok {
		return sectionFile{}, fmt.Errorf("%s: no %s in it", wacz, name)
	}
	if !e.stored {
		return sectionFile{}, fmt.Errorf("%s: %s is compressed in the ZIP (a WACZ stores its WARC files as they are)", wacz, name)
	}
	f, err := os.Open(wacz)
	if err != nil {
		return sectionFile{}, err
	}
	return sectionFile{io.NewSectionReader(f, e.off, e.size), f}, nil
}

// fileSize is the size of a WARC file, or of one in a WACZ.
func fileSize(file string) (int64, error) {
	if wacz, name, ok := splitMember(file); ok {
		m, err := members(wacz)
		if err != nil {
			return 0, err
		}
		return m[name].size, nil
	}
	st, err := os.Stat(file)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// pageSource is a WACZ's list of pages (pages/pages.jsonl, and
// pages/extraPages.jsonl as Browsertrix writes it).
type pageSource struct {
	zf *zip.File
}

// Page is a page a WACZ lists (pages/pages.jsonl): a capture a person
// would open, with its title where it has one.
type Page struct {
	URL   string
	Title string
	Time  time.Time
}

// Pages calls fn with each page the archive's WACZ files list, in their
// order, until fn returns false; an archive of loose WARC files lists
// none.
func (a *Archive) Pages(fn func(Page) bool) {
	for _, ps := range a.pages {
		rc, err := ps.zf.Open()
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(rc)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var j struct {
				Format, URL, Title, TS string
			}
			if json.Unmarshal(sc.Bytes(), &j) != nil || j.Format != "" || j.URL == "" {
				continue
			}
			p := Page{URL: j.URL, Title: j.Title}
			for _, layout := range []string{time.RFC3339Nano, cdxTime} {
				if t, err := time.Parse(layout, j.TS); err == nil {
					p.Time = t
					break
				}
			}
			if !fn(p) {
				rc.Close()
				return
			}
		}
		rc.Close()
	}
}

// openWACZ opens a WACZ as part of the archive, in place: its index
// used as it is, a CDXJ file stored in the ZIP searched where it lies,
// a ZipNum index's blocks read where a lookup leads; the WARC files
// read where the index points. Only an index that is compressed in the
// ZIP (not stored) is unpacked, into a temporary file; a WACZ with no
// index has its WARC files indexed as loose ones are.
func (a *Archive) openWACZ(p string) error {
	abs, err := filepath.Abs(p)
	if err != nil {
		abs = p
	}
	f, err := os.Open(abs)
	if err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("warc: %w", err)
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		f.Close()
		return fmt.Errorf("warc: %s: not a WACZ (%w)", p, err)
	}
	a.files = append(a.files, f)
	m := membersOf(zr)
	waczMembers.Store(abs, m)
	lf := lineForm{wacz: abs, waczKeys: true}
	byName := map[string]*zip.File{}
	for _, zf := range zr.File {
		byName[zf.Name] = zf
	}
	named := map[string]bool{} // block files an .idx names
	var warcs []string
	found := false
	for _, zf := range zr.File {
		name := zf.Name
		switch {
		case name == "pages/pages.jsonl" || name == "pages/extraPages.jsonl":
			a.pages = append(a.pages, pageSource{zf})
		case strings.HasPrefix(name, "archive/") && (strings.HasSuffix(name, ".warc.gz") || strings.HasSuffix(name, ".warc")):
			warcs = append(warcs, abs+"#"+name)
		case strings.HasPrefix(name, "indexes/") && strings.HasSuffix(name, ".idx"):
			rc, err := zf.Open()
			if err != nil {
				return fmt.Errorf("warc: %s: %s: %w", p, name, err)
			}
			dir := path.Dir(name)
			ix, err := readZipNum(bufio.NewReader(rc), p+": "+name, func(block string) (io.ReaderAt, error) {
				e, ok := m[path.Join(dir, block)]
				switch {
				case !ok:
					return nil, fmt.Errorf("%s: no %s in it", p, path.Join(dir, block))
				case !e.stored:
					return nil, fmt.Errorf("%s: %s is compressed in the ZIP", p, path.Join(dir, block))
				}
				return io.NewSectionReader(f, e.off, e.size), nil
			}, lf)
			rc.Close()
			if err != nil {
				return fmt.Errorf("warc: %w", err)
			}
			for _, b := range ix.blocks {
				named[path.Join(dir, b.file)] = true
			}
			a.indexes = append(a.indexes, ix)
			found = true
		}
	}
	for _, zf := range zr.File {
		name := zf.Name
		if !strings.HasPrefix(name, "indexes/") || named[name] {
			continue
		}
		gz := strings.HasSuffix(name, ".cdx.gz") || strings.HasSuffix(name, ".cdxj.gz")
		if !gz && !strings.HasSuffix(name, ".cdx") && !strings.HasSuffix(name, ".cdxj") {
			continue
		}
		found = true
		if e := m[name]; e.stored && !gz {
			a.indexes = append(a.indexes, &sortedIndex{r: io.NewSectionReader(f, e.off, e.size), size: e.size, lf: lf})
			continue
		}
		// Compressed: its lines unpacked into a temporary index, sorted.
		if err := a.unpackIndex(zf, gz, lf); err != nil {
			return fmt.Errorf("warc: %s: %s: %w", p, name, err)
		}
	}
	if !found {
		if len(warcs) == 0 {
			return fmt.Errorf("warc: %s: no index and no WARC file in it", p)
		}
		return a.indexNow(warcs)
	}
	return nil
}

// unpackIndex reads a compressed index of a WACZ into a temporary one.
func (a *Archive) unpackIndex(zf *zip.File, gz bool, lf lineForm) error {
	rc, err := zf.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	var r io.Reader = rc
	if gz {
		g, err := gzip.NewReader(rc)
		if err != nil {
			return err
		}
		defer g.Close()
		r = g
	}
	ls := &lineSorter{}
	defer ls.cleanup()
	sc := bufio.NewScanner(bufio.NewReaderSize(r, 256<<10))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if _, ok := lf.capture(sc.Text()); ok {
			if err := ls.add(sc.Text()); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if err := a.tempIndex(func(w io.Writer) error { return ls.merge(w) }); err != nil {
		return err
	}
	a.indexes[len(a.indexes)-1].(*sortedIndex).lf = lf
	return nil
}
