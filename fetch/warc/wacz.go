package warc

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/html"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// WACZVersion is the version of the WACZ format CreateWACZ writes.
const WACZVersion = "1.1.1"

// WACZOptions say what a WACZ's manifest names.
type WACZOptions struct {
	Title    string // "" means the first file's name
	Software string // the program that made it
}

// pageTypes are the media types of the captures a person would open:
// HTML pages and the listings of every protocol (a Gopher menu, a
// Prospero or Nex folder, a gemtext page, a WAIS search's results).
var pageTypes = map[string]bool{
	"text/html": true, "application/xhtml+xml": true, "application/gopher-menu": true, "text/gemini": true,
	"application/x-prospero-listing": true, "text/x-nex-directory": true, protocols.ResultListType: true,
}

// waczPage is a line of pages/pages.jsonl.
type waczPage struct {
	ID    string `json:"id"`
	URL   string `json:"url"`
	TS    string `json:"ts"`
	Title string `json:"title,omitempty"`
}

// waczResource is a file of the package, as datapackage.json lists it.
type waczResource struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Hash  string `json:"hash"`
	Bytes int64  `json:"bytes"`
}

type datapackage struct {
	Profile      string         `json:"profile"`
	WACZVersion  string         `json:"wacz_version"`
	Title        string         `json:"title"`
	Created      string         `json:"created"`
	Software     string         `json:"software"`
	MainPageURL  string         `json:"mainPageUrl,omitempty"`
	MainPageDate string         `json:"mainPageDate,omitempty"`
	Resources    []waczResource `json:"resources"`
}

