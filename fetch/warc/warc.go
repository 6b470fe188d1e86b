// Package warc writes the retrievals of a fetch.Client as WARC/1.1 files
// (ISO 28500:2017): one gzip member per record, a warcinfo record first
// in every file, rolled over past a size. Records stream: a body is
// spooled to a temporary file past a small buffer, never held whole.
//
// Records are built and written by github.com/nlnwa/gowarc, a WARC library
// that makes records of every type (resource and metadata included, not
// only HTTP exchanges) with their digests, and writes files with
// warcinfo records and rollover.
package warc

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nlnwa/gowarc"
)

// Options adjust Create.
type Options struct {
	// MaxSize > 0 rolls over to a new file past this many bytes: the
	// files are then NAME-00000.warc.gz, NAME-00001.warc.gz, ...;
	// otherwise the one file is NAME.warc.gz.
	MaxSize int64
	// Software and CommandLine go into each file's warcinfo record; the
	// command line must have its passwords redacted already.
	Software, CommandLine string
	// TempDir is where bodies are spooled; empty means os.TempDir().
	TempDir string
	// CDX writes NAME.cdxj beside each WARC file (NAME-00000.cdxj beside
	// NAME-00000.warc.gz): a CDXJ line per response, resource and revisit
	// record, as pywb reads them.
	CDX bool
	// DedupIndex is the CDXJ index of an earlier run: a payload it lists
	// becomes a revisit record here, as a payload already written in this
	// run always does (the identical-payload-digest profile).
	DedupIndex string
}

// Writer writes records into NAME.warc.gz (or its rolled-over files).
type Writer struct {
	w    *gowarc.WarcFileWriter
	opts Options

	dir string // where the files are

	mu      sync.Mutex
	seen    map[string]revisitRef // payload digest -> the record that holds it
	index   []cdxEntry
	offsets map[string][]int64 // where each record written starts, by file
}

// revisitRef is a record a revisit record refers to.
type revisitRef struct{ id, uri, date string }

// nameGenerator names the files of one Writer.
type nameGenerator struct {
	dir, base string
	roll      bool
	n         atomic.Int32
}

func (g *nameGenerator) NewWarcfileName() (string, string) {
	if !g.roll {
		return g.dir, g.base + ".warc"
	}
	n := g.n.Add(1) - 1
	return g.dir, fmt.Sprintf("%s-%05d.warc", g.base, n)
}

// Create starts writing WARC files named after name (a path without
// ".warc.gz"). A file of that name that exists already is an error.
func Create(name string, o Options) (*Writer, error) {
	dir, base := filepath.Split(name)
	if base == "" {
		return nil, fmt.Errorf("warc: %q names no file", name)
	}
	if dir == "" {
		dir = "."
	}
	g := &nameGenerator{dir: dir, base: base, roll: o.MaxSize > 0}
	max := o.MaxSize
	if max <= 0 {
		max = math.MaxInt64
	}
	if !g.roll {
		if _, err := os.Stat(filepath.Join(dir, base+".warc.gz")); err == nil {
			return nil, fmt.Errorf("warc: %s exists already", filepath.Join(dir, base+".warc.gz"))
		}
	}
	fw := gowarc.NewWarcFileWriter(
		gowarc.WithFileNameGenerator(g),
		gowarc.WithMaxFileSize(max),
		gowarc.WithCompression(true),
		gowarc.WithOpenFileSuffix(".open"),
		gowarc.WithWarcInfoFunc(func(b gowarc.WarcRecordBuilder) error {
			// The fields as WARC 1.1 annex names them (gowarc's own
			// WarcFields would capitalise them).
			info := "software: " + o.Software + "\r\nformat: WARC File Format 1.1\r\n" +
				"conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"
			if o.CommandLine != "" {
				info += "description: " + oneLine(o.CommandLine) + "\r\n"
			}
			_, err := io.WriteString(b, info)
			return err
		}),
		gowarc.WithRecordOptions(gowarc.WithBufferTmpDir(o.TempDir), gowarc.WithBufferMaxMemBytes(1<<20)),
	)
	w := &Writer{w: fw, opts: o, dir: dir, seen: map[string]revisitRef{}, offsets: map[string][]int64{}}
	if o.DedupIndex != "" {
		if err := w.loadIndex(o.DedupIndex); err != nil {
			fw.Close()
			return nil, err
		}
	}
	return w, nil
}

