// Package warc writes the retrievals of a fetch.Client as WARC/1.1 files
// (ISO 28500:2017): one gzip member per record, a warcinfo record first
// in every file, rolled over past a size. Records stream: a large body
// is compressed as it comes and spooled, compressed, to a temporary file
// past a small buffer, never held whole (see packedBlock).
//
// Records are built by github.com/nlnwa/gowarc, a WARC library that
// makes records of every type (resource and metadata included, not only
// HTTP exchanges), and written as its marshaler writes them (see
// marshal). The files are deref's: one
// goroutine builds the records of the bodies handed to it, a batch at a
// time, and compresses each (github.com/klauspost/compress, as gowarc's
// writer does it; a large block on a goroutine of its own) into a buffer
// that goes to the disk when it has nothing left to do, so that an
// archive of small pages costs a write per batch, not a write, a flush
// and a stat per record as gowarc's file writer makes them.
//
// The archives are read back by Open (WARC files, their CDXJ or ZipNum
// indexes, and WACZ packages read in place), packed by CreateWACZ and
// checked by ValidateWACZ; WriteZipNum writes the sharded index of a
// large collection.
//
// What each protocol's records hold, and the --warc-* flags of the
// command that drive this package: deref help warc
// (cmd/deref/help/warc.md).
package warc

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/nlnwa/gowarc"

	"github.com/urlderef/deref/protocols"
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
	// Numbered names the files NAME-00000.warc.gz, NAME-00001.warc.gz,
	// ... even without MaxSize, each from the first number that no file
	// (finished or open) has yet, so that a run resumed with the same name
	// writes beside the earlier run's files.
	Numbered bool
	// Continue takes up an archive an earlier run left (cut short by a
	// full disk, say): where NAME.warc.gz, or a file of the series, is
	// there already, the records go on in the next free
	// NAME-NNNNN.warc.gz (from NAME-00001 after NAME.warc.gz), never over
	// one, and with CDX each earlier file of the series gets its index
	// if it has none (a disk that filled may have left no room for it).
	// Without it, an existing NAME.warc.gz is an error.
	Continue bool
	// Uncompressed writes the records as they are, without gzip, into
	// NAME.warc (NAME-00000.warc, ...): wget's --no-warc-compression.
	Uncompressed bool
	// NoDigests leaves out the WARC-Block-Digest and WARC-Payload-Digest
	// fields, and with them the revisit records, which need a payload's
	// digest (wget's --no-warc-digests): the SHA-1s cost more than the
	// rest of a large record but its compression.
	NoDigests bool
	// InfoFields are more lines of the warcinfo record's block, each
	// "name: value" (wget's --warc-header).
	InfoFields []string
}

// Writer writes records into NAME.warc.gz (or its rolled-over files).
type Writer struct {
	opts Options

	dir   string // where the files are
	names *nameGenerator

	// Kept by the archive's goroutine: the file written now (nil before the
	// first record and after a roll-over: the next record starts a new
	// one, with its warcinfo record first) and that record's ID.
	out    *outFile
	infoID string
	lastID string // the ID of the record written last into out
	// broken: a record or a flush could not be written (a full disk, an
	// I/O error); the file was cut after its last whole record and
	// finished, and nothing more is written.
	broken bool
	gz     *gzip.Writer
	member *bufio.Writer // in front of gz: see memberBuffer

	// recordOptions are the options every record's builder is given,
	// all but its buffer's size: made once here, not for each record.
	// Its capacity is its length, so that a record's append copies it.
	recordOptions []gowarc.WarcRecordOption

	// The jobs waiting for the archive's goroutine, in order (see
	// enqueue), what their bodies hold in memory, and whether Close was
	// called.
	jobsMu   sync.Mutex
	jobsTook *sync.Cond // the archive's goroutine took the jobs
	jobs     []*job
	jobBytes int
	batch    int // batchJobs, or 1 (see batchJobs)
	closing  bool
	wake     chan struct{} // the jobs are a batch, or Close was called
	late     *time.Timer   // they waited batchDelay
	done     chan struct{} // the archive's goroutine finished the files

	mu      sync.Mutex
	onFile  func(path string)
	err     error
	seen    map[string]revisitRef // payload digest -> the record that holds it
	index   []cdxEntry
	offsets map[string][]int64 // where each record written starts, by file
}

// revisitRef is a record a revisit record refers to.
type revisitRef struct{ id, uri, date string }

// nameGenerator names the files of one Writer.
type nameGenerator struct {
	dir, base string
	ext       string // ".warc.gz", or ".warc" (Options.Uncompressed)
	roll      bool
	skip      bool // numbers whose files exist are passed over
	n         atomic.Int32
}