// CreateWACZ packs WARC files into a WACZ at out (the WACZ 1.1.1 layout
// py-wacz writes): archive/ the WARC files, stored as they are (never
// compressed again); indexes/ their index, keyed as wabac.js looks
// captures up (waczKey): index.cdxj for up to ZipNumLines captures, else
// the ZipNum pair index.idx and index.cdx.gz; pages/pages.jsonl the
// captures a person would open (HTML pages, menus, folders, newsgroups,
// searches, gemtext pages), each with its time and the title the object
// gives; datapackage.json with every file's sha256 and size; and
// datapackage-digest.json. Every entry is stored, so that a reader (deref
// serve, ReplayWeb.page) reads each in place by HTTP ranges. The files
// stream through and the index lines are sorted in runs on disk, never
// held whole; nothing stands under out's name until the package is whole.
func CreateWACZ(out string, warcs []string, o WACZOptions) (err error) {
	if len(warcs) == 0 {
		return errors.New("warc: a WACZ needs at least one WARC file")
	}
	seen := map[string]string{}
	for _, p := range warcs {
		if q, dup := seen[filepath.Base(p)]; dup {
			return fmt.Errorf("warc: %s and %s have the same name, and archive/ holds one file of a name", q, p)
		}
		seen[filepath.Base(p)] = p
	}
	ls := &lineSorter{}
	defer ls.cleanup()
	pages, err := os.CreateTemp("", "deref-pages-*.jsonl")
	if err != nil {
		return err
	}
	defer os.Remove(pages.Name())
	defer pages.Close()
	pw := bufio.NewWriter(pages)
	pw.WriteString(`{"format":"json-pages-1.0","id":"pages","title":"All Pages"}` + "\n")
	enc := json.NewEncoder(pw)
	lines := 0
	var main *waczPage
	for _, p := range warcs {
		name := filepath.Base(p)
		var werr error
		records := 0
		err := scanEach(p, func(e cdxEntry, end int64) {
			records++
			if werr != nil {
				return
			}
			_, rest, _ := strings.Cut(cdxjLine(e, name, end), " ")
			werr = ls.add(waczKey(e.url) + " " + rest)
			lines++
			if isPage(p, e) {
				pg := waczPage{ID: pageID(e), URL: e.url, TS: e.date.UTC().Format(time.RFC3339), Title: pageTitle(p, e)}
				if main == nil || pg.TS < main.TS {
					main = &pg
				}
				werr = enc.Encode(pg)
			}
		}, func(int64) {})
		if err != nil {
			return err
		}
		if werr != nil {
			return werr
		}
		if records == 0 {
			return fmt.Errorf("warc: %s: no capture in it (not a WARC file, or one of warcinfo records only)", p)
		}
	}
	if err := pw.Flush(); err != nil {
		return err
	}
	sorted, err := ls.sorted()
	if err != nil {
		return err
	}
	defer os.Remove(sorted.Name())
	defer sorted.Close()

	tmp, err := createBeside(out)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	zw := zip.NewWriter(bw)
	var res []waczResource
	now := time.Now()
	add := func(name string, r io.Reader) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store, Modified: now})
		if err != nil {
			return err
		}
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(w, h), r)
		if err != nil {
			return err
		}
		res = append(res, waczResource{Name: path.Base(name), Path: name, Hash: "sha256:" + hex.EncodeToString(h.Sum(nil)), Bytes: n})
		return nil
	}
	for _, p := range warcs {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		err = add("archive/"+filepath.Base(p), f)
		f.Close()
		if err != nil {
			return err
		}
	}
	if lines <= ZipNumLines {
		if err := add("indexes/index.cdxj", bufio.NewReader(sorted)); err != nil {
			return err
		}
	} else {
		// The ZipNum pair: its blocks written aside first, the .idx
		// (a line for each block) held.
		blocks, err := os.CreateTemp("", "deref-wacz-*.cdx.gz")
		if err != nil {
			return err
		}
		defer os.Remove(blocks.Name())
		defer blocks.Close()
		var idx bytes.Buffer
		cw := bufio.NewWriterSize(blocks, 1<<20)
		if err := errors.Join(writeZipNum(bufio.NewReaderSize(sorted, 1<<20), cw, &idx, "index.cdx.gz"), cw.Flush()); err != nil {
			return err
		}
		if _, err := blocks.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if err := add("indexes/index.cdx.gz", bufio.NewReader(blocks)); err != nil {
			return err
		}
		if err := add("indexes/index.idx", &idx); err != nil {
			return err
		}
	}
	if _, err := pages.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if err := add("pages/pages.jsonl", bufio.NewReader(pages)); err != nil {
		return err
	}
	dp := datapackage{Profile: "data-package", WACZVersion: WACZVersion, Title: o.Title, Created: now.UTC().Format(time.RFC3339), Software: o.Software, Resources: res}
	if dp.Title == "" {
		dp.Title = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(warcs[0]), ".gz"), ".warc")
	}
	if main != nil {
		dp.MainPageURL, dp.MainPageDate = main.URL, main.TS
	}
	b, err := json.MarshalIndent(dp, "", "  ")
	if err != nil {
		return err
	}
	if err := add("datapackage.json", bytes.NewReader(b)); err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	digest, _ := json.Marshal(map[string]string{"path": "datapackage.json", "hash": "sha256:" + hex.EncodeToString(sum[:])})
	if err = add("datapackage-digest.json", bytes.NewReader(digest)); err != nil {
		return err
	}
	if err = zw.Close(); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}

// isPage says whether a capture is one a person would open: an HTML page
// or a listing of any protocol's (pageTypes), or one its scheme's
// Replayer reads back as a listing (an FTP folder, a newsgroup), of a
// capture that succeeded.
func isPage(file string, e cdxEntry) bool {
	if e.revisit || !(e.status == "-" || e.status == "" || e.status == "200" || e.status == "20") {
		return false
	}
	if pageTypes[e.mime] {
		return true
	}
	u, err := url.Parse(e.url)
	if err != nil {
		return false
	}
	sc, _ := fetch.DefaultClient().Scheme(u.Scheme)
	rp, ok := sc.Fetcher.(protocols.Replayer)
	if !ok {
		return false
	}
	pl := &lazyPayload{file: file, offset: e.offset}
	defer pl.Close()
	resp, err := rp.Replay(u, e.mime, e.date, pl, 1<<20)
	if err != nil {
		return false
	}
	if resp.Body != nil {
		resp.Body.Close()
	}
	return resp.Kind != protocols.KindFile
}

