package warc

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/klauspost/compress/flate"
	"github.com/nlnwa/gowarc"
)

// A large block is compressed as it streams in, not after: its record's
// head (which holds the block's length and digests) is known only at its
// end, and would have to wait for the whole block to be read again and
// compressed behind it. The record's gzip member is then put together
// from deflate segments, as pigz joins the pieces it compresses apart:
// the head in a stored block, the block's pieces each ended by a sync
// flush (so that it ends on a byte and not as the last block), and the
// record's closing CRLF CRLF in a final stored block; the member's
// CRC-32 is the head's combined with the block's. A reader sees one
// member, like any other.
//
// packedBlock is such a block being compressed: into memory up to
// memPerRecord, then into a temporary file. It is cut into pieces of
// pieceSize, each compressed on a goroutine of its own (at most
// GOMAXPROCS at once, over all blocks) and ended by a sync flush, as pigz
// cuts a file; a goroutine of the block's puts the pieces in order into
// the spool. Its digests (computed by the writer) and its compression
// thus take every processor there is, and the compression of a block
// goes on while the next records are built.
type packedBlock struct {
	spool spool
	raw   bool // spooled as it is, for an uncompressed archive
	crc   uint32
	n     int64   // the block's length, uncompressed
	piece *[]byte // the piece being filled, if any
	// The pieces' results, in order, to the goroutine that spools them;
	// nil once the block is ended.
	order chan chan pieceResult
	done  chan error // that goroutine's end, with its error; nil once had
	err   error
}

// pieceResult is a piece compressed, or its error.
type pieceResult struct {
	out *bytes.Buffer
	err error
}

// flaters hold the compressors of large blocks: each holds about 1 MiB,
// which a piece of its own would make anew.
var flaters = sync.Pool{New: func() any {
	fw, _ := flate.NewWriter(nil, flate.BestSpeed)
	return fw
}}

// pieceSize is the size of the pieces a block is compressed in, and
// piecesAhead how many of a block's may be compressing or waiting to be
// spooled while the next is filled.
const (
	pieceSize   = 256 << 10
	piecesAhead = 4
)

var (
	pieces  = sync.Pool{New: func() any { b := make([]byte, 0, pieceSize); return &b }}
	outputs = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	// compressing holds a place for each piece being compressed.
	compressing = make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))
)

// putPiece gives a piece's buffer back to pieces.
func putPiece(b *[]byte) {
	*b = (*b)[:0]
	pieces.Put(b)
}

// newPackedBlock starts a block; a raw one (for an uncompressed archive)
// is spooled as it comes, by its writer.
func newPackedBlock(tempDir string, raw bool) *packedBlock {
	p := &packedBlock{spool: spool{dir: tempDir}, raw: raw}
	if !raw {
		p.order, p.done = make(chan chan pieceResult, piecesAhead), make(chan error, 1)
		go p.collect(p.order)
	}
	return p
}

// collect spools the pieces' results in order, until they end; after an
// error it only gives their buffers back.
func (p *packedBlock) collect(order <-chan chan pieceResult) {
	var err error
	for res := range order {
		r := <-res
		if err == nil {
			err = r.err
		}
		if err == nil {
			_, err = p.spool.Write(r.out.Bytes())
		}
		r.out.Reset()
		outputs.Put(r.out)
	}
	p.done <- err
}

// send hands the piece filled to a goroutine that compresses it, once
// fewer than GOMAXPROCS pieces are being compressed.
func (p *packedBlock) send() {
	piece := p.piece
	p.piece = nil
	res := make(chan pieceResult, 1)
	p.order <- res
	compressing <- struct{}{}
	go func() {
		defer func() { <-compressing }()
		out := outputs.Get().(*bytes.Buffer)
		fw := flaters.Get().(*flate.Writer)
		fw.Reset(out)
		_, err := fw.Write(*piece)
		if err == nil {
			err = fw.Flush() // ends the piece on a byte, not as the last block
		}
		fw.Reset(nil)
		flaters.Put(fw)
		putPiece(piece)
		res <- pieceResult{out, err}
	}()
}

