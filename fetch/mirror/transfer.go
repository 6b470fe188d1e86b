package mirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/safedir"
	"github.com/urlderef/deref/internal/walk"
	"github.com/urlderef/deref/url"
)

// settleFile fetches one file that is new or may have changed.
func (m *run) settleFile(ctx context.Context, fj *fileJob) {
	action := ActionNew
	if fj.update {
		action = ActionUpdate
	}
	k := fj.c
	if m.o.DryRun {
		reason := ""
		if action == ActionUpdate && m.o.OnlyNewer && m.tree.Conditional() {
			// The real run asks the server (If-Modified-Since), which
			// may well answer "not modified".
			action, reason = ActionCheck, "only the server can tell whether it changed"
		}
		m.emit(Event{Type: EventDone, Path: fj.rel, URL: redacted(k.u), Action: action, Reason: reason, Size: k.size})
		return
	}
	var since time.Time
	if m.o.OnlyNewer && fj.local != nil && m.tree.Conditional() {
		since = fj.local.mod
	}
	if m.archiveFailed() {
		return // the run stops for it (see archiveFailed)
	}
	var got int64
	err := m.retry(ctx, fj.rel, k.u, func() error {
		release, err := m.hostSlot(ctx, k.u)
		if err != nil {
			return err
		}
		defer release()
		n, err := m.fetchFile(ctx, fj, since)
		got += n
		return err
	})
	switch {
	case errors.Is(err, fetch.ErrNotModified):
		m.dropPart(fj)
		m.emit(Event{Type: EventDone, Path: fj.rel, URL: redacted(k.u), Action: ActionUnchanged, Reason: "not modified", Size: k.size})
	case err != nil:
		if ctx.Err() == nil {
			m.emit(Event{Type: EventDone, Path: fj.rel, URL: redacted(k.u), Action: ActionFail, Err: err, Bytes: got, Size: k.size})
		}
	default:
		reason := ""
		if fj.same {
			action, reason = ActionUnchanged, "fetched again: the same bytes"
		} else if action == ActionUpdate && !m.o.OnlyNewer && fj.local != nil && sameAsListed(k, fj.local) {
			// Fetched again (OnlyNewer off), and the listing gives it the
			// size and time of the copy it replaced: nothing changed.
			action, reason = ActionUnchanged, "fetched again: the same size and time"
		}
		m.emit(Event{Type: EventDone, Path: fj.rel, URL: redacted(k.u), Action: action, Reason: reason, Bytes: got, Size: k.size})
	}
}

// archiveFailed says whether the Client's Recorder (an archive, such as
// fetch/warc's) can no longer write, and then stops the run as a full
// disk does, since what is fetched after it would be missing from the
// archive. Whoever set the Recorder reports its error.
func (m *run) archiveFailed() bool {
	r, ok := m.c.Recorder.(interface{ Err() error })
	if !ok {
		return false
	}
	err := r.Err()
	if err == nil {
		return false
	}
	m.mu.Lock()
	m.full = true
	m.mu.Unlock()
	m.stop(err) // the Recorder's owner reports err (deref mirror: --warc-file)
	return true
}

// fetchFile makes one attempt: it continues NAME.part where one is there
// and the server can resume, writes the rest, sets the time and renames.
// It returns the bytes written in this attempt.
func (m *run) fetchFile(ctx context.Context, fj *fileJob, since time.Time) (int64, error) {
	k := fj.c
	if m.o.Segments > 1 && m.limiter == nil && since.IsZero() && k.size >= max(m.o.SegmentMin, 2<<20) {
		return m.fetchSegmented(ctx, fj)
	}
	o := m.askFor(fj, since)
	resp, err := m.c.FetchWith(ctx, k.u, o)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.Kind != fetch.KindFile {
		return 0, fmt.Errorf("%w: %s is a %s, not a file", fetch.ErrNotRetrievable, k.u.Redacted(), resp.Kind)
	}
	offset := o.Offset
	if resp.Offset != offset {
		offset = 0 // the server sent the whole file
	}
	total := resp.Size
	if total >= 0 {
		total += offset
	}
	m.emit(Event{Type: EventStart, Path: fj.rel, URL: redacted(k.u), Size: total, Offset: offset})
	p, err := m.openPart(fj, offset)
	if err != nil {
		return 0, fetch.WriteError(err)
	}
	n, err := m.receive(ctx, fj, p, resp)
	return n, m.keepPart(fj, p, resp, n, err)
}