// lazyPayload is a capture's payload, its record opened at the first
// read: a Replayer that never reads it (a file's) costs nothing.
type lazyPayload struct {
	file   string
	offset int64
	pl     *Payload
	err    error
}

func (l *lazyPayload) Read(b []byte) (int, error) {
	if l.pl == nil && l.err == nil {
		l.pl, l.err = (&Archive{}).Open(Capture{File: l.file, Offset: l.offset, Type: "resource"})
	}
	if l.err != nil {
		return 0, l.err
	}
	return l.pl.Read(b)
}

func (l *lazyPayload) Close() error {
	if l.pl != nil {
		l.pl.Close()
		l.pl = nil
	}
	l.err = io.EOF
	return nil
}

// pageID is a page's id in pages.jsonl: its record's place, unique in
// the package.
func pageID(e cdxEntry) string {
	sum := sha256.Sum256([]byte(e.file + "#" + strconv.FormatInt(e.offset, 10)))
	return hex.EncodeToString(sum[:8])
}

// pageTitle is the title a page gives: an HTML page's <title>, a gemtext
// page's first heading; "" where it gives none. The first 256 KiB are
// read.
func pageTitle(file string, e cdxEntry) string {
	isHTML := e.mime == "text/html" || e.mime == "application/xhtml+xml"
	if !isHTML && e.mime != "text/gemini" {
		return ""
	}
	pl, err := (&Archive{}).Open(Capture{File: file, Offset: e.offset, Type: "resource"})
	if err != nil {
		return ""
	}
	defer pl.Close()
	r := io.LimitReader(pl, 256<<10)
	title := ""
	if isHTML {
		z := html.NewTokenizer(r)
		for in := false; ; {
			tt := z.Next()
			if tt == html.ErrorToken {
				break
			}
			name, _ := z.TagName()
			if tt == html.StartTagToken && string(name) == "title" {
				in = true
			} else if in && tt == html.TextToken {
				title += string(z.Text())
			} else if in {
				break
			}
		}
	} else {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if h, ok := strings.CutPrefix(sc.Text(), "#"); ok && !strings.HasPrefix(h, "#") {
				title = h
				break
			}
		}
	}
	title = strings.Join(strings.Fields(strings.ToValidUTF8(title, "\uFFFD")), " ")
	if len(title) > 1000 {
		title = strings.ToValidUTF8(title[:1000], "")
	}
	return title
}