// Record is one record to write.
type Record struct {
	Type      string    // "resource", "metadata", "request", "response"
	URI       string    // WARC-Target-URI, password redacted
	Date      time.Time // WARC-Date; the retrieval's start
	MediaType string    // Content-Type of the block
	Protocol  string    // WARC-Protocol (the IIPC extension): "gopher", "ftp", ...
	IP        string    // WARC-IP-Address, when known
	// ConcurrentTo is the WARC-Record-ID of the record this one goes with
	// (an FTP file's control conversation).
	ConcurrentTo string
	Body         io.Reader // the block, streamed
	// PayloadType and Status are what the index says of the payload: its
	// media type (an HTTP response's Content-Type) and status ("200";
	// "-" where the protocol has none).
	PayloadType, Status string
}

var recordTypes = map[string]gowarc.RecordType{
	"resource": gowarc.Resource, "metadata": gowarc.Metadata, "request": gowarc.Request,
	"response": gowarc.Response, "revisit": gowarc.Revisit,
}

// Write writes r and returns its WARC-Record-ID.
func (w *Writer) Write(r Record) (string, error) {
	t, ok := recordTypes[r.Type]
	if !ok {
		return "", fmt.Errorf("warc: no record type %q", r.Type)
	}
	b := gowarc.NewRecordBuilder(t, gowarc.WithBufferTmpDir(w.opts.TempDir), gowarc.WithBufferMaxMemBytes(1<<20),
		gowarc.WithAddMissingDigest(true), gowarc.WithAddMissingContentLength(true), gowarc.WithAddMissingRecordId(true))
	defer b.Close()
	if r.Body != nil {
		if _, err := io.Copy(b, r.Body); err != nil {
			return "", err
		}
	}
	date := r.Date
	if date.IsZero() {
		date = time.Now()
	}
	b.AddWarcHeader(gowarc.WarcTargetURI, r.URI)
	b.AddWarcHeaderTime(gowarc.WarcDate, date.UTC())
	if r.MediaType != "" {
		b.AddWarcHeader(gowarc.ContentType, r.MediaType)
	}
	if r.Protocol != "" {
		b.AddWarcHeader("WARC-Protocol", r.Protocol)
	}
	if r.IP != "" {
		b.AddWarcHeader(gowarc.WarcIPAddress, r.IP)
	}
	if r.ConcurrentTo != "" {
		b.AddWarcHeader(gowarc.WarcConcurrentTo, "<"+r.ConcurrentTo+">")
	}
	rec, _, err := b.Build()
	if err != nil {
		return "", fmt.Errorf("warc: building the %s record of %s: %w", r.Type, r.URI, err)
	}
	defer rec.Close()
	h := rec.WarcHeader()
	id := h.GetId(gowarc.WarcRecordID)
	digest := h.Get(gowarc.WarcPayloadDigest)
	if digest == "" && t == gowarc.Resource {
		digest = h.Get(gowarc.WarcBlockDigest)
	}
	indexed := t == gowarc.Response || t == gowarc.Resource
	if indexed && digest != "" {
		w.mu.Lock()
		ref, dup := w.seen[digest]
		if !dup {
			w.seen[digest] = revisitRef{id: id, uri: r.URI, date: h.Get(gowarc.WarcDate)}
		}
		w.mu.Unlock()
		if dup {
			rv, err := rec.ToRevisitRecord(&gowarc.RevisitRef{Profile: gowarc.ProfileIdenticalPayloadDigestV1_1, TargetRecordId: ref.id, TargetUri: ref.uri, TargetDate: ref.date})
			if err != nil {
				return "", fmt.Errorf("warc: the revisit record of %s: %w", r.URI, err)
			}
			defer rv.Close()
			rec = rv
		}
	}
	for _, res := range w.w.Write(rec) {
		if res.Err != nil {
			return "", fmt.Errorf("warc: writing the %s record of %s: %w", r.Type, r.URI, res.Err)
		}
		w.mu.Lock()
		w.offsets[res.FileName] = append(w.offsets[res.FileName], res.FileOffset)
		w.mu.Unlock()
		if w.opts.CDX && indexed {
			mime := r.PayloadType
			if mime == "" {
				mime = r.MediaType
			}
			status := r.Status
			if status == "" {
				status = "-"
			}
			w.mu.Lock()
			w.index = append(w.index, cdxEntry{url: r.URI, date: date.UTC(), mime: mime, status: status, digest: digest, file: res.FileName, offset: res.FileOffset, revisit: rec.Type() == gowarc.Revisit})
			w.mu.Unlock()
		}
	}
	return id, nil
}

// oneLine keeps a value on its line of a warc-fields block.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, s)
}

// Close finishes the files (NAME.warc.gz.open becomes NAME.warc.gz) and
// writes their indexes.
func (w *Writer) Close() error {
	if err := w.w.Close(); err != nil {
		return err
	}
	if w.opts.CDX {
		return w.writeIndexes()
	}
	return nil
}
