package crawl

import (
	"context"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// localFile is an object being written under OutputDir.
type localFile struct {
	dir        *os.Root // its folder
	part, name string   // names in dir
	rel        string   // its path below OutputDir
	f          *os.File
	mod        time.Time // the server's modification time, given to the file
	done       bool
	unlock     func() // lets the next writer of the path and the folder go
}

// folders keeps the folders of OutputDir that files are written in open,
// as roots of their own: a file's creation and its rename are then a
// system call each in its folder, not a walk down from OutputDir's root
// (a dozen openat and close calls a file). At most maxFolders stay open
// when none is in use, the one used longest ago closed first.
type folders struct {
	root *os.Root
	mu   sync.Mutex
	open map[string]*folder
	tick uint64
}

type folder struct {
	r     *os.Root
	users int
	used  uint64
}

const maxFolders = 64

// acquire returns the folder dir of the root ("/" separated; "" for the
// root itself), made when missing, and the function that gives it back.
func (fs *folders) acquire(dir string) (*os.Root, func(), error) {
	if dir == "" {
		dir = "."
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.tick++
	f := fs.open[dir]
	if f == nil {
		if err := fs.root.MkdirAll(dir, 0o755); err != nil {
			return nil, nil, err
		}
		r, err := fs.root.OpenRoot(dir)
		if err != nil {
			return nil, nil, err
		}
		f = &folder{r: r}
		fs.open[dir] = f
	}
	f.users++
	f.used = fs.tick
	return f.r, func() {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		f.users--
		fs.trim()
	}, nil
}

// trim closes the idle folders past maxFolders, the least recently used
// first.
func (fs *folders) trim() {
	for len(fs.open) > maxFolders {
		var oldest string
		var at uint64
		for name, f := range fs.open {
			if f.users == 0 && (oldest == "" || f.used < at) {
				oldest, at = name, f.used
			}
		}
		if oldest == "" {
			return // all in use
		}
		fs.open[oldest].r.Close()
		delete(fs.open, oldest)
	}
}

// closeAll closes every folder, at the end of the run.
func (fs *folders) closeAll() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for name, f := range fs.open {
		f.r.Close()
		delete(fs.open, name)
	}
}

// create opens NAME.part for u's object, its folders made, inside the
// root; it returns nil when Accept or Reject keep the file from being
// written, or it is an FTP folder's listing and FTPListings is not set.
// URLs that lead to one path (two hosts with NoHostDirs, folders cut
// away) share it: their writers take turns at it (m.paths), the last
// one's object staying, as it would one after the other.
func (m *run) create(ctx context.Context, u *url.URL, resp *fetch.Response) (*localFile, error) {
	listing := m.serverListing(u, resp)
	if listing && !m.o.FTPListings {
		return nil, nil // as wget removes its .listing files
	}
	rel, err := localPath(u, resp, &m.o, listing)
	if err != nil {
		return nil, fmt.Errorf("%w: --output-dir: %w", fetch.ErrNotRetrievable, err)
	}
	if !m.o.acceptable(path.Base(rel)) {
		return nil, nil
	}
	if m.o.NoDirectories {
		rel = m.flatName(rel)
	}
	unlock, err := m.paths.Lock(ctx, rel)
	if err != nil {
		return nil, err
	}
	dir, name := path.Split(rel)
	d, release, err := m.dirs.acquire(strings.TrimSuffix(dir, "/"))
	if err != nil {
		unlock()
		return nil, fetch.WriteError(err)
	}
	f, err := d.OpenFile(name+fetch.PartSuffix, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		release()
		unlock()
		return nil, fetch.WriteError(err)
	}
	return &localFile{dir: d, part: name + fetch.PartSuffix, name: name, rel: rel, f: f, mod: resp.ModTime, unlock: func() { release(); unlock() }}, nil
}

// flatName is the name at the top of the output folder of the file the
// tree would have at rel (NoDirectories): its own name, or with .1, .2,
// ... after it when a file of another path took that name first.
func (m *run) flatName(rel string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if name, ok := m.flat[rel]; ok {
		return name
	}
	base := path.Base(rel)
	name := base
	for i := 1; m.flatTaken[name]; i++ {
		name = base + "." + strconv.Itoa(i)
	}
	m.flat[rel] = name
	m.flatTaken[name] = true
	return name
}

// finish closes the file and gives it its name.
func (l *localFile) finish() error {
	l.done = true
	defer l.unlock()
	if err := l.f.Close(); err != nil {
		l.dir.Remove(l.part)
		return fetch.WriteError(err)
	}
	if !l.mod.IsZero() {
		_ = l.dir.Chtimes(l.part, time.Now(), l.mod) // as wget sets it; OnlyNewer compares it
	}
	if err := l.dir.Rename(l.part, l.name); err != nil {
		l.dir.Remove(l.part)
		return fetch.WriteError(err)
	}
	return nil
}

// abandon removes a file that was not finished: nothing partial stays.
func (l *localFile) abandon() {
	if !l.done {
		l.done = true
		l.f.Close()
		l.dir.Remove(l.part)
		l.unlock()
	}
}

// localPath is where u's object goes below the output folder, "/"
// separated: [SCHEME/]HOST[:PORT]/PATH[?QUERY] (SCHEME with
// ProtocolDirs), each part made a name by o's FileNames, the last cut at
// maxName bytes; a folder's index (index, .listing for an FTP listing,
// DefaultPage or index.html for an HTML page) where the path ends at a
// folder or the object is a listing; without HOST with NoHostDirs, and
// without the first CutDirs folders of PATH; with AdjustExtension, an
// HTML page's name ends in .html and a style sheet's in .css (after the
// query, as wget's).
func localPath(u *url.URL, resp *fetch.Response, o *Options, listing bool) (string, error) {
	fn := o.FileNames
	host := strings.ToLower(u.Hostname())
	if host == "" {
		host = u.Scheme // news: names no server
	}
	host = fn.name(host)
	if u.Port != "" && u.PortNumber() != url.DefaultPorts[u.Scheme] {
		host += fn.portSep() + u.Port
	}
	var segs []string
	if sel, ok := u.Selector(); ok {
		segs = strings.Split(sel, "/")
	} else if s, err := u.Segments(); err == nil {
		segs = s
	} else {
		return "", err
	}
	var kept []string
	for _, s := range segs {
		if s != "" {
			kept = append(kept, fn.name(s))
		}
	}
	folder := len(segs) == 0 || segs[len(segs)-1] == "" || resp.Kind == fetch.KindDirectory || resp.Kind == fetch.KindArticleList
	if folder {
		index := "index"
		if listing {
			index = ".listing" // wget's name for it
		} else if resp.MediaType == "text/html" {
			index = "index.html"
			if o.DefaultPage != "" {
				index = o.DefaultPage
			}
		}
		kept = append(kept, fn.name(index)) // in upper case too, as wget's
	}
	if u.HasQuery { // a Gopher URL has none (url's table)
		q, err := url.Unescape(u.Query)
		if err != nil {
			return "", err
		}
		kept[len(kept)-1] += fn.querySep() + fn.name(q) // %26 as "&", as wget names it
	}
	if last := &kept[len(kept)-1]; len(*last) > maxName {
		*last = (*last)[:maxName] // as wget shortens it, leaving room for .html, .orig, .1 ...
	}
	if o.CutDirs > 0 {
		kept = kept[min(o.CutDirs, len(kept)-1):] // the file's own name stays
	}
	if o.AdjustExtension {
		last := &kept[len(kept)-1]
		lower := strings.ToLower(*last)
		switch {
		case (resp.MediaType == "text/html" || resp.MediaType == "application/xhtml+xml") && !strings.HasSuffix(lower, ".html") && !strings.HasSuffix(lower, ".htm"):
			*last += ".html"
		case resp.MediaType == "text/css" && !strings.HasSuffix(lower, ".css"):
			*last += ".css"
		}
	}
	if !o.NoHostDirs {
		kept = append([]string{host}, kept...)
	}
	if o.ProtocolDirs {
		kept = append([]string{u.Scheme}, kept...)
	}
	for _, s := range kept {
		if !localName(s) {
			return "", fmt.Errorf("%q is not a single safe name", s)
		}
	}
	return strings.Join(kept, "/"), nil
}

// maxName is the longest name wget gives a file: 255 bytes, most
// systems' limit, less the 19 it keeps for what it may add after it
// (its CHOMP_BUFFER).
const maxName = 255 - 19

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// crawlForm is u as a crawl compares, fetches and records it: in
// url.Normalize's form (RFC 1738's one encoding level), but for the query
// of an HTTP URL, where escapes of RFC 3986's reserved characters say
// something else than the characters would (in a form's data "%2B" is a
// plus and "+" a space): its escapes of the unreserved characters
// (letters, digits, "-", ".", "_", "~") decoded, the others kept, in
// capitals, as browsers and servers compare queries.
func crawlForm(u *url.URL) *url.URL {
	n := u.Normalize()
	if u.HasQuery { // only the schemes that have queries have one (url's table)
		n.Query = queryForm(u.Query)
	}
	return n
}

// queryForm is crawlForm's form of an HTTP query.
func queryForm(q string) string {
	if !strings.Contains(q, "%") {
		return q
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		if q[i] == '%' && i+2 < len(q) && ishex(q[i+1]) && ishex(q[i+2]) {
			c := unhex(q[i+1])<<4 | unhex(q[i+2])
			i += 2
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
				b.WriteByte(c)
			} else {
				b.WriteByte('%')
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&15])
			}
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// serverListing says whether resp is a folder's listing as a server
// sent it (FTP's: a scheme listed by its listings, not this machine's),
// which wget keeps as .listing.
func (m *run) serverListing(u *url.URL, resp *fetch.Response) bool {
	sc, _ := m.c.Scheme(u.Scheme)
	return resp.Kind == fetch.KindDirectory && sc.Tree == protocols.TreeListing && !sc.Local
}