// ValidateWACZ checks a WACZ as py-wacz's validate does, and more: the
// files the format requires, every file of the package listed in
// datapackage.json with its sha256 and size, the manifest's digest, the
// WARC files stored (not compressed again), and every index line
// pointing at a whole record of its URL. Each problem is one line; none
// means the package is sound.
func ValidateWACZ(file string) ([]string, error) {
	zr, err := zip.OpenReader(file)
	if err != nil {
		return nil, fmt.Errorf("warc: %s: %w", file, err)
	}
	defer zr.Close()
	var problems []string
	say := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	entries := map[string]*zip.File{}
	for _, f := range zr.File {
		entries[f.Name] = f
	}
	read := func(name string) ([]byte, bool) {
		f, ok := entries[name]
		if !ok {
			return nil, false
		}
		rc, err := f.Open()
		if err != nil {
			say("%s: %v", name, err)
			return nil, false
		}
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(rc, 64<<20))
		if err != nil {
			say("%s: %v", name, err)
			return nil, false
		}
		return b, true
	}
	for _, req := range []string{"datapackage.json", "datapackage-digest.json", "pages/pages.jsonl"} {
		if _, ok := entries[req]; !ok {
			say("%s is missing", req)
		}
	}
	hasArchive, hasIndex := false, false
	for name, f := range entries {
		switch {
		case strings.HasPrefix(name, "archive/"):
			hasArchive = true
			if f.Method != zip.Store {
				say("%s is compressed in the ZIP (WARC files are stored as they are)", name)
			}
		case strings.HasPrefix(name, "indexes/"):
			hasIndex = true
		}
	}
	if !hasArchive {
		say("no WARC file under archive/")
	}
	if !hasIndex {
		say("no index under indexes/")
	}
	manifest, ok := read("datapackage.json")
	if ok {
		if d, ok := read("datapackage-digest.json"); ok {
			var dg struct{ Path, Hash string }
			sum := sha256.Sum256(manifest)
			if json.Unmarshal(d, &dg) != nil || dg.Hash != "sha256:"+hex.EncodeToString(sum[:]) {
				say("datapackage-digest.json does not give datapackage.json's sha256")
			}
		}
		var dp datapackage
		if err := json.Unmarshal(manifest, &dp); err != nil {
			say("datapackage.json: %v", err)
		}
		listed := map[string]bool{}
		for _, r := range dp.Resources {
			listed[r.Path] = true
			f, ok := entries[r.Path]
			if !ok {
				say("%s is listed in datapackage.json and not in the package", r.Path)
				continue
			}
			rc, err := f.Open()
			if err != nil {
				say("%s: %v", r.Path, err)
				continue
			}
			h := sha256.New()
			n, err := io.Copy(h, rc)
			rc.Close()
			switch {
			case err != nil:
				say("%s: %v", r.Path, err)
			case n != r.Bytes:
				say("%s: %d bytes, datapackage.json says %d", r.Path, n, r.Bytes)
			case "sha256:"+hex.EncodeToString(h.Sum(nil)) != r.Hash:
				right := "sha256:" + hex.EncodeToString(h.Sum(nil))
				if twice, err := hashedTwice(f); err == nil && twice == r.Hash {
					say("%s: datapackage.json gives the sha256 of its bytes read twice, js-wacz 0.1.6's fault (harvard-lil/js-wacz#127); its own is %s", r.Path, right)
				} else {
					say("%s: its sha256 is not the one datapackage.json gives", r.Path)
				}
			}
		}
		for name, f := range entries {
			if name != "datapackage.json" && name != "datapackage-digest.json" && !f.FileInfo().IsDir() && !listed[name] {
				say("%s is not listed in datapackage.json", name)
			}
		}
	}
	raw, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	check := lineChecker(raw, entries, say)
	blockFiles := map[string]bool{}
	for name, f := range entries {
		if !strings.HasPrefix(name, "indexes/") || !strings.HasSuffix(name, ".idx") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			say("%s: %v", name, err)
			continue
		}
		dir := path.Dir(name)
		zi, err := readZipNum(bufio.NewReader(rc), name, func(block string) (io.ReaderAt, error) {
			bf, ok := entries[path.Join(dir, block)]
			switch {
			case !ok:
				return nil, fmt.Errorf("no %s in the package", path.Join(dir, block))
			case bf.Method != zip.Store:
				return nil, fmt.Errorf("%s is compressed in the ZIP (its blocks are read in place)", path.Join(dir, block))
			}
			at, err := bf.DataOffset()
			if err != nil {
				return nil, err
			}
			return io.NewSectionReader(raw, at, int64(bf.UncompressedSize64)), nil
		}, lineForm{})
		rc.Close()
		if err != nil {
			say("%v", err)
			continue
		}
		for i, b := range zi.blocks {
			bn := path.Join(dir, b.file)
			blockFiles[bn] = true
			n := 0
			err := zi.block(i, func(l string) bool {
				n++
				if n == 1 {
					if k, _, _ := strings.Cut(l, " "); k != b.key {
						say("%s line %d: its block's first line is keyed %q, not %q", name, i+2, k, b.key)
					}
				}
				check(fmt.Sprintf("%s block %d line %d", bn, i+1, n), l)
				return true
			})
			if err != nil {
				say("%s line %d: its block: %v", name, i+2, err)
			}
		}
	}
	for name, f := range entries {
		if !strings.HasPrefix(name, "indexes/") || blockFiles[name] {
			continue
		}
		gz := strings.HasSuffix(name, ".cdx.gz") || strings.HasSuffix(name, ".cdxj.gz")
		if !gz && !strings.HasSuffix(name, ".cdxj") && !strings.HasSuffix(name, ".cdx") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			say("%s: %v", name, err)
			continue
		}
		var r io.Reader = rc
		if gz {
			if r, err = gzip.NewReader(rc); err != nil {
				say("%s: %v", name, err)
				rc.Close()
				continue
			}
		}
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		prev := ""
		for n := 1; sc.Scan(); n++ {
			if sc.Text() < prev {
				say("%s line %d: out of order (a reader's binary search misses it)", name, n)
			}
			prev = sc.Text()
			check(fmt.Sprintf("%s line %d", name, n), sc.Text())
		}
		if err := sc.Err(); err != nil {
			say("%s: %v", name, err)
		}
		rc.Close()
	}
	sort.Strings(problems)
	return problems, nil
}

