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
		if action == ActionUpdate && !m.o.OnlyNewer && fj.local != nil && sameAsListed(k, fj.local) {
			// Fetched again (OnlyNewer off), and the listing gives it the
			// size and time of the copy it replaced: nothing changed.
			action, reason = ActionUnchanged, "fetched again: the same size and time"
		}
		m.emit(Event{Type: EventDone, Path: fj.rel, URL: redacted(k.u), Action: action, Reason: reason, Bytes: got, Size: k.size})
	}
}

// fetchFile makes one attempt: it continues NAME.part where one is there
// and the server can resume, writes the rest, sets the time and renames.
// It returns the bytes written in this attempt.
func (m *run) fetchFile(ctx context.Context, fj *fileJob, since time.Time) (int64, error) {
	k := fj.c
	if m.o.Segments > 1 && m.limiter == nil && since.IsZero() && k.size >= max(m.o.SegmentMin, 2<<20) {
		return m.fetchSegmented(ctx, fj)
	}
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
	resp, err := m.c.FetchWith(ctx, k.u, o)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.Kind != fetch.KindFile {
		return 0, fmt.Errorf("%w: %s is a %s, not a file", fetch.ErrNotRetrievable, k.u.Redacted(), resp.Kind)
	}
	if resp.Offset != offset {
		offset = 0 // the server sent the whole file
	}
	total := resp.Size
	if total >= 0 {
		total += offset
	}
	m.emit(Event{Type: EventStart, Path: fj.rel, URL: redacted(k.u), Size: total, Offset: offset})
	flags := os.O_CREATE
	if offset == 0 {
		flags |= os.O_TRUNC
	}
	folder, name := path.Split(fj.rel)
	part := name + partSuffix
	d, err := m.dir(folder)
	if err != nil {
		return 0, fetch.WriteError(err)
	}
	f, err := d.OpenFile(part, flags, 0o644)
	if err != nil {
		return 0, fetch.WriteError(err)
	}
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			f.Close()
			return 0, fetch.WriteError(err)
		}
	}
	v, err := m.newVerifier(fj, folder+part, offset)
	if err != nil {
		f.Close()
		return 0, fetch.WriteError(err)
	}
	var body io.Reader = resp.Body
	if m.limiter != nil {
		body = walk.RateReader(ctx, resp.Body, m.limiter)
	}
	var w io.Writer = f
	if v != nil {
		w = io.MultiWriter(f, v.h) // every byte through the digest, as it arrives
	}
	n, err := io.Copy(w, body)
	if err == nil {
		err = resp.Body.Close()
	}
	if err == nil && v != nil {
		if err = v.check(fj.rel); err != nil {
			f.Close()
			d.Remove(part)
			fj.part = -1
			return n, err
		}
	}
	mod := resp.ModTime
	if mod.IsZero() {
		mod = k.mod
	}
	if err == nil && !mod.IsZero() {
		if terr := d.SetTimes(f, part, time.Now(), mod); terr != nil {
			err = fetch.WriteError(terr)
		}
	}
	if cerr := f.Close(); cerr != nil && err == nil {
		err = fetch.WriteError(cerr)
	}
	// What arrived stays in NAME.part for the next attempt or run.
	fj.part = offset + n
	if err != nil {
		return n, err
	}
	if err := d.Rename(part, name); err != nil {
		return n, fetch.WriteError(err)
	}
	fj.part = -1
	return n, nil
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