// name is the next file's name.
func (g *nameGenerator) name() string {
	if !g.roll {
		return g.base + g.ext
	}
	for {
		n := g.n.Add(1) - 1
		name := fmt.Sprintf("%s-%05d%s", g.base, n, g.ext)
		if g.skip && (exists(filepath.Join(g.dir, name)) || exists(filepath.Join(g.dir, name+".open"))) {
			continue
		}
		return name
	}
}

// indexSeries writes the index of each finished file of the series
// NAME.warc.gz, NAME-NNNNN.warc.gz that has none: a run a full disk
// stopped may have had no room left for it.
func indexSeries(dir, base, ext string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // nothing there yet
	}
	for _, e := range entries {
		n := e.Name()
		num, ok := strings.CutPrefix(strings.TrimSuffix(n, ext), base+"-")
		if !strings.HasSuffix(n, ext) || n != base+ext && (!ok || strings.Trim(num, "0123456789") != "") {
			continue
		}
		if p := filepath.Join(dir, n); !exists(IndexName(p)) {
			if err := Index(p); err != nil {
				return err
			}
		}
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// outFile is a WARC file being written, as NAME.open until finished.
type outFile struct {
	f    *os.File
	bw   *bufio.Writer
	name string // the final name, without ".open"
	size int64  // bytes written, buffered ones included
}

func (o *outFile) Write(p []byte) (int, error) {
	n, err := o.bw.Write(p)
	o.size += int64(n)
	return n, err
}

func (o *outFile) WriteString(s string) (int, error) {
	n, err := o.bw.WriteString(s)
	o.size += int64(n)
	return n, err
}

// ReadFrom copies a block into the file: from a spool's file, the
// kernel copies it where it can (the bufio.Writer's ReadFrom hands it
// to the file's when nothing is buffered).
func (o *outFile) ReadFrom(r io.Reader) (int64, error) {
	n, err := o.bw.ReadFrom(r)
	o.size += n
	return n, err
}

// fileBuffer is how much of a file is held before it goes to the disk.
const fileBuffer = 256 << 10

// Create starts writing WARC files named after name (a path without
// ".warc.gz", or ".warc" when Uncompressed). A file of that name that
// exists already is an error.
func Create(name string, o Options) (*Writer, error) {
	dir, base := filepath.Split(name)
	if base == "" {
		return nil, fmt.Errorf("warc: %q names no file", name)
	}
	if dir == "" {
		dir = "."
	}
	g := &nameGenerator{dir: dir, base: base, ext: ".warc.gz", roll: o.MaxSize > 0 || o.Numbered, skip: o.Numbered || o.Continue}
	if o.Uncompressed {
		g.ext = ".warc"
	}
	if plain := filepath.Join(dir, base+g.ext); !g.roll && (exists(plain) || exists(plain+".open")) {
		if !o.Continue {
			return nil, fmt.Errorf("warc: %s exists already", plain)
		}
		g.roll = true // the earlier run's file is the series' first
		g.n.Store(1)
	}
	if o.CDX && g.skip {
		if err := indexSeries(dir, base, g.ext); err != nil {
			return nil, err
		}
	}
	gz, err := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed) // archives are written as fast as they are fetched
	if err != nil {
		return nil, err
	}
	w := &Writer{opts: o, dir: dir, names: g, gz: gz, member: bufio.NewWriterSize(gz, memberBuffer), seen: map[string]revisitRef{}, offsets: map[string][]int64{},
		wake: make(chan struct{}, 1), late: time.NewTimer(time.Hour), done: make(chan struct{})}
	w.late.Stop()
	w.jobsTook = sync.NewCond(&w.jobsMu)
	w.batch = batchJobs
	if runtime.GOMAXPROCS(0) == 1 {
		w.batch = 1
	}
	w.recordOptions = []gowarc.WarcRecordOption{gowarc.WithBufferTmpDir(o.TempDir), gowarc.WithRecordIdFunc(newRecordID), gowarc.WithNoValidation()}
	if o.NoDigests {
		w.recordOptions = append(w.recordOptions, gowarc.WithAddMissingDigest(false)) // gowarc would add them
	}
	w.recordOptions = slices.Clip(w.recordOptions)
	go w.work()
	if o.DedupIndex != "" {
		if err := w.loadIndex(o.DedupIndex); err != nil {
			w.Close()
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
	Protocol  string    // WARC-Protocol (the IIPC extension): "gopher", "ftp", ...; several separated by ","
	IP        string    // WARC-IP-Address, when known
	// ConcurrentTo is the WARC-Record-ID of the record this one goes with
	// (an FTP file's control conversation).
	ConcurrentTo string
	Body         io.Reader // the block, streamed
	// PayloadOffset is where the payload begins in the block: after an
	// HTTP response's head; 0 for a resource.
	PayloadOffset int64
	// PayloadType and Status are what the index says of the payload: its
	// media type (an HTTP response's Content-Type) and status ("200";
	// "-" where the protocol has none).
	PayloadType, Status string
	// Group, when set, holds the record back until the group's Commit.
	Group *Group
	// ID, when set, is the record's WARC-Record-ID, a URN such as
	// "urn:uuid:...", chosen before the record is written so that later
	// records can refer to it; otherwise one is made.
	ID string
}

// ResultListType is the media type of a metadata record that is its
// URL's capture all the same: a WAIS search's result list, as deref
// --raw prints it (the search's reply is Z39.50's binary, no payload of
// its own). The index lists it as a capture, and replay shows it.
const ResultListType = protocols.ResultListType

var recordTypes = map[string]gowarc.RecordType{
	"resource": gowarc.Resource, "metadata": gowarc.Metadata, "request": gowarc.Request,
	"response": gowarc.Response, "revisit": gowarc.Revisit,
}

// Write builds r (reading its body whole, spooled) and returns its
// WARC-Record-ID; the record goes into the file in the background, in the
// order written, so that transfers need not wait for compression and the
// disk. An error writing it is returned by Err and Close.
func (w *Writer) Write(r Record) (string, error) {
	j, id, err := w.newJob(r)
	if err == nil {
		w.enqueue(j)
	}
	return id, err
}

// newJob builds r's record.
func (w *Writer) newJob(r Record) (*job, string, error) {
	t, ok := recordTypes[r.Type]
	if !ok {
		return nil, "", fmt.Errorf("warc: no record type %q", r.Type)
	}
	mem := int64(1) // the block's buffer in gowarc: only a small block goes there
	var packed *packedBlock
	if l, ok := r.Body.(interface{ Len() int }); ok && l.Len() < packedMin {
		// A body of known size gets a buffer of its size: gowarc's
		// first is 16 KiB, cleared, which on a small record costs more
		// than compressing it.
		mem = int64(l.Len()) + 1
	} else if r.Body != nil {
		packed = newPackedBlock(w.opts.TempDir, w.opts.Uncompressed) // see packedBlock
	}
	opts := append(w.recordOptions, gowarc.WithBufferMaxMemBytes(mem))
	builders.Lock() // see builders
	b := gowarc.NewRecordBuilder(t, opts...)
	builders.Unlock()
	j := &job{closers: []func() error{b.Close}, r: r, indexed: t == gowarc.Response || t == gowarc.Resource || t == gowarc.Metadata && r.MediaType == ResultListType}
	var to io.Writer = b
	if packed != nil {
		to = packed
		j.closers = append(j.closers, packed.Close)
	}
	// The digests are computed here as the block streams in: gowarc's own
	// come with a validation of every header that costs more than the
	// rest of the record.
	var dg *digester
	if !w.opts.NoDigests {
		dg = &digester{to: to, block: sha1.New(), skip: r.PayloadOffset}
		if r.PayloadOffset > 0 {
			dg.payload = sha1.New() // else the payload is the block
		}
		to = dg
	}
	n := int64(0)
	if r.Body != nil {
		var err error
		buf := copyBuffers.Get().(*[]byte)
		n, err = io.CopyBuffer(to, onlyReader{r.Body}, *buf)
		copyBuffers.Put(buf)
		if err != nil {
			j.close()
			return nil, "", err
		}
	}
	if packed != nil {
		packed.end() // its goroutine finishes it; its record's writing waits for it
	}
	if dg != nil {
		blockDigest := "sha1:" + base32.StdEncoding.EncodeToString(dg.block.Sum(nil))
		b.AddWarcHeader(fBlockDigest, blockDigest)
		if t == gowarc.Response || t == gowarc.Resource {
			payload := blockDigest
			if dg.payload != nil {
				payload = "sha1:" + base32.StdEncoding.EncodeToString(dg.payload.Sum(nil))
			}
			b.AddWarcHeader(fPayloadDigest, payload)
		}
	}
	b.AddWarcHeaderInt64(fContentLength, n)
	j.date = r.Date
	if j.date.IsZero() {
		j.date = time.Now()
	}
	j.date = j.date.UTC()
	if r.ID != "" {
		b.AddWarcHeader(fRecordID, "<"+r.ID+">")
	}
	b.AddWarcHeader(fTargetURI, r.URI)
	b.AddWarcHeaderTime(fDate, j.date)
	if r.MediaType != "" {
		b.AddWarcHeader(fContentType, r.MediaType)
	}
	for _, p := range strings.Split(r.Protocol, ",") { // "gemini,tls/1.3": one field each
		if p == "" {
			continue
		}
		b.AddWarcHeader(fProtocol, p)
	}
	if r.IP != "" {
		b.AddWarcHeader(fIPAddress, r.IP)
	}
	if r.Type == "response" && r.PayloadType != "" && headless(r.MediaType) {
		b.AddWarcHeader(fPayloadType, r.PayloadType) // the block says nothing of it
	}
	if r.ConcurrentTo != "" {
		b.AddWarcHeader(fConcurrentTo, "<"+r.ConcurrentTo+">")
	}
	rec, _, err := b.Build()
	if err != nil {
		j.close()
		return nil, "", fmt.Errorf("warc: building the %s record of %s: %w", r.Type, r.URI, err)
	}
	j.closers = append(j.closers, rec.Close)
	h := rec.WarcHeader()
	id := h.GetId(fRecordID)
	j.id = id
	j.digest = h.Get(fPayloadDigest)
	if j.indexed && j.digest != "" {
		w.mu.Lock()
		ref, dup := w.seen[j.digest]
		if !dup {
			w.seen[j.digest] = revisitRef{id: id, uri: r.URI, date: h.Get(fDate)}
		}
		w.mu.Unlock()
		if dup {
			rv, err := rec.ToRevisitRecord(&gowarc.RevisitRef{Profile: gowarc.ProfileIdenticalPayloadDigestV1_1, TargetRecordId: ref.id, TargetUri: ref.uri, TargetDate: ref.date})
			if err != nil {
				j.close()
				return nil, "", fmt.Errorf("warc: the revisit record of %s: %w", r.URI, err)
			}
			j.closers = append(j.closers, rv.Close)
			rec = rv
			packed = nil // a revisit record has no block
		}
	}
	j.rec = rec
	j.packed = packed
	j.group = r.Group
	j.size = int(min(n, memPerRecord))
	return j, id, nil
}

// The names of the fields records are given, as gowarc looks them up: it
// lowers every name it is given before it finds the field's definition
// (a new string for each name with a capital), and writes the name as
// defined ("WARC-Block-Digest"), or with http.CanonicalHeaderKey's
// capitals where it defines none ("Warc-Protocol").
const (
	fBlockDigest   = "warc-block-digest"
	fConcurrentTo  = "warc-concurrent-to"
	fContentLength = "content-length"
	fContentType   = "content-type"
	fDate          = "warc-date"
	fIPAddress     = "warc-ip-address"
	fPayloadDigest = "warc-payload-digest"
	fProtocol      = "warc-protocol"
	fPayloadType   = "warc-identified-payload-type"
	fRecordID      = "warc-record-id"
	fTargetURI     = "warc-target-uri"
	fWarcinfoID    = "warc-warcinfo-id"
)

// copyBuffers hold the buffers records are copied through: a record of a
// small page would otherwise cost more in a new buffer than in its bytes.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// onlyReader hides a reader's WriteTo, so that io.CopyBuffer uses the
// buffer given (io.MultiReader's WriteTo makes its own).
type onlyReader struct{ io.Reader }

// digester writes a block into a record (to) and computes the block's
// digest and its payload's, the payload being what follows the first skip
// bytes (no payload hash when it is the whole block).
type digester struct {
	to             io.Writer
	block, payload hash.Hash
	skip           int64
}

func (d *digester) Write(p []byte) (int, error) {
	if n, err := d.to.Write(p); err != nil {
		return n, err
	}
	d.block.Write(p)
	if d.payload == nil {
		return len(p), nil
	}
	q := p
	if d.skip > 0 {
		k := min(int64(len(q)), d.skip)
		q, d.skip = q[k:], d.skip-k
	}
	d.payload.Write(q)
	return len(p), nil
}

// builders serialises the making of gowarc's record builders and file
// readers: each makes its options, which sets a global of
// github.com/google/uuid (EnableRandPool) without a lock, which every
// uuid.New reads, so that two at once, or one beside a new record ID, are
// a data race. Records take their IDs from newRecordID instead, warcinfo
// records are made here, not inside gowarc's file writer, and readers
// are opened by openReader, so that nothing else makes one.
var builders sync.Mutex

// openReader opens the WARC file at path to read from offset on, with
// the lenient options (see builders).
func openReader(path string, offset int64) (*gowarc.WarcFileReader, error) {
	builders.Lock()
	defer builders.Unlock()
	if wacz, name, ok := splitMember(path); ok {
		sf, err := openMember(wacz, name)
		if err != nil {
			return nil, err
		}
		r, err := gowarc.NewWarcFileReaderFromStream(sf, offset, lenient...)
		if err != nil {
			sf.Close()
		}
		return r, err
	}
	return gowarc.NewWarcFileReader(path, offset, lenient...)
}

// newRecordID is a WARC-Record-ID: a random (version 4) UUID URN.
func newRecordID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const prefix = "urn:uuid:"
	var s [len(prefix) + 36]byte
	copy(s[:], prefix)
	out := s[len(prefix):]
	for i, j := 0, 0; i < len(b); i++ {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		hex.Encode(out[j:j+2], b[i:i+1])
		j += 2
	}
	return string(s[:]), nil
}

// memPerRecord is what a record holds in memory before it spools to disk.
// The jobs waiting hold about maxJobBytes of bodies at most, and so does
// the batch being written: the archive's memory stays within a few MiB,
// whatever the objects' size.
const memPerRecord = 256 << 10

// packedMin is the size from which a block is compressed on its own
// goroutine (see packedBlock): below it, handing it on costs more than
// the two processors save.
const packedMin = 64 << 10

// maxPacked is how many blocks built by the archive's goroutine may be
// compressing at once before it writes them: each holds a compressor of
// about 1 MiB.
var maxPacked = max(2, runtime.GOMAXPROCS(0))

// The archive's goroutine is woken for a batch of jobs (batchJobs, or
// batchBytes of bodies held), or batchDelay after the first job it was
// not woken for: waking it costs a thread switch, which for a small page
// costs more than the page's records. With one processor (GOMAXPROCS 1)
// it is woken for each job instead: waking it then costs no switch, and
// a batch's building would hold the processor while the next page's
// response waits, where a body's records are built while the next page
// is on its way. A job is not queued past maxJobs or maxJobBytes: its
// writer waits until the jobs are taken.
const (
	batchJobs   = 16
	batchBytes  = 256 << 10
	batchDelay  = 20 * time.Millisecond
	maxJobs     = 256
	maxJobBytes = 1 << 20
)

// job is a built record waiting for the file, a body whose records are
// to be built (fn), or a group's commit or drop.
type job struct {
	rec     gowarc.WarcRecord
	packed  *packedBlock // rec's block, compressed already; nil: rec's own
	r       Record
	id      string // the record's WARC-Record-ID
	date    time.Time
	digest  string
	indexed bool
	closers []func() error

	group  *Group // the record's group; or the group to commit or drop
	marker bool   // a commit (then set) or a drop
	then   func(file string, end int64)

	// fn, when set, makes records on the archive's goroutine, with the write
	// function it is given; size is what the job's body holds in memory.
	fn   func(write func(Record) (string, error)) error
	size int
}

func (j *job) close() {
	for i := len(j.closers) - 1; i >= 0; i-- {
		j.closers[i]()
	}
}

// enqueue hands j to the archive's goroutine, waking it when the jobs
// waiting are a batch; a job it was not woken for gets there batchDelay
// later at most.
func (w *Writer) enqueue(j *job) {
	w.jobsMu.Lock()
	for len(w.jobs) >= maxJobs || w.jobBytes >= maxJobBytes {
		w.kick()
		w.jobsTook.Wait()
	}
	first := len(w.jobs) == 0
	w.jobs = append(w.jobs, j)
	w.jobBytes += j.size
	batch := len(w.jobs) >= w.batch || w.jobBytes >= batchBytes
	if first && !batch {
		w.late.Reset(batchDelay) // for it and the jobs that join it before a batch
	}
	w.jobsMu.Unlock()
	if batch {
		w.kick()
	}
}

// kick wakes the archive's goroutine, unless it is awake already or woken.
func (w *Writer) kick() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// take is the jobs waiting, and whether Close was called; with none
// waiting, it sleeps until woken.
func (w *Writer) take() ([]*job, bool) {
	for {
		w.jobsMu.Lock()
		jobs, closing := w.jobs, w.closing
		w.jobs, w.jobBytes = nil, 0
		w.jobsTook.Broadcast()
		w.jobsMu.Unlock()
		if len(jobs) > 0 || closing {
			return jobs, closing
		}
		select {
		case <-w.wake:
		case <-w.late.C:
		}
	}
}

// work builds the records of the jobs taken, a batch at a time, and
// writes them into the file in order, with the group commits and drops
// queued beside them; a group's records wait for its commit. What it
// wrote goes to the disk whenever no job waits. One goroutine does it
// all but compress large blocks (see packedBlock): two, one building and
// one compressing every record, could take both processors of a small
// machine at once while a crawl's next response (and the server making
// it) waited, and kept more in memory.
func (w *Writer) work() {
	defer close(w.done)
	open := map[*Group]bool{} // groups holding records
	defer func() {
		for g := range open { // never committed: dropped
			for _, h := range g.held {
				h.close()
			}
		}
	}()
	// The jobs built are written in order once maxPacked of them are
	// compressing (see packedBlock), and at the end of each batch.
	var out []*job
	packing := 0
	writeOut := func() {
		for _, j := range out {
			w.handle(j, open)
		}
		out, packing = out[:0], 0
	}
	write := func(r Record) (string, error) {
		j, id, err := w.newJob(r)
		if err == nil {
			out = append(out, j)
			if j.packed != nil {
				if packing++; packing >= maxPacked {
					writeOut()
				}
			}
		}
		return id, err
	}
	for {
		jobs, closing := w.take()
		for _, j := range jobs {
			if j.fn == nil {
				out = append(out, j)
			} else if err := j.fn(write); err != nil {
				w.fail(err)
			}
		}
		writeOut()
		if closing && len(jobs) == 0 {
			break
		}
		if w.idle() {
			w.flush()
		}
	}
	w.finish()
}

// idle says whether no job waits.
func (w *Writer) idle() bool {
	w.jobsMu.Lock()
	defer w.jobsMu.Unlock()
	return len(w.jobs) == 0
}

// handle does a job on the archive's goroutine; open holds the groups
// holding records.
func (w *Writer) handle(j *job, open map[*Group]bool) {
	switch {
	case j.marker && j.then == nil: // a drop
		for _, h := range j.group.held {
			h.close()
		}
		j.group.held = nil
		delete(open, j.group)
	case j.marker:
		w.commit(j)
		delete(open, j.group)
	case j.group != nil:
		j.group.held = append(j.group.held, j)
		open[j.group] = true
	default:
		w.roll(j)
		w.put(j)
		j.close()
	}
}

// flush sends what the current file holds to the disk.
func (w *Writer) flush() {
	if w.out != nil {
		if err := w.out.bw.Flush(); err != nil {
			w.fail(fmt.Errorf("warc: %w", err))
			w.salvage(w.out.size)
		}
	}
}

// salvage ends the current file after a write failed: it keeps the
// records that reached the disk whole (those that start before clean,
// where the failed one began, and end by the file's size on disk), cuts
// the rest off, finishes the file under its name, and forgets the
// records cut, so that the file ends at a whole gzip member and its
// index lists only what it holds. Nothing more is written after it.
func (w *Writer) salvage(clean int64) {
	o := w.out
	w.broken, w.out = true, nil
	if o == nil {
		return
	}
	onDisk := int64(0)
	if st, err := o.f.Stat(); err == nil {
		onDisk = st.Size()
	}
	w.mu.Lock()
	starts := w.offsets[o.name]
	// Where a whole record ends: where the next began, or the failed one.
	ends := []int64{clean}
	if len(starts) > 1 {
		ends = append(ends, starts[1:]...)
	}
	cut := int64(0)
	for _, b := range ends {
		if b <= onDisk && b <= clean {
			cut = max(cut, b)
		}
	}
	var keep []int64
	for _, b := range starts {
		if b < cut {
			keep = append(keep, b)
		}
	}
	w.offsets[o.name] = keep
	index := w.index[:0]
	for _, e := range w.index {
		if e.file != o.name || e.offset < cut {
			index = append(index, e)
		}
	}
	w.index = index
	w.mu.Unlock()
	err := o.f.Truncate(cut)
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if cut == 0 { // not even its warcinfo record: no file
		os.Remove(o.f.Name())
		return
	}
	if err == nil {
		err = os.Rename(o.f.Name(), filepath.Join(w.dir, o.name))
	}
	if err != nil {
		w.fail(fmt.Errorf("warc: cutting %s after its last whole record: %w", o.name, err))
	}
}

// finish finishes the current file: flushed, closed and renamed without
// ".open".
func (w *Writer) finish() {
	o := w.out
	if o == nil {
		return
	}
	if err := o.bw.Flush(); err != nil {
		w.fail(fmt.Errorf("warc: %w", err))
		w.salvage(o.size)
		return
	}
	w.out, w.lastID = nil, ""
	err := o.f.Close()
	if err == nil {
		err = os.Rename(o.f.Name(), filepath.Join(w.dir, o.name))
	}
	if err != nil {
		w.fail(fmt.Errorf("warc: %w", err))
	}
}

// commit writes a group's records into one file, then calls its then
// with where they end.
func (w *Writer) commit(j *job) {
	w.roll(nil)
	for _, h := range j.group.held {
		w.put(h)
		h.close()
	}
	j.group.held = nil
	file, end := "", int64(0)
	if w.out != nil {
		w.flush()
	}
	switch {
	case w.broken:
		end = -1 // not written whole: see Commit
	case w.out != nil:
		file, end = filepath.Join(w.dir, w.out.name), w.out.size
	}
	j.then(file, end)
}

// roll closes a file grown past MaxSize, so that the next record (j, if
// not nil) starts another; but a record concurrent to the one written
// last (an HTTP request after its response, an FTP control conversation
// after its file) goes into that one's file, so that a rollover never
// parts a retrieval's records.
func (w *Writer) roll(j *job) {
	if w.opts.MaxSize > 0 && w.out != nil && w.out.size >= w.opts.MaxSize &&
		(j == nil || j.r.ConcurrentTo == "" || j.r.ConcurrentTo != w.lastID) {
		w.finish()
	}
}

func (w *Writer) put(j *job) {
	if w.broken {
		return
	}
	if w.out == nil {
		if err := w.start(); err != nil {
			w.fail(err)
			w.salvage(0) // a file without its warcinfo record is no file
			return
		}
	}
	j.rec.WarcHeader().SetId(fWarcinfoID, w.infoID)
	w.write(j)
}

// marshal writes a record into the current file as one gzip member (or
// as it is, when Uncompressed) and returns where it starts.
func (w *Writer) marshal(rec gowarc.WarcRecord) (int64, error) {
	start := w.out.size
	if w.opts.Uncompressed {
		return start, marshal(w.out, rec)
	}
	w.gz.Reset(w.out)
	w.member.Reset(w.gz)
	if err := marshal(w.member, rec); err != nil {
		return start, err
	}
	if err := w.member.Flush(); err != nil {
		return start, err
	}
	return start, w.gz.Close()
}

// stringWriter is what marshal writes into.
type stringWriter interface {
	io.Writer
	io.StringWriter
}

// marshal writes rec as gowarc's Marshaler writes it (the version line,
// the header's fields in their order, a blank line, the block and
// CRLF CRLF), byte for byte, but without the fmt.Fprintf it makes of
// each field, which with its two allocations cost a small record more
// than its SHA-1. The writers it is given (a bufio.Writer, a
// bytes.Buffer) keep their first error, which its last writes return.
func marshal(w stringWriter, rec gowarc.WarcRecord) error {
	w.WriteString(rec.Version().String())
	w.WriteString("\r\n")
	for _, f := range *rec.WarcHeader() {
		w.WriteString(f.Name)
		w.WriteString(": ")
		w.WriteString(f.Value)
		w.WriteString("\r\n")
	}
	if _, err := w.WriteString("\r\n"); err != nil {
		return err
	}
	r, err := rec.Block().RawBytes()
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		return err
	}
	_, err = w.WriteString(crlfcrlf)
	return err
}