func (p *packedBlock) Write(b []byte) (int, error) {
	if p.raw {
		if p.err != nil {
			return 0, p.err
		}
		n, err := p.spool.Write(b)
		p.n += int64(n)
		p.err = err
		return n, err
	}
	n := len(b)
	p.crc = crc32.Update(p.crc, crc32.IEEETable, b)
	p.n += int64(n)
	for len(b) > 0 {
		if p.piece == nil {
			p.piece = pieces.Get().(*[]byte)
		}
		k := min(len(b), pieceSize-len(*p.piece))
		*p.piece = append(*p.piece, b[:k]...)
		b = b[k:]
		if len(*p.piece) == pieceSize {
			p.send()
		}
	}
	return n, nil
}

// end ends the block: what it holds of its last piece is compressed,
// and its goroutine finishes spooling the pieces.
func (p *packedBlock) end() {
	if p.order == nil {
		return
	}
	if p.piece != nil {
		p.send()
	}
	close(p.order)
	p.order = nil
}

// wait ends the block and waits until it is compressed.
func (p *packedBlock) wait() error {
	p.end()
	if p.done != nil {
		p.err = <-p.done
		p.done = nil
	}
	return p.err
}

// Close drops the block.
func (p *packedBlock) Close() error {
	p.wait()
	return p.spool.Close()
}

// spool holds bytes in memory up to memPerRecord, then in a temporary
// file (removed at once: the open file is enough), written through a
// buffer: a chunked HTTP body comes in writes of a few kilobytes.
type spool struct {
	dir string
	buf bytes.Buffer
	f   *os.File
	fw  *bufio.Writer
}

func (s *spool) Write(b []byte) (int, error) {
	if s.f == nil && s.buf.Len()+len(b) <= memPerRecord {
		return s.buf.Write(b)
	}
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, "deref-warc-*")
		if err != nil {
			return 0, err
		}
		os.Remove(f.Name())
		s.f, s.fw = f, bufio.NewWriterSize(f, spoolBuffer)
		if _, err := s.buf.WriteTo(s.fw); err != nil {
			return 0, err
		}
		s.buf = bytes.Buffer{}
	}
	return s.fw.Write(b)
}

// spoolBuffer is the size of a spool file's buffer.
const spoolBuffer = 64 << 10

// reader reads what the spool holds, from its start, and says how much
// it holds.
func (s *spool) reader() (io.Reader, int64, error) {
	if s.f == nil {
		return &s.buf, int64(s.buf.Len()), nil
	}
	if err := s.fw.Flush(); err != nil {
		return nil, 0, err
	}
	n, err := s.f.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = s.f.Seek(0, io.SeekStart)
	}
	return onlyReader{s.f}, n, err
}

// writeTo copies what the spool holds into w: from its file as an
// *os.File, which the kernel copies from where w's ReadFrom ends in a
// file (copy_file_range on Linux).
func (s *spool) writeTo(w io.Writer) error {
	r, _, err := s.reader()
	if err != nil {
		return err
	}
	if s.f != nil {
		r = s.f
	}
	_, err = io.Copy(w, r)
	return err
}

func (s *spool) Close() error {
	s.buf = bytes.Buffer{}
	if s.f != nil {
		err := s.f.Close()
		s.f = nil
		return err
	}
	return nil
}

// gzipHead is the head of each gzip member, as klauspost/compress's
// gzip writer makes it at BestSpeed: no name, no time, XFL 4 (fastest),
// OS unknown.
var gzipHead = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 0xff}

