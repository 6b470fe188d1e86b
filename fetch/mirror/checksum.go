package mirror

import (
	"bytes"
	"context"
	"fmt"
	"hash"
	"io"

	"github.com/urlderef/deref/fetch"
)

// readSums fetches the folder's sums file k (Options.ChecksumFile) and
// puts its digests first in d's list. A sums file that cannot be read is
// noted, and the files it would have checked are fetched unchecked.
func (m *run) readSums(ctx context.Context, d *dirNode, k *child) {
	var got map[string]fetch.Checksum
	err := m.retry(ctx, join(d.rel, k.name), k.u, func() error {
		release, err := m.hostSlot(ctx, k.u)
		if err != nil {
			return err
		}
		defer release()
		resp, err := m.c.Fetch(ctx, k.u, 0)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if got, err = fetch.ReadChecksums(resp.Body); err != nil {
			return err
		}
		return resp.Body.Close()
	})
	if err != nil {
		m.emit(Event{Type: EventNote, Path: join(d.rel, k.name), URL: redacted(k.u), Size: -1, Err: err,
			Reason: "the sums file cannot be read: the files of " + orTop(d.rel) + " are not checked against it"})
		return
	}
	d.sums = append([]sums{{rel: d.rel, m: got}}, d.sums...)
}

func orTop(rel string) string {
	if rel == "" {
		return "the top folder"
	}
	return rel
}

// compareDigests asks the server for the digests of the files whose
// local copies it is to compare (Options.Checksum) and returns those that
// differ, to be fetched again. Files the server gives no digest for are
// compared by size and time; a server that cannot hash is noted once.
func (m *run) compareDigests(ctx context.Context, d *dirNode, files []*fileJob) []*fileJob {
	if len(files) == 0 {
		return nil
	}
	names := make([]string, len(files))
	for i, fj := range files {
		names[i] = fj.c.name
	}
	var remote map[string]fetch.Checksum
	err := m.retry(ctx, d.rel, d.u, func() error {
		release, err := m.hostSlot(ctx, d.u)
		if err != nil {
			return err
		}
		defer release()
		remote, err = m.c.Checksums(ctx, d.u, names)
		return err
	})
	if err != nil {
		m.noteOnce(d.u.HostPort(), Event{Type: EventNote, URL: redacted(d.u), Size: -1, Err: err,
			Reason: "the server cannot tell digests: sizes and times decide instead"})
	}
	var out []*fileJob
	for _, fj := range files {
		k := fj.c
		if sum, ok := remote[k.name]; ok && m.root != nil {
			same, err := m.localDigest(fj.rel, sum)
			if err == nil && same {
				m.dropPart(fj)
				m.emit(Event{Type: EventDone, Path: fj.rel, URL: redacted(k.u), Action: ActionUnchanged, Reason: "same " + sum.Algorithm + " digest", Size: k.size})
				continue
			}
			if err == nil {
				fj.part = -1 // a part of other content is no prefix of it
			}
		} else if reason, same := unchanged(k, fj.local); same {
			m.dropPart(fj)
			m.emit(Event{Type: EventDone, Path: fj.rel, URL: redacted(k.u), Action: ActionUnchanged, Reason: reason, Size: k.size})
			continue
		}
		fj.update = true
		out = append(out, fj)
	}
	return out
}

// localDigest says whether the local file at rel has the digest sum.
func (m *run) localDigest(rel string, sum fetch.Checksum) (bool, error) {
	f, err := m.root.Open(rel)
	if err != nil {
		return false, err
	}
	defer f.Close()
	h := sum.Hash()
	if _, err := io.Copy(h, f); err != nil {
		return false, err
	}
	return bytes.Equal(h.Sum(nil), sum.Sum), nil
}

// noteOnce emits ev the first time key is given.
func (m *run) noteOnce(key string, ev Event) {
	m.mu.Lock()
	if m.noted == nil {
		m.noted = map[string]bool{}
	}
	first := !m.noted[key]
	m.noted[key] = true
	m.mu.Unlock()
	if first {
		m.emit(ev)
	}
}

// verifier checks a file's digest as it is written (Options.ChecksumFile).
type verifier struct {
	want fetch.Checksum
	h    hash.Hash
}

// newVerifier starts the digest of the file at rel, whose first offset
// bytes are already in its part file partRel; nil when no digest is
// expected.
func (m *run) newVerifier(fj *fileJob, partRel string, offset int64) (*verifier, error) {
	if fj.sum == nil {
		return nil, nil
	}
	v := &verifier{want: *fj.sum, h: fj.sum.Hash()}
	if offset > 0 {
		f, err := m.root.Open(partRel)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if _, err := io.CopyN(v.h, f, offset); err != nil {
			return nil, fmt.Errorf("reading %s back for its checksum: %w", partRel, err)
		}
	}
	return v, nil
}

// check compares the digest of what was written with the expected one.
func (v *verifier) check(rel string) error {
	if got := v.h.Sum(nil); !bytes.Equal(got, v.want.Sum) {
		return fmt.Errorf("%w: %s of %s is %x, the sums file says %x", fetch.ErrChecksum, v.want.Algorithm, rel, got, v.want.Sum)
	}
	return nil
}
