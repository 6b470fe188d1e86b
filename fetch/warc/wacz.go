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

	"github.com/urlderef/deref/protocols"
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
// compressed again), indexes/index.cdxj their index, pages/pages.jsonl
// the captures a person would open (HTML pages, menus, folders,
// searches), datapackage.json with every file's sha256 and size, and
// datapackage-digest.json. The files stream through; nothing stands
// under out's name until the package is whole.
func CreateWACZ(out string, warcs []string, o WACZOptions) (err error) {
	if len(warcs) == 0 {
		return errors.New("warc: a WACZ needs at least one WARC file")
	}
	var lines []string
	var pages []waczPage
	for _, p := range warcs {
		entries, offsets, err := scanIndex(p)
		if err != nil {
			return err
		}
		ls, err := indexLinesAs(p, filepath.Base(p), entries, offsets)
		if err != nil {
			return err
		}
		lines = append(lines, ls...)
		for _, e := range entries {
			if !e.revisit && (pageTypes[e.mime] || e.mime == "text/plain" && strings.HasSuffix(e.url, "/")) && (e.status == "-" || e.status == "200" || e.status == "20" || e.status == "") {
				pages = append(pages, waczPage{URL: e.url, TS: e.date.UTC().Format(time.RFC3339)})
			}
		}
	}
	sort.Strings(lines)
	sort.SliceStable(pages, func(i, j int) bool { return pages[i].TS < pages[j].TS })

	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+"-*")
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
	add := func(name string, method uint16, r io.Reader) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method, Modified: time.Now()})
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
		err = add("archive/"+filepath.Base(p), zip.Store, f)
		f.Close()
		if err != nil {
			return err
		}
	}
	if err := add("indexes/index.cdxj", zip.Deflate, strings.NewReader(strings.Join(lines, "\n")+"\n")); err != nil {
		return err
	}
	var pj bytes.Buffer
	pj.WriteString(`{"format":"json-pages-1.0","id":"pages","title":"All Pages"}` + "\n")
	enc := json.NewEncoder(&pj)
	for _, pg := range pages {
		enc.Encode(pg)
	}
	if err := add("pages/pages.jsonl", zip.Deflate, &pj); err != nil {
		return err
	}
	dp := datapackage{Profile: "data-package", WACZVersion: WACZVersion, Title: o.Title, Created: time.Now().UTC().Format(time.RFC3339), Software: o.Software, Resources: res}
	if dp.Title == "" {
		dp.Title = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(warcs[0]), ".gz"), ".warc")
	}
	if len(pages) > 0 {
		dp.MainPageURL, dp.MainPageDate = pages[0].URL, pages[0].TS
	}
	b, err := json.MarshalIndent(dp, "", "  ")
	if err != nil {
		return err
	}
	if err := add("datapackage.json", zip.Deflate, bytes.NewReader(b)); err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	digest, _ := json.Marshal(map[string]string{"path": "datapackage.json", "hash": "sha256:" + hex.EncodeToString(sum[:])})
	res = res[:len(res)-1] // the digest file lists the manifest only
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "datapackage-digest.json", Method: zip.Deflate, Modified: time.Now()})
	if err == nil {
		_, err = w.Write(digest)
	}
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if err == nil {
		err = tmp.Close()
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
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
				say("%s: its sha256 is not the one datapackage.json gives", r.Path)
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
	for name := range entries {
		if strings.HasPrefix(name, "indexes/") && strings.HasSuffix(name, ".cdxj") {
			if b, ok := read(name); ok {
				checkIndexLines(raw, entries, name, b, say)
			}
		}
	}
	sort.Strings(problems)
	return problems, nil
}

// checkIndexLines checks that each line of a CDXJ index names a whole
// record of its URL in a WARC file of the package.
func checkIndexLines(raw io.ReaderAt, entries map[string]*zip.File, name string, index []byte, say func(string, ...any)) {
	for i, l := range strings.Split(strings.TrimSpace(string(index)), "\n") {
		parts := strings.SplitN(l, " ", 3)
		var j struct{ URL, Offset, Length, Filename string }
		if len(parts) != 3 || json.Unmarshal([]byte(parts[2]), &j) != nil {
			say("%s line %d: not a CDXJ line", name, i+1)
			continue
		}
		f, ok := entries["archive/"+j.Filename]
		if !ok {
			say("%s line %d: %s is not in archive/", name, i+1, j.Filename)
			continue
		}
		off, err1 := strconv.ParseInt(j.Offset, 10, 64)
		n, err2 := strconv.ParseInt(j.Length, 10, 64)
		at, err3 := f.DataOffset()
		if err1 != nil || err2 != nil || err3 != nil || f.Method != zip.Store || off < 0 || n <= 0 || off+n > int64(f.UncompressedSize64) {
			say("%s line %d: offset %s and length %s are not in %s", name, i+1, j.Offset, j.Length, j.Filename)
			continue
		}
		if uri, ok := recordURI(io.NewSectionReader(raw, at+off, n)); !ok || uri != j.URL {
			say("%s line %d: no whole record of %s at %s of %s", name, i+1, j.URL, j.Offset, j.Filename)
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