// marshalPacked writes rec, whose block is p, into the current file as
// one gzip member (as it is, for an uncompressed archive), and returns
// where it starts. rec was built without
// its block: marshal writes its head and its closing CRLF CRLF, p the
// rest.
func (w *Writer) marshalPacked(rec gowarc.WarcRecord, p *packedBlock) (int64, error) {
	start := w.out.size
	if err := p.wait(); err != nil {
		return start, fmt.Errorf("compressing the block: %w", err)
	}
	var hb bytes.Buffer
	if err := marshal(&hb, rec); err != nil {
		return start, err
	}
	b := hb.Bytes()
	head, tail := b[:len(b)-len(crlfcrlf)], b[len(b)-len(crlfcrlf):]
	if string(tail) != crlfcrlf {
		return start, errUnframed
	}
	if p.raw {
		if _, err := w.out.Write(head); err != nil {
			return start, err
		}
		if err := p.spool.writeTo(w.out); err != nil {
			return start, err
		}
		_, err := w.out.Write(tail)
		return start, err
	}
	if _, err := w.out.Write(gzipHead); err != nil {
		return start, err
	}
	if err := writeStored(w.out, head, false); err != nil {
		return start, err
	}
	if err := p.spool.writeTo(w.out); err != nil {
		return start, err
	}
	if err := writeStored(w.out, tail, true); err != nil {
		return start, err
	}
	crc := crc32.Update(crc32Combine(crc32.ChecksumIEEE(head), p.crc, p.n), crc32.IEEETable, tail)
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], crc)
	binary.LittleEndian.PutUint32(trailer[4:], uint32(int64(len(head))+p.n+int64(len(tail))))
	_, err := w.out.Write(trailer[:])
	return start, err
}

const crlfcrlf = "\r\n\r\n"

var errUnframed = errors.New("a record's serialisation does not end in CRLF CRLF")

// writeStored writes b as deflate stored blocks, starting on a byte; the
// last of them is the stream's last block when final.
func writeStored(w io.Writer, b []byte, final bool) error {
	for {
		n := min(len(b), 0xffff)
		last := n == len(b)
		var h [5]byte
		if final && last {
			h[0] = 1
		}
		binary.LittleEndian.PutUint16(h[1:], uint16(n))
		binary.LittleEndian.PutUint16(h[3:], ^uint16(n))
		if _, err := w.Write(h[:]); err != nil {
			return err
		}
		if _, err := w.Write(b[:n]); err != nil {
			return err
		}
		if b = b[n:]; last {
			return nil
		}
	}
}

// crc32Combine is the CRC-32 (IEEE) of A followed by B, given A's, B's
// and B's length: zlib's crc32_combine (1.2.12 and later), which
// multiplies crc1 by x^(8 len2) modulo the CRC's polynomial, the power
// made of the table of x^(2^k).
func crc32Combine(crc1, crc2 uint32, len2 int64) uint32 {
	if len2 <= 0 {
		return crc1
	}
	return multModP(xPow8N(len2), crc1) ^ crc2
}

// multModP is a times b modulo the CRC's polynomial, in its reflected
// bit order (the highest bit the coefficient of x^0).
func multModP(a, b uint32) uint32 {
	var p uint32
	for m := uint32(1) << 31; ; m >>= 1 {
		if a&m != 0 {
			p ^= b
			if a&(m-1) == 0 {
				return p
			}
		}
		if b&1 != 0 {
			b = b>>1 ^ crc32.IEEE
		} else {
			b >>= 1
		}
	}
}

// xPow2 holds x^(2^k) modulo the CRC's polynomial.
var xPow2 = func() (t [32]uint32) {
	p := uint32(1) << 30 // x^1
	t[0] = p
	for k := 1; k < 32; k++ {
		p = multModP(p, p)
		t[k] = p
	}
	return t
}()

// xPow8N is x^(8n) modulo the CRC's polynomial: n zero bytes.
func xPow8N(n int64) uint32 {
	p := uint32(1) << 31 // x^0
	for k := 3; n != 0; n, k = n>>1, k+1 {
		if n&1 != 0 {
			p = multModP(xPow2[k&31], p)
		}
	}
	return p
}
