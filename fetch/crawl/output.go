package crawl

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/safedir"
	"github.com/urlderef/deref/url"
)

// localFile is an object being written under OutputDir.
type localFile struct {
	root       *os.Root
	part, name string // paths relative to the root
	f          *os.File
	done       bool
	unlock     func() // lets the next writer of the path go
}

// create opens NAME.part for u's object, its folders made, inside the
// root. URLs that differ in what the path leaves out (a query) share a
// path: their writers take turns at it (m.paths), the last one's object
// staying, as it would one after the other.
func (m *run) create(ctx context.Context, u *url.URL, resp *fetch.Response) (*localFile, error) {
	rel, err := localPath(u, resp)
	if err != nil {
		return nil, fmt.Errorf("%w: --output-dir: %w", fetch.ErrNotRetrievable, err)
	}
	unlock, err := m.paths.Lock(ctx, rel)
	if err != nil {
		return nil, err
	}
	if dir := path.Dir(rel); dir != "." {
		if err := m.root.MkdirAll(dir, 0o755); err != nil {
			unlock()
			return nil, fetch.WriteError(err)
		}
	}
	f, err := m.root.OpenFile(rel+fetch.PartSuffix, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		unlock()
		return nil, fetch.WriteError(err)
	}
	return &localFile{root: m.root, part: rel + fetch.PartSuffix, name: rel, f: f, unlock: unlock}, nil
}

// finish closes the file and gives it its name.
func (l *localFile) finish() error {
	l.done = true
	defer l.unlock()
	if err := l.f.Close(); err != nil {
		l.root.Remove(l.part)
		return fetch.WriteError(err)
	}
	if err := l.root.Rename(l.part, l.name); err != nil {
		l.root.Remove(l.part)
		return fetch.WriteError(err)
	}
	return nil
}

// abandon removes a file that was not finished: nothing partial stays.
func (l *localFile) abandon() {
	if !l.done {
		l.done = true
		l.f.Close()
		l.root.Remove(l.part)
		l.unlock()
	}
}

// localPath is where u's object goes below the output folder, "/"
// separated: HOST[_PORT]/PATH, a folder's index where the path ends at a
// folder or the object is a listing.
func localPath(u *url.URL, resp *fetch.Response) (string, error) {
	host := strings.ToLower(u.Hostname())
	if host == "" {
		host = u.Scheme // news: names no server
	}
	if u.Port != "" && u.PortNumber() != url.DefaultPorts[u.Scheme] {
		host += "_" + u.Port
	}
	var segs []string
	if g, err := u.Gopher(); err == nil && (u.Scheme == "gopher" || u.Scheme == "gophers") {
		segs = strings.Split(g.Selector, "/")
	} else if s, err := u.Segments(); err == nil {
		segs = s
	} else {
		return "", err
	}
	var kept []string
	for _, s := range segs {
		if s != "" {
			kept = append(kept, s)
		}
	}
	folder := len(segs) == 0 || segs[len(segs)-1] == "" || resp.Kind == fetch.KindDirectory || resp.Kind == fetch.KindArticleList
	if folder {
		index := "index"
		if resp.MediaType == "text/html" {
			index = "index.html"
		}
		kept = append(kept, index)
	}
	for _, s := range append([]string{host}, kept...) {
		if !safeName(s) {
			return "", fmt.Errorf("%q is not a single safe name", s)
		}
	}
	return strings.Join(append([]string{host}, kept...), "/"), nil
}

// safeName is the mirror's rule for a local name (safedir.LocalName),
// and no name of a part file.
func safeName(n string) bool {
	return safedir.LocalName(n) && !strings.HasSuffix(n, fetch.PartSuffix)
}