// hashedTwice is the sha256 js-wacz 0.1.6 records for a file: each
// 64 KiB chunk read (Node's stream reads) hashed twice
// (harvard-lil/js-wacz#127).
func hashedTwice(f *zip.File) (string, error) {
	rc, err := f.Open()
	if err != nil {
		return "", err
	}
	defer rc.Close()
	h := sha256.New()
	buf := make([]byte, 64<<10)
	for {
		n, err := io.ReadFull(rc, buf)
		h.Write(buf[:n])
		h.Write(buf[:n])
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
		}
		if err != nil {
			return "", err
		}
	}
}

// lineChecker checks that an index line names a whole record of its URL
// in a WARC file of the package, saying where a line does not.
func lineChecker(raw io.ReaderAt, entries map[string]*zip.File, say func(string, ...any)) func(where, line string) {
	return func(where, l string) {
		parts := strings.SplitN(l, " ", 3)
		var j struct{ URL, Offset, Length, Filename jsonText }
		if len(parts) != 3 || json.Unmarshal([]byte(parts[2]), &j) != nil {
			say("%s: not a CDXJ line", where)
			return
		}
		file := strings.TrimPrefix(string(j.Filename), "archive/")
		f, ok := entries["archive/"+file]
		if !ok {
			say("%s: %s is not in archive/", where, j.Filename)
			return
		}
		off, err1 := strconv.ParseInt(string(j.Offset), 10, 64)
		n, err2 := strconv.ParseInt(string(j.Length), 10, 64)
		at, err3 := f.DataOffset()
		if err1 != nil || err2 != nil || err3 != nil || f.Method != zip.Store || off < 0 || n <= 0 || off+n > int64(f.UncompressedSize64) {
			say("%s: offset %s and length %s are not in %s", where, j.Offset, j.Length, j.Filename)
			return
		}
		if uri, ok := recordURI(io.NewSectionReader(raw, at+off, n)); !ok || uri != strings.Trim(string(j.URL), "<>") {
			say("%s: no whole record of %s at %s of %s", where, j.URL, j.Offset, j.Filename)
		}
	}
}

// recordURI reads the one record at the start of r (a gzip member, or a
// record as it is) whole, and gives its WARC-Target-URI.
func recordURI(r io.Reader) (string, bool) {
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return "", false
		}
		gz.Multistream(false)
		br = bufio.NewReader(gz)
	}
	first, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(first, "WARC/1.") {
		return "", false
	}
	uri, length := "", int64(-1)
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			return "", false
		}
		l = strings.TrimRight(l, "\r\n")
		if l == "" {
			break
		}
		k, v, _ := strings.Cut(l, ":")
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "warc-target-uri":
			uri = strings.Trim(strings.TrimSpace(v), "<>")
		case "content-length":
			length, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	if length < 0 {
		return "", false
	}
	if n, err := io.CopyN(io.Discard, br, length); err != nil || n != length {
		return "", false
	}
	return uri, true
}
