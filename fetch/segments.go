package fetch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urlderef/deref/internal/safedir"
	"github.com/urlderef/deref/url"
)

// SegmentsSuffix ends the name of the file beside NAME.part that keeps a
// segmented download's progress ([DownloadOptions.Segments]).
const SegmentsSuffix = ".part.segments"

// minSegment is the smallest range worth a connection of its own.
const minSegment = 1 << 20

// errNoResume is a segment's finding that the server sends from the
// start whatever offset is asked: the download goes on over one
// connection.
var errNoResume = fmt.Errorf("%w: the server no longer resumes", ErrProtocol)

// segment is one byte range [start, end) of a segmented download; done
// bytes of it, from start, are in the part file.
type segment struct {
	start, end int64
	done       atomic.Int64
}

// segState is what NAME.part.segments holds.
type segState struct {
	size int64
	mod  time.Time
	segs []*segment
}

func (s *segState) written() int64 {
	var n int64
	for _, sg := range s.segs {
		n += sg.done.Load()
	}
	return n
}

func (s *segState) encode() []byte {
	var b bytes.Buffer
	mod := "-"
	if !s.mod.IsZero() {
		mod = s.mod.UTC().Format(time.RFC3339Nano)
	}
	fmt.Fprintf(&b, "deref segments 1\nsize %d\nmodified %s\n", s.size, mod)
	for _, sg := range s.segs {
		fmt.Fprintf(&b, "%d %d %d\n", sg.start, sg.end, sg.done.Load())
	}
	return b.Bytes()
}

// parseSegState reads NAME.part.segments; it must describe contiguous
// ranges covering size exactly.
func parseSegState(b []byte) (*segState, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) < 4 || lines[0] != "deref segments 1" {
		return nil, errors.New("not a segment state")
	}
	s := &segState{}
	var err error
	if s.size, err = strconv.ParseInt(strings.TrimPrefix(lines[1], "size "), 10, 64); err != nil || s.size <= 0 {
		return nil, errors.New("bad size")
	}
	if m := strings.TrimPrefix(lines[2], "modified "); m != "-" {
		if s.mod, err = time.Parse(time.RFC3339Nano, m); err != nil {
			return nil, errors.New("bad time")
		}
	}
	var at int64
	for _, l := range lines[3:] {
		f := strings.Fields(l)
		if len(f) != 3 {
			return nil, errors.New("bad segment")
		}
		var v [3]int64
		for i := range f {
			if v[i], err = strconv.ParseInt(f[i], 10, 64); err != nil {
				return nil, errors.New("bad segment")
			}
		}
		if v[0] != at || v[1] <= v[0] || v[2] < 0 || v[2] > v[1]-v[0] {
			return nil, errors.New("segments not contiguous")
		}
		sg := &segment{start: v[0], end: v[1]}
		sg.done.Store(v[2])
		s.segs = append(s.segs, sg)
		at = v[1]
	}
	if at != s.size {
		return nil, errors.New("segments do not cover the object")
	}
	return s, nil
}

// split divides size into n ranges of at least minSegment bytes (fewer
// when size is small).
func split(size int64, n int) []*segment {
	n = int(min(int64(n), max(size/minSegment, 1)))
	out := make([]*segment, n)
	for i := range n {
		out[i] = &segment{start: size * int64(i) / int64(n), end: size * int64(i+1) / int64(n)}
	}
	return out
}

