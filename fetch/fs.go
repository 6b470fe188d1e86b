package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/urlderef/deref/url"
)

// NewFS views the tree of listings whose top folder raw names as a file
// system: file: and FTP folders, HTTP index pages, Gopher menus,
// newsgroups (articles as files named by their number) and WAIS searches
// (hits as files named by their docids), as Tree reads them. Every retrieval is made with c and ctx.
//
// The result implements fs.ReadDirFS, fs.StatFS, fs.ReadFileFS and
// fs.SubFS, so that fs.WalkDir, fs.Glob, os.CopyFS and
// http.FileServerFS work on it. Open streams the file: nothing is
// fetched until the first Read, and Close ends the transfer. Sizes and
// times come from the listings. A size the listing does not give (a
// Gopher menu gives none) is 0, as fs.FileInfo has no other way to say
// it: a FileInfo's Sys is the [TreeEntry], whose Size is then -1, telling
// an unknown size from an empty file. Entries whose names are not valid
// path elements (fs.ValidPath: "..", a name holding "/" or "\", invalid
// UTF-8), symbolic links, entries the listing could not read, and second
// entries of one name are left out, never renamed. Folders' listings are
// remembered (up to 1024 at once), so a walk reads each once.
//
// Errors are *fs.PathError values holding the *Error, and a refusal for
// a missing object or a permission also unwraps to fs.ErrNotExist or
// fs.ErrPermission.
func NewFS(ctx context.Context, c *Client, raw string) (fs.FS, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, &Error{Op: "open", URL: url.RedactString(raw), Err: fmt.Errorf("%w: %w", ErrBadURL, err)}
	}
	t, err := c.Tree(u)
	if err != nil {
		return nil, &Error{Op: "open", URL: u.Redacted(), Err: err}
	}
	f := &treeFS{ctx: ctx, c: c, tree: t, top: t.Root(), dirs: map[string]*fsDir{}}
	if _, err := f.listDir("open", "."); err != nil {
		return nil, err
	}
	return f, nil
}

// maxDirs bounds the listings a treeFS remembers.
const maxDirs = 1024

type treeFS struct {
	ctx  context.Context
	c    *Client
	tree *Tree
	top  TreeEntry

	mu   sync.Mutex
	dirs map[string]*fsDir // by path; "." is the top
}

// fsDir is a folder's listing as the file system shows it.
type fsDir struct {
	names  []string // sorted
	byName map[string]TreeEntry
}