// askFor says what one attempt at fj asks of the server: where to resume,
// since when it counts as changed, and what the listing already told.
func (m *run) askFor(fj *fileJob, since time.Time) fetch.FetchOptions {
	k := fj.c
	offset := max(fj.part, 0)
	if k.size >= 0 && offset >= k.size {
		offset = 0 // as long as the whole file or longer: it cannot be a prefix of it
	}
	if m.c.Recorder != nil {
		offset = 0 // an archive holds each file whole: a resume would give it the file's end
	}
	o := fetch.FetchOptions{Offset: offset, IfModifiedSince: since, SizeHint: k.size}
	if !since.IsZero() && fj.local != nil {
		o.LocalSize = fj.local.size // a copy of another size is not as new, whatever the times
	}
	if !k.mod.IsZero() && (k.exact || precision(k.mod) == time.Second) {
		o.ModTimeHint = k.mod // exact (MLSD, or MDTM asked for the folder at once): no MDTM needed
	}
	if m.o.Events != nil {
		rel, u := fj.rel, redacted(k.u)
		o.Progress = func(p fetch.Progress) {
			m.o.Events(Event{Type: EventProgress, Path: rel, URL: u, Bytes: p.Bytes, Size: p.Total, Offset: offset})
		}
	}
	return o
}

// partFile is NAME.part open for one attempt, in its folder.
type partFile struct {
	d            *safedir.Dir
	f            *os.File
	folder, name string
	offset       int64
	v            *verifier
}

// openPart opens fj's NAME.part to be written from offset (truncated when
// offset is 0), with the verifier of its checksum, if it has one.
func (m *run) openPart(fj *fileJob, offset int64) (*partFile, error) {
	folder, name := path.Split(fj.rel)
	p := &partFile{folder: folder, name: name, offset: offset}
	var err error
	if p.d, err = m.dir(folder); err != nil {
		return nil, err
	}
	flags := os.O_CREATE
	if offset == 0 {
		flags |= os.O_TRUNC
	}
	if p.f, err = p.d.OpenFile(name+partSuffix, flags, 0o644); err != nil {
		return nil, err
	}
	if offset > 0 {
		if _, err := p.f.Seek(offset, io.SeekStart); err != nil {
			p.f.Close()
			return nil, err
		}
	}
	if p.v, err = m.newVerifier(fj, folder+name+partSuffix, offset); err != nil {
		p.f.Close()
		return nil, err
	}
	return p, nil
}

// receive copies the body into p, paced by the rate limit and through the
// checksum as it arrives, and checks the checksum at the end; a file that
// fails it is removed, not kept to resume.
func (m *run) receive(ctx context.Context, fj *fileJob, p *partFile, resp *fetch.Response) (int64, error) {
	var body io.Reader = resp.Body
	if m.limiter != nil {
		body = walk.RateReader(ctx, resp.Body, m.limiter)
	}
	var w io.Writer = p.f
	if p.v != nil {
		w = io.MultiWriter(p.f, p.v.h) // every byte through the digest, as it arrives
	}
	n, err := io.Copy(w, body)
	if err == nil {
		err = resp.Body.Close()
	}
	if err == nil && p.v != nil {
		if err = p.v.check(fj.rel); err != nil {
			p.f.Close()
			p.d.Remove(p.name + partSuffix)
			p.f = nil
			fj.part = -1
		}
	}
	return n, err
}