// memberBuffer is the size of the buffer between marshal and the
// compressor: marshal writes a record's head a piece at a time, and the
// compressor takes a small record in one write instead. The buffer's
// ReadFrom also spares marshal's io.Copy of the block a buffer of its
// own.
const memberBuffer = 32 << 10

// start begins a file, with its warcinfo record.
func (w *Writer) start() error {
	name := w.names.name()
	f, err := os.OpenFile(filepath.Join(w.dir, name+".open"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
	if err != nil {
		return fmt.Errorf("warc: %w", err)
	}
	w.out = &outFile{f: f, bw: bufio.NewWriterSize(f, fileBuffer), name: name}
	builders.Lock()
	b := gowarc.NewRecordBuilder(gowarc.Warcinfo, gowarc.WithRecordIdFunc(newRecordID), gowarc.WithAddMissingDigest(true),
		gowarc.WithAddMissingContentLength(true), gowarc.WithAddMissingRecordId(true))
	builders.Unlock()
	defer b.Close()
	// The fields as WARC 1.1's annex names them (gowarc's WarcFields
	// would capitalise them).
	info := "software: " + w.opts.Software + "\r\nformat: WARC File Format 1.1\r\n" +
		"conformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n"
	if w.opts.CommandLine != "" {
		info += "description: " + oneLine(w.opts.CommandLine) + "\r\n"
	}
	for _, f := range w.opts.InfoFields {
		info += oneLine(f) + "\r\n"
	}
	io.WriteString(b, info)
	b.AddWarcHeaderTime(gowarc.WarcDate, time.Now().UTC())
	b.AddWarcHeader(gowarc.ContentType, "application/warc-fields")
	b.AddWarcHeader(gowarc.WarcFilename, name)
	rec, _, err := b.Build()
	if err != nil {
		return fmt.Errorf("warc: the warcinfo record: %w", err)
	}
	defer rec.Close()
	if _, err := w.marshal(rec); err != nil {
		return fmt.Errorf("warc: writing the warcinfo record: %w", err)
	}
	w.mu.Lock()
	w.offsets[name] = append(w.offsets[name], 0)
	onFile := w.onFile
	w.mu.Unlock()
	if onFile != nil {
		onFile(filepath.Join(w.dir, name))
	}
	w.infoID = rec.WarcHeader().GetId(gowarc.WarcRecordID)
	return nil
}

func (w *Writer) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

// write writes a job's record into the current file.
func (w *Writer) write(j *job) {
	var offset int64
	var err error
	if j.packed != nil {
		offset, err = w.marshalPacked(j.rec, j.packed)
	} else {
		offset, err = w.marshal(j.rec)
	}
	name := w.out.name
	if err != nil {
		w.fail(fmt.Errorf("warc: writing the %s record of %s: %w", j.r.Type, j.r.URI, err))
		if w.out.size == offset && w.out.bw.Flush() == nil {
			return // the record failed before any of it went into the file (its block): the file goes on
		}
		w.salvage(offset)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.offsets[name] = append(w.offsets[name], offset)
	w.lastID = j.id
	if w.opts.CDX && j.indexed {
		mime := j.r.PayloadType
		if mime == "" {
			mime = j.r.MediaType
		}
		status := j.r.Status
		if status == "" {
			status = "-"
		}
		w.index = append(w.index, cdxEntry{url: j.r.URI, date: j.date, mime: mime, status: status, digest: j.digest, file: name, offset: offset, revisit: j.rec.Type() == gowarc.Revisit, protocol: j.r.Protocol})
	}
}

// Group holds back the records of the retrievals made with its context
// (Context; the Recorder passes it on) until Commit writes them together,
// all in one file, so that an archive and a record of what it holds (a
// crawl's state) can be kept in step: Commit's callback runs once the
// records are in the file. A group is used once.
type Group struct {
	w    *Writer
	held []*job // kept by the archive's goroutine
}

// NewGroup starts a group of records.
func (w *Writer) NewGroup() *Group { return &Group{w: w} }

type groupKey struct{}

// Context is ctx carrying g: the records a Recorder makes of retrievals
// with it join g.
func (g *Group) Context(ctx context.Context) context.Context {
	return context.WithValue(ctx, groupKey{}, g)
}

// groupOf is the group ctx carries, if any.
func groupOf(ctx context.Context) *Group {
	g, _ := ctx.Value(groupKey{}).(*Group)
	return g
}

// Commit writes the group's records (those whose Write has returned, and
// those of retrievals whose body is closed, which are built before the
// commit is done) into the file, in the order written and all in one file, then
// calls then with that file's path (its final name, without ".open";
// empty when nothing was ever written) and where the records end, which
// is the file's size then; end is -1 when they could not be written
// whole (the writer failed: Err says why), and the group is then not in
// the archive. then runs on the writer's goroutine, before any record
// written after Commit. It must be called before Close.
func (g *Group) Commit(then func(file string, end int64)) {
	g.w.enqueue(&job{group: g, marker: true, then: then})
}

// Drop discards the group's records. It must be called before Close.
func (g *Group) Drop() {
	g.w.enqueue(&job{group: g, marker: true})
}

// build has fn, which makes records with the write function it is
// given, run on the archive's goroutine, in order with the records written
// (a group's records are held for its commit as Write's are); size is
// what fn's body holds in memory. An error it returns is the writer's.
func (w *Writer) build(size int, fn func(write func(Record) (string, error)) error) {
	w.enqueue(&job{fn: fn, size: size})
}

// OnFile sets a function called with the path of each file begun (its
// final name, without ".open"), once its warcinfo record is written. It
// must be set before the first Write.
func (w *Writer) OnFile(fn func(path string)) {
	w.mu.Lock()
	w.onFile = fn
	w.mu.Unlock()
}

// Err is the first error writing a record into the file, if any.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
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

// Close writes the records still queued, finishes the files
// (NAME.warc.gz.open becomes NAME.warc.gz) and writes their indexes. It
// must not be called while a Write is under way.
func (w *Writer) Close() error {
	w.jobsMu.Lock()
	w.closing = true
	w.jobsMu.Unlock()
	w.kick()
	<-w.done
	err := w.Err()
	if w.opts.CDX {
		// Of what the files hold whole, even when a write failed.
		if ierr := w.writeIndexes(); err == nil {
			err = ierr
		}
	}
	return err
}
