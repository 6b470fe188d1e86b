package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// ZipNumLines is how many index lines a block of a ZipNum index holds,
// as py-wacz and js-wacz write them and wabac.js (ReplayWeb.page) reads
// them.
const ZipNumLines = 3000

// jsonText is a JSON value read as text: a string as it is, a number as
// written ("offset": 843 and "offset": "843" alike).
type jsonText string

func (t *jsonText) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = jsonText(s)
		return nil
	}
	if string(b) == "null" {
		return nil
	}
	*t = jsonText(b)
	return nil
}

var wwwPrefix = regexp.MustCompile(`^www\d*\.`)

// waczKey is the key of a URL's lines in a WACZ's index, as wabac.js
// computes it to look them up: for a URL of the web (the schemes whose
// folders are index pages: http, https) a SURT (a leading "www",
// "www2" ... dropped, the URL in lower case, the host's labels reversed
// and joined by commas, its port where it names one, ")", the path, and
// the query's parameters sorted); any other URL is its own key, as
// wabac.js makes SURTs of http(s) URLs only.
func waczKey(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	if sc, _ := fetch.DefaultClient().Scheme(strings.ToLower(u.Scheme)); sc.Tree != protocols.TreeIndexPage {
		return raw
	}
	h := strings.ToLower(wwwPrefix.ReplaceAllString(u.Hostname(), ""))
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	labels := strings.Split(h, ".")
	for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
		labels[i], labels[j] = labels[j], labels[i]
	}
	k := strings.Join(labels, ",")
	if p := u.Port(); p != "" && p != strconv.Itoa(url.DefaultPorts[strings.ToLower(u.Scheme)]) {
		k += ":" + p
	}
	p := strings.ToLower(u.EscapedPath())
	if p == "" {
		p = "/"
	}
	k += ")" + p
	if u.RawQuery != "" {
		params := strings.Split(strings.ToLower(u.RawQuery), "&")
		sort.Strings(params)
		k += "?" + strings.Join(params, "&")
	}
	return k
}

// zipnumMeta is the first line of a ZipNum index's .idx file.
const zipnumMeta = `!meta 0 {"format": "cdxj-gzip-1.0", "filename": "%s"}`