// keepPart settles an attempt that wrote n bytes with result err: a whole
// file gets the server's time and its final name; what arrived of a
// broken one stays in NAME.part for the next attempt or run.
func (m *run) keepPart(fj *fileJob, p *partFile, resp *fetch.Response, n int64, err error) error {
	if p.f == nil {
		return err // removed: it failed its checksum
	}
	part := p.name + partSuffix
	mod := resp.ModTime
	if mod.IsZero() {
		mod = fj.c.mod
	}
	if err == nil && !mod.IsZero() {
		if terr := p.d.SetTimes(p.f, part, time.Now(), mod); terr != nil {
			err = fetch.WriteError(terr)
		}
	}
	if cerr := p.f.Close(); cerr != nil && err == nil {
		err = fetch.WriteError(cerr)
	}
	fj.part = p.offset + n
	if err == nil && mod.IsZero() && fj.local != nil && !fj.local.dir && p.offset+n == fj.local.size && sameBytes(p.d, part, p.name) {
		// Nothing tells this file's time (a plain Gopher menu gives no
		// size or date): what came is compared with what is there, and
		// the same bytes leave the copy as it was, its time too.
		p.d.Remove(part)
		fj.part, fj.same = -1, true
		return nil
	}
	if err != nil {
		if p.offset+n == 0 && (errors.Is(err, fetch.ErrNotFound) || errors.Is(err, fetch.ErrPermission)) {
			// Refused before a byte came (an FTP RETR refused after its
			// data connection was open): no empty NAME.part is left.
			p.d.Remove(part)
			fj.part = -1
		}
		return err
	}
	if err := p.d.Rename(part, p.name); err != nil {
		return fetch.WriteError(err)
	}
	fj.part = -1
	return nil
}

// sameBytes reports whether the files a and b of d hold the same bytes.
func sameBytes(d *safedir.Dir, a, b string) bool {
	fa, err := d.Open(a)
	if err != nil {
		return false
	}
	defer fa.Close()
	fb, err := d.Open(b)
	if err != nil {
		return false
	}
	defer fb.Close()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || string(ba[:na]) != string(bb[:nb]) {
			return false
		}
		if ea != nil || eb != nil {
			return (ea == io.EOF || ea == io.ErrUnexpectedEOF) && (eb == io.EOF || eb == io.ErrUnexpectedEOF)
		}
	}
}

// fetchSegmented fetches a large file over Options.Segments connections
// with Client.DownloadWith, inside the destination's root; NAME.part and
// its segment state carry over to the next attempt.
func (m *run) fetchSegmented(ctx context.Context, fj *fileJob) (int64, error) {
	k := fj.c
	folder, name := path.Split(fj.rel)
	var got atomic.Int64
	o := fetch.DownloadOptions{Name: name, Root: m.root, ResumePart: true, Segments: m.o.Segments, SegmentMin: m.o.SegmentMin, Checksum: fj.sum,
		Progress: func(p fetch.Progress) {
			got.Store(p.Bytes)
			if m.o.Events != nil {
				m.o.Events(Event{Type: EventProgress, Path: fj.rel, URL: redacted(k.u), Bytes: p.Bytes, Size: p.Total})
			}
		}}
	if !k.mod.IsZero() && (k.exact || precision(k.mod) == time.Second) {
		o.ModTimeHint = k.mod
	}
	m.emit(Event{Type: EventStart, Path: fj.rel, URL: redacted(k.u), Size: k.size})
	_, err := m.c.DownloadWith(ctx, k.u.String(), strings.TrimSuffix(folder, "/"), o)
	if err == nil {
		fj.part = -1
	}
	return got.Load(), err
}

// retry runs op, and again after a backoff while it fails temporarily
// and attempts are left.
func (m *run) retry(ctx context.Context, rel string, u *url.URL, op func() error) error {
	policy := fetch.Retry{Attempts: m.o.Retries, Wait: m.o.RetryWait, Refused: m.o.RetryRefused}
	return policy.Do(ctx, op, func(err error, d time.Duration) {
		m.emit(Event{Type: EventRetry, Path: rel, URL: redacted(u), Err: err, Wait: d, Size: -1})
	})
}

// Temporary says whether err is worth another attempt; see
// [fetch.Temporary].
func Temporary(err error) bool { return fetch.Temporary(err) }

// sameAsListed says whether the listing gives k the size and time of the
// local copy lf.
func sameAsListed(k child, lf *localFile) bool {
	_, same := unchanged(k, lf)
	return same
}
