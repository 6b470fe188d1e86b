package mirror

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/internal/walk"
	"github.com/urlderef/deref/url"
)

// sharedFolders is how many folders a worker of a shared mirror works on
// at once; each has Parallel transfers.
const sharedFolders = 2

// runShared works through the tree with the other workers of
// Options.Frontier: each folder is a URL of the frontier, claimed by one
// worker, which lists it, mirrors its files into its own destination,
// and settles it with its subfolders, for any worker to claim next.
func (m *run) runShared(ctx context.Context, top *dirNode) error {
	f := m.o.Frontier
	if _, err := f.Add(ctx, []crawl.Item{{URL: top.u.WithoutPassword(), Depth: top.depth}}); err != nil {
		return err
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	for range sharedFolders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				l, err := f.Claim(ctx)
				if err != nil {
					if !errors.Is(err, crawl.ErrFrontierDone) && ctx.Err() == nil {
						mu.Lock()
						failed = err
						mu.Unlock()
						m.stop(err)
					}
					return
				}
				subs, err := m.sharedFolder(ctx, l)
				r := crawl.Result{}
				switch {
				case ctx.Err() != nil:
					r.Again = true
				case err != nil:
					r.Err = err.Error()
				}
				if _, err := f.Settle(context.WithoutCancel(ctx), l, r, subs); err != nil && !errors.Is(err, crawl.ErrStaleLease) {
					mu.Lock()
					failed = err
					mu.Unlock()
					m.stop(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return failed
}

// sharedFolder mirrors the folder l names, its files with Parallel
// transfers, and returns its subfolders.
func (m *run) sharedFolder(ctx context.Context, l *crawl.Lease) ([]crawl.Item, error) {
	u, err := url.Parse(l.URL)
	if err != nil {
		return nil, err
	}
	if l.Path != "" && (path.Clean(l.Path) != l.Path || path.IsAbs(l.Path) || l.Path == ".." || strings.HasPrefix(l.Path, "../") || !safePath(l.Path)) {
		return nil, fmt.Errorf("the frontier names the folder %q, outside the destination", l.Path)
	}
	if u.User != nil && m.start.User != nil && u.User.Username() == m.start.User.Username() && strings.EqualFold(u.Site(), m.start.Site()) {
		u.User = m.start.User // its password, which the frontier does not keep
	}
	d := &dirNode{rel: l.Path, u: u, depth: l.Depth}
	d.sel, _ = u.Selector()
	if !l.Expires.IsZero() {
		stop := crawl.KeepLease(ctx, m.o.Frontier, l)
		defer stop()
	}
	if d.rel != "" && m.root != nil && !m.o.DryRun {
		// Its parent was listed by another worker, maybe, into another
		// destination.
		if err := m.root.MkdirAll(d.rel, 0o755); err != nil {
			err = fetch.WriteError(err)
			m.emit(Event{Type: EventDone, Path: d.rel + "/", URL: d.u.Redacted(), Action: ActionFail, Err: err, Size: -1})
			return nil, err
		}
	}
	kids, err := m.list(ctx, d)
	if err != nil {
		if ctx.Err() == nil {
			m.emit(Event{Type: EventDone, Path: d.rel + "/", URL: d.u.Redacted(), Action: ActionFail, Err: err, Size: -1})
		}
		return nil, err
	}
	if d.rel != "" {
		m.emit(Event{Type: EventList, Path: d.rel, URL: d.u.Redacted(), Size: -1})
	}
	var mu sync.Mutex
	var subs []crawl.Item
	walk.Walk(ctx, m.parallel(), nil, func(ctx context.Context, q *queue, j job) {
		switch {
		case j.top:
			m.settleDir(ctx, q, j.dir, j.listed)
		case j.dir != nil: // another worker's, maybe
			mu.Lock()
			subs = append(subs, crawl.Item{URL: j.dir.u.WithoutPassword(), Depth: j.dir.depth, Path: j.dir.rel})
			mu.Unlock()
		default:
			m.waiting.Add(-1)
			m.settleFile(ctx, j.file)
		}
	}, job{dir: d, top: true, listed: kids})
	return subs, nil
}

// safePath says each name of p is one a mirror writes.
func safePath(p string) bool {
	for _, n := range strings.Split(p, "/") {
		if !safeName(n) {
			return false
		}
	}
	return true
}