// writeZipNum writes sorted CDXJ lines, read from r, as a ZipNum index:
// to cdx the lines in blocks of ZipNumLines, each one whole gzip member,
// and to idx its !meta line and then a line for each block, the key and
// time of its first line and where it is ("KEY TS {"offset":N,
// "length":M,"digest":"sha256:...","filename":NAME}"), as py-wacz writes
// them. Only a block is held at once.
func writeZipNum(r io.Reader, cdx, idx io.Writer, cdxName string) error {
	if _, err := fmt.Fprintf(idx, zipnumMeta+"\n", cdxName); err != nil {
		return err
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var block bytes.Buffer
	var gz *gzip.Writer
	var first string
	n, off := 0, int64(0)
	flush := func() error {
		if n == 0 {
			return nil
		}
		if err := gz.Close(); err != nil {
			return err
		}
		sum := sha256.Sum256(block.Bytes())
		key, rest, _ := strings.Cut(first, " ")
		ts, _, _ := strings.Cut(rest, " ")
		j, _ := json.Marshal(struct {
			Offset   int64  `json:"offset"`
			Length   int    `json:"length"`
			Digest   string `json:"digest"`
			Filename string `json:"filename"`
		}{off, block.Len(), "sha256:" + hex.EncodeToString(sum[:]), cdxName})
		if _, err := fmt.Fprintf(idx, "%s %s %s\n", key, ts, j); err != nil {
			return err
		}
		if _, err := cdx.Write(block.Bytes()); err != nil {
			return err
		}
		off += int64(block.Len())
		block.Reset()
		n = 0
		return nil
	}
	for sc.Scan() {
		if n == 0 {
			first = sc.Text()
			gz, _ = gzip.NewWriterLevel(&block, gzip.DefaultCompression)
		}
		gz.Write(sc.Bytes())
		gz.Write([]byte{'\n'})
		if n++; n == ZipNumLines {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return flush()
}

// zipBlock is a block of a ZipNum index: the key of its first line, and
// where it is.
type zipBlock struct {
	key       string
	file      string
	off, size int64
}

// zipnumIndex is a ZipNum index: its blocks' keys held (a line for each
// ZipNumLines captures), a block read and unpacked where a lookup leads.
type zipnumIndex struct {
	blocks []zipBlock
	open   func(name string) (io.ReaderAt, error)
	lf     lineForm
	closer io.Closer

	mu    sync.Mutex
	files map[string]io.ReaderAt
}

// readZipNum reads a ZipNum index's .idx file: its !meta line (naming
// the blocks' file), then a line for each block in one of the forms
// wabac.js reads: "KEY TS {json}" (py-wacz), "KEY {json}" (js-wacz), or
// pywb's "KEY\tFILE\tOFFSET\tLENGTH". open opens a block file by name.
func readZipNum(r io.Reader, name string, open func(string) (io.ReaderAt, error), lf lineForm) (*zipnumIndex, error) {
	ix := &zipnumIndex{open: open, lf: lf, files: map[string]io.ReaderAt{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	def, n := "", 0
	for sc.Scan() {
		n++
		l := sc.Text()
		if strings.TrimSpace(l) == "" {
			continue
		}
		if strings.HasPrefix(l, "!meta") {
			if i := strings.Index(l, " {"); i >= 0 {
				var m struct{ Filename string }
				if json.Unmarshal([]byte(l[i+1:]), &m) == nil {
					def = m.Filename
				}
			}
			continue
		}
		var b zipBlock
		if f := strings.Split(l, "\t"); len(f) == 4 {
			off, err1 := strconv.ParseInt(f[2], 10, 64)
			size, err2 := strconv.ParseInt(f[3], 10, 64)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("%s line %d: not a ZipNum index line", name, n)
			}
			k, _, _ := strings.Cut(f[0], " ")
			b = zipBlock{key: k, file: f[1], off: off, size: size}
		} else {
			i := strings.Index(l, " {")
			var j struct{ Offset, Length, Filename jsonText }
			if i < 0 || json.Unmarshal([]byte(l[i+1:]), &j) != nil {
				return nil, fmt.Errorf("%s line %d: not a ZipNum index line", name, n)
			}
			off, err1 := strconv.ParseInt(string(j.Offset), 10, 64)
			size, err2 := strconv.ParseInt(string(j.Length), 10, 64)
			if err1 != nil || err2 != nil || off < 0 || size <= 0 {
				return nil, fmt.Errorf("%s line %d: not a ZipNum index line", name, n)
			}
			k, _, _ := strings.Cut(l[:i], " ")
			b = zipBlock{key: k, file: string(j.Filename), off: off, size: size}
		}
		if b.file == "" {
			b.file = def
		}
		if b.file == "" {
			return nil, fmt.Errorf("%s line %d: the block names no file", name, n)
		}
		if len(ix.blocks) > 0 && b.key < ix.blocks[len(ix.blocks)-1].key {
			return nil, fmt.Errorf("%s line %d: the blocks are out of order", name, n)
		}
		ix.blocks = append(ix.blocks, b)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ix, nil
}

func (ix *zipnumIndex) form() *lineForm { return &ix.lf }

func (ix *zipnumIndex) close() error {
	if ix.closer == nil {
		return nil
	}
	return ix.closer.Close()
}

// block reads block i's lines, calling fn with each until it returns
// false.
func (ix *zipnumIndex) block(i int, fn func(line string) bool) error {
	b := ix.blocks[i]
	ix.mu.Lock()
	r, ok := ix.files[b.file]
	if !ok {
		var err error
		if r, err = ix.open(b.file); err != nil {
			ix.mu.Unlock()
			return err
		}
		ix.files[b.file] = r
	}
	ix.mu.Unlock()
	gz, err := gzip.NewReader(bufio.NewReaderSize(io.NewSectionReader(r, b.off, b.size), 64<<10))
	if err != nil {
		return fmt.Errorf("%s at %d: %w", b.file, b.off, err)
	}
	defer gz.Close()
	sc := bufio.NewScanner(gz)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if !fn(sc.Text()) {
			return nil
		}
	}
	return sc.Err()
}

// find calls fn with each line whose key is key: from the block where
// key's lines may begin (from), until a key past it.
func (ix *zipnumIndex) find(key string, fn func(line string)) {
	ix.from(key, func(l string) bool {
		if k, _, _ := strings.Cut(l, " "); k != key {
			return false
		}
		fn(l)
		return true
	})
}

// each calls fn with every line, in order: from the first key on.
func (ix *zipnumIndex) each(fn func(line string) bool) { ix.from("", fn) }

// ZipNumNames are the files of the ZipNum form of a collection's index
// that WriteZipNum writes: NAME.idx and NAME.cdx.gz.
func ZipNumNames(name string) (idx, cdx string) { return name + ".idx", name + ".cdx.gz" }

// WriteZipNum writes the index of the WARC files at paths (deref's,
// wget's, files and folders as Open takes them, or CDXJ indexes of
// them) in the ZipNum form, beside name: name.cdx.gz (blocks of
// ZipNumLines lines, each one gzip member) and name.idx (a line for each
// block), keyed as a WACZ's are; Open takes name.idx as a collection.
// The lines are sorted in runs on disk, never held whole; nothing stands
// under the final names until both are whole.
func WriteZipNum(name string, paths ...string) (err error) {
	a, err := Open(paths...)
	if err != nil {
		return err
	}
	defer a.Close()
	idxPath, cdxPath := ZipNumNames(name)
	dir, err := filepath.Abs(filepath.Dir(idxPath))
	if err != nil {
		return err
	}
	ls := &lineSorter{}
	defer ls.cleanup()
	for _, ix := range a.indexes {
		lf := ix.form()
		var werr error
		ix.each(func(l string) bool {
			c, ok := lf.capture(l)
			if !ok {
				return true
			}
			_, rest, _ := strings.Cut(l, " ")
			ts, j, _ := strings.Cut(rest, " ")
			// The file named relative to the index where it lies under
			// its folder, else by its whole path.
			if !strings.Contains(c.File, ".wacz#") {
				file, _ := filepath.Abs(c.File)
				if rel, err := filepath.Rel(dir, file); err == nil && filepath.IsLocal(rel) {
					file = filepath.ToSlash(rel)
				}
				quoted, _ := json.Marshal(file)
				var m map[string]any
				if !strings.Contains(j, `"filename":`+string(quoted)) && json.Unmarshal([]byte(j), &m) == nil {
					m["filename"] = file
					b, _ := json.Marshal(m)
					j = string(b)
				}
			}
			werr = ls.add(waczKey(c.URL) + " " + ts + " " + j)
			return werr == nil
		})
		if werr != nil {
			return werr
		}
	}
	sorted, err := ls.sorted()
	if err != nil {
		return err
	}
	defer os.Remove(sorted.Name())
	defer sorted.Close()
	cdx, err := createBeside(cdxPath)
	if err != nil {
		return err
	}
	idx, err := createBeside(idxPath)
	if err != nil {
		cdx.Close()
		os.Remove(cdx.Name())
		return err
	}
	defer func() {
		if err != nil {
			cdx.Close()
			idx.Close()
			os.Remove(cdx.Name())
			os.Remove(idx.Name())
		}
	}()
	cw, iw := bufio.NewWriterSize(cdx, 1<<20), bufio.NewWriter(idx)
	if err = writeZipNum(bufio.NewReaderSize(sorted, 1<<20), cw, iw, filepath.Base(cdxPath)); err != nil {
		return err
	}
	if err = errors.Join(cw.Flush(), iw.Flush(), cdx.Sync(), idx.Sync(), cdx.Close(), idx.Close()); err != nil {
		return err
	}
	if err = os.Rename(cdx.Name(), cdxPath); err != nil {
		return err
	}
	return os.Rename(idx.Name(), idxPath)
}

// zipnumFile opens a loose ZipNum index (NAME.idx, its blocks in files
// beside it) as an index of the archive.
func (a *Archive) zipnumFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	defer f.Close()
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	dir := filepath.Dir(abs)
	var opened []io.Closer
	ix, err := readZipNum(bufio.NewReader(f), path, func(name string) (io.ReaderAt, error) {
		bf, err := os.Open(filepath.Join(dir, filepath.Base(name)))
		if err != nil {
			return nil, err
		}
		opened = append(opened, bf)
		return bf, nil
	}, lineForm{dir: dir, waczKeys: true})
	if err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	ix.closer = closeAll(func() []io.Closer { return opened })
	a.indexes = append(a.indexes, ix)
	return nil
}

// createBeside creates a file to be renamed to final when whole: in
// final's folder, named ".NAME-RANDOM", its mode that of a file made
// for final (0666 less the umask), not os.CreateTemp's 0600.
func createBeside(final string) (*os.File, error) {
	dir, base := filepath.Split(final)
	for {
		var b [6]byte
		rand.Read(b[:])
		f, err := os.OpenFile(filepath.Join(dir, "."+base+"-"+hex.EncodeToString(b[:])), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !os.IsExist(err) {
			return f, err
		}
	}
}

// closeAll closes what list gives when it is called.
type closeAll func() []io.Closer

func (c closeAll) Close() error {
	var errs []error
	for _, x := range c() {
		errs = append(errs, x.Close())
	}
	return errors.Join(errs...)
}