// downloadSegments fetches u into dir/NAME.part over o.Segments
// connections and renames it NAME. It reports handled false, having
// written nothing under NAME, when the download should go over one
// connection instead: the size unknown or small, or the server not
// resuming.
func (c *Client) downloadSegments(ctx context.Context, u *url.URL, dir string, d *safedir.Dir, name string, o DownloadOptions) (string, bool, error) {
	since, localSize := condition(d, name, o)
	head, err := c.fetchWith(ctx, u, FetchOptions{HeadOnly: true, ModTimeHint: o.ModTimeHint, Trace: o.Trace, Redirect: o.Redirect, IfModifiedSince: since, LocalSize: localSize, IfNoneMatch: o.IfNoneMatch, segment: true})
	if err != nil {
		return "", true, err
	}
	head.Body.Close()
	size := head.Size
	if head.Kind != KindFile || size < max(o.SegmentMin, 2*minSegment) {
		return "", false, nil
	}
	if o.Received != nil {
		o.Received(head)
	}
	part, stateName := name+PartSuffix, name+SegmentsSuffix

	// Continue what an earlier attempt left, if it was this object.
	var st *segState
	if o.Resume || o.ResumePart {
		if b, err := readSmall(d, stateName, 1<<20); err == nil {
			if s, err := parseSegState(b); err == nil && s.size == size && s.mod.Equal(head.ModTime) {
				if psize, regular, err := d.Stat(part); err == nil && regular && psize == size {
					st = s
				}
			}
		}
	}
	flags := os.O_CREATE
	if st == nil {
		st = &segState{size: size, mod: head.ModTime, segs: split(size, o.Segments)}
		flags |= os.O_TRUNC
	}
	f, err := d.OpenFile(part, flags, 0o644)
	if err != nil {
		return "", true, WriteError(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return "", true, WriteError(err)
	}
	save := func() error { return writeState(d, stateName, st.encode()) }
	if err := save(); err != nil {
		return "", true, WriteError(err)
	}

	// The workers, a ticker saving the state and reporting progress.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	fail := func(err error) {
		once.Do(func() { first = err })
		if !Temporary(err) {
			cancel() // the others would fail too, or are not wanted (no resume)
		}
	}
	// What was there before the workers start: measured after, it could
	// count the first bytes of this run (a race that made a server that
	// ignores ranges an error instead of a download over one connection).
	start, before := time.Now(), st.written()
	for _, sg := range st.segs {
		if sg.done.Load() == sg.end-sg.start {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.fetchSegment(sctx, u, f, sg, size); err != nil {
				fail(err)
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	report := func(last bool) {
		p := Progress{URL: u, Bytes: st.written() - before, Total: size - before, Offset: before, Start: start, Done: last}
		if c.Progress != nil {
			c.Progress(p)
		}
		if o.Progress != nil {
			o.Progress(p)
		}
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	saved := time.Now()
wait:
	for {
		select {
		case <-done:
			break wait
		case <-tick.C:
			report(false)
			if time.Since(saved) >= time.Second {
				save() // a lagging state only costs bytes fetched again
				saved = time.Now()
			}
		}
	}
	serr := save()
	if errors.Is(first, errNoResume) && before == 0 {
		f.Close()
		d.Remove(stateName)
		d.Remove(part)        // its holes are no prefix of anything
		return "", false, nil // one connection, from the start
	}
	if first != nil {
		return "", true, first
	}
	if serr != nil {
		return "", true, WriteError(serr)
	}
	report(true)
	if o.Checksum != nil {
		// The segments arrived out of order: the file is read back once.
		sum := newHash(o.Checksum.Algorithm)
		if err := hashPrefix(sum, d, part, size); err != nil {
			return "", true, WriteError(err)
		}
		if !bytes.Equal(sum.Sum(nil), o.Checksum.Sum) {
			f.Close()
			d.Remove(part)
			d.Remove(stateName)
			return "", true, fmt.Errorf("%w: %s of %s is %x, want %x", ErrChecksum, o.Checksum.Algorithm, name, sum.Sum(nil), o.Checksum.Sum)
		}
	}
	if !o.KeepModTime && !head.ModTime.IsZero() {
		_ = d.SetTimes(f, part, time.Now(), head.ModTime)
	}
	if err := f.Close(); err != nil {
		return "", true, WriteError(err)
	}
	if err := d.Rename(part, name); err != nil {
		return "", true, WriteError(err)
	}
	d.Remove(stateName)
	return filepath.Join(rootName(o.Root), dir, name), true, nil
}

// fetchSegment fetches what is missing of sg and writes it at its offset.
func (c *Client) fetchSegment(ctx context.Context, u *url.URL, f *os.File, sg *segment, size int64) error {
	pos := sg.start + sg.done.Load()
	resp, err := c.fetchWith(ctx, u, FetchOptions{Offset: pos, segment: true})
	if err != nil {
		return err
	}
	defer resp.Body.Close() // early, for all but the last segment: the transfer is abandoned
	if resp.Offset != pos {
		return errNoResume
	}
	if resp.Size >= 0 && resp.Offset+resp.Size != size {
		return fmt.Errorf("%w: the object is now %d bytes, not %d: it changed during the download", ErrProtocol, resp.Offset+resp.Size, size)
	}
	// Whole buffers are written: concurrent writes to one file contend
	// for it, and fewer, larger ones contend less.
	buf := make([]byte, 512<<10)
	for pos < sg.end {
		n, err := io.ReadFull(resp.Body, buf[:min(int64(len(buf)), sg.end-pos)])
		if n > 0 {
			if _, werr := f.WriteAt(buf[:n], pos); werr != nil {
				return WriteError(werr)
			}
			pos += int64(n)
			sg.done.Add(int64(n))
		}
		switch {
		case (err == io.EOF || err == io.ErrUnexpectedEOF) && pos < sg.end:
			return fmt.Errorf("%w: the segment from byte %d ended at %d", ErrShortBody, sg.start, pos)
		case err == io.EOF, err == io.ErrUnexpectedEOF:
			return nil
		case err != nil:
			return err
		}
	}
	return nil
}

// writeState replaces the state file by a new one, whole.
func writeState(d *safedir.Dir, name string, b []byte) error {
	tmp := name + ".new"
	f, err := d.OpenFile(tmp, os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return d.Rename(tmp, name)
}

// readSmall reads the file name of d, at most limit bytes of it.
func readSmall(d *safedir.Dir, name string, limit int64) ([]byte, error) {
	f, err := d.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}