// fsName says whether a listed name can be a name of the file system.
func fsName(n string) bool {
	return fs.ValidPath(n) && n != "." && !strings.ContainsAny(n, `/\`)
}

func (f *treeFS) listDir(op, name string) (*fsDir, error) {
	f.mu.Lock()
	d := f.dirs[name]
	f.mu.Unlock()
	if d != nil {
		return d, nil
	}
	e, err := f.lookup(op, name)
	if err != nil {
		return nil, err
	}
	if !e.Dir {
		return nil, &fs.PathError{Op: op, Path: name, Err: errors.New("not a directory")}
	}
	list, err := f.tree.List(f.ctx, f.c, e)
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: fsError(e.URL, err)}
	}
	d = &fsDir{byName: map[string]TreeEntry{}}
	for _, k := range list {
		if !fsName(k.Name) || k.Link || k.Refuse != "" || k.URL == nil {
			continue
		}
		if _, dup := d.byName[k.Name]; dup {
			continue
		}
		d.byName[k.Name] = k
		d.names = append(d.names, k.Name)
	}
	slices.Sort(d.names)
	f.mu.Lock()
	if len(f.dirs) >= maxDirs {
		clear(f.dirs)
	}
	f.dirs[name] = d
	f.mu.Unlock()
	return d, nil
}

// lookup finds the entry of name, a valid path, in its folder's listing.
func (f *treeFS) lookup(op, name string) (TreeEntry, error) {
	if name == "." {
		return f.top, nil
	}
	dir, base := path.Split(name)
	parent := strings.TrimSuffix(dir, "/")
	if parent == "" {
		parent = "."
	}
	d, err := f.listDir(op, parent)
	if err != nil {
		return TreeEntry{}, err
	}
	e, ok := d.byName[base]
	if !ok {
		return TreeEntry{}, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return e, nil
}

// fsError is a retrieval's error, unwrapping to fs.ErrNotExist or
// fs.ErrPermission where it means that.
func fsError(u *url.URL, err error) error {
	var fe *Error
	if !errors.As(err, &fe) {
		err = &Error{Op: "get", URL: u.Redacted(), Err: err}
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return &meaning{err, fs.ErrNotExist}
	case errors.Is(err, ErrPermission), errors.Is(err, ErrAuth):
		return &meaning{err, fs.ErrPermission}
	}
	return err
}

// meaning is an error that also means one of io/fs's errors.
type meaning struct{ err, fs error }

func (m *meaning) Error() string   { return m.err.Error() }
func (m *meaning) Unwrap() []error { return []error{m.err, m.fs} }

func (f *treeFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	e, err := f.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if e.Dir {
		return &fsDirFile{f: f, name: name, e: e}, nil
	}
	return &fsFile{f: f, name: name, e: e}, nil
}

func (f *treeFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	e, err := f.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return fileInfo{name: path.Base(name), e: e}, nil
}

func (f *treeFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	d, err := f.listDir("readdir", name)
	if err != nil {
		return nil, err
	}
	return d.entries(), nil
}

func (d *fsDir) entries() []fs.DirEntry {
	out := make([]fs.DirEntry, len(d.names))
	for i, n := range d.names {
		out[i] = fs.FileInfoToDirEntry(fileInfo{name: n, e: d.byName[n]})
	}
	return out
}

func (f *treeFS) ReadFile(name string) ([]byte, error) {
	file, err := f.Open(name)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	if _, ok := file.(*fsDirFile); ok {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	b, err := io.ReadAll(file)
	if err != nil {
		return nil, err
	}
	return b, file.Close()
}

func (f *treeFS) Sub(dir string) (fs.FS, error) {
	if !fs.ValidPath(dir) {
		return nil, &fs.PathError{Op: "sub", Path: dir, Err: fs.ErrInvalid}
	}
	if dir == "." {
		return f, nil
	}
	e, err := f.lookup("sub", dir)
	if err != nil {
		return nil, err
	}
	if !e.Dir {
		return nil, &fs.PathError{Op: "sub", Path: dir, Err: errors.New("not a directory")}
	}
	return &treeFS{ctx: f.ctx, c: f.c, tree: f.tree, top: e, dirs: map[string]*fsDir{}}, nil
}

// fileInfo describes an entry from its listing.
type fileInfo struct {
	name string
	e    TreeEntry
}

func (i fileInfo) Name() string { return i.name }
func (i fileInfo) Size() int64 {
	if i.e.Dir || i.e.Size < 0 {
		return 0
	}
	return i.e.Size
}
func (i fileInfo) Mode() fs.FileMode {
	if i.e.Dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i fileInfo) ModTime() time.Time { return i.e.ModTime }
func (i fileInfo) IsDir() bool        { return i.e.Dir }
func (i fileInfo) Sys() any           { return i.e }

// fsFile streams a file, fetched at its first Read.
type fsFile struct {
	f      *treeFS
	name   string
	e      TreeEntry
	body   io.ReadCloser
	done   bool // the body was read to its end
	closed bool
}

func (h *fsFile) Stat() (fs.FileInfo, error) {
	return fileInfo{name: path.Base(h.name), e: h.e}, nil
}

func (h *fsFile) Read(p []byte) (int, error) {
	if h.closed {
		return 0, &fs.PathError{Op: "read", Path: h.name, Err: fs.ErrClosed}
	}
	if h.body == nil {
		resp, err := h.f.c.FetchWith(h.f.ctx, h.e.URL, FetchOptions{SizeHint: h.e.Size, ModTimeHint: h.e.ModTime})
		if err != nil {
			return 0, &fs.PathError{Op: "read", Path: h.name, Err: fsError(h.e.URL, err)}
		}
		if resp.Kind != KindFile {
			resp.Body.Close()
			return 0, &fs.PathError{Op: "read", Path: h.name, Err: fmt.Errorf("%w: %s is a %s, not a file", ErrNotRetrievable, h.e.URL.Redacted(), resp.Kind)}
		}
		h.body = resp.Body
	}
	n, err := h.body.Read(p)
	if err == io.EOF {
		h.done = true
	} else if err != nil {
		err = &fs.PathError{Op: "read", Path: h.name, Err: err}
	}
	return n, err
}

// Close ends the transfer. The server's final word (FTP's 226) is
// reported when the file was read to its end; a file closed early was
// abandoned, and that is no error.
func (h *fsFile) Close() error {
	if h.closed {
		return &fs.PathError{Op: "close", Path: h.name, Err: fs.ErrClosed}
	}
	h.closed = true
	if h.body == nil {
		return nil
	}
	err := h.body.Close()
	if !h.done {
		return nil
	}
	if err != nil {
		return &fs.PathError{Op: "close", Path: h.name, Err: err}
	}
	return nil
}

// fsDirFile is an open folder; its listing is read at the first ReadDir.
type fsDirFile struct {
	f      *treeFS
	name   string
	e      TreeEntry
	list   []fs.DirEntry
	read   bool
	closed bool
}

func (h *fsDirFile) Stat() (fs.FileInfo, error) {
	return fileInfo{name: path.Base(h.name), e: h.e}, nil
}

func (h *fsDirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: h.name, Err: errors.New("is a directory")}
}

func (h *fsDirFile) Close() error {
	if h.closed {
		return &fs.PathError{Op: "close", Path: h.name, Err: fs.ErrClosed}
	}
	h.closed = true
	return nil
}

func (h *fsDirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	if h.closed {
		return nil, &fs.PathError{Op: "readdir", Path: h.name, Err: fs.ErrClosed}
	}
	if !h.read {
		d, err := h.f.listDir("readdir", h.name)
		if err != nil {
			return nil, err
		}
		h.list, h.read = d.entries(), true
	}
	if n <= 0 {
		out := h.list
		h.list = nil
		return out, nil
	}
	if len(h.list) == 0 {
		return nil, io.EOF
	}
	k := min(n, len(h.list))
	out := h.list[:k:k]
	h.list = h.list[k:]
	return out, nil
}
