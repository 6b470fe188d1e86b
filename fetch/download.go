package fetch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/urlderef/deref/internal/safedir"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// PartSuffix ends the name an object is written under until it is complete.
const PartSuffix = ".part"

// DownloadOptions adjust [Client.DownloadWith].
type DownloadOptions struct {
	// Name is the file name inside the folder; empty means the name the
	// URL suggests (never one the server chose). It must be a single path
	// element.
	Name string
	// Resume continues an earlier download: from NAME.part when one is
	// there, else from NAME itself (as curl -C - does). With a
	// Client.Recorder nothing is continued: the object is fetched from its
	// first byte, so that the archive holds it whole (as wget turns -c off
	// for --warc-file).
	Resume bool
	// ResumePart continues NAME.part when one is there, never NAME
	// itself: what a new attempt after a failed one wants. Not with a
	// Client.Recorder (see Resume).
	ResumePart bool
	// KeepModTime leaves the file's modification time as written instead of
	// setting it to the server's.
	KeepModTime bool
	// ModTimeHint is the object's exact time when already known (from
	// [Client.ModTimes]); see protocols.Request.
	ModTimeHint time.Time
	// OnlyNewer leaves a file NAME that is as new as the server's copy:
	// the retrieval is conditional (HTTP If-Modified-Since; FTP compares
	// MDTM and SIZE before RETR), and where the protocol cannot say, the
	// response's time and size are compared before anything is written.
	// The skip is an error wrapping [ErrNotModified]; NAME is untouched.
	OnlyNewer bool
	// IfModifiedSince, when set, makes the retrieval conditional on this
	// time (curl -z), as OnlyNewer makes it on the local file's: an
	// object no newer is an error wrapping [ErrNotModified], and nothing
	// is written. OnlyNewer's time wins where there is a local file.
	IfModifiedSince time.Time
	// SkipExisting leaves a file NAME that is there already as it is and
	// fetches nothing (curl's --skip-existing, wget's -nc): the error then
	// wraps [ErrExists], and the path returned is the file's.
	SkipExisting bool
	// IfNoneMatch, when set, makes an HTTP retrieval conditional on an
	// entity tag, as in [FetchOptions]: a server whose copy still has it
	// answers with an error wrapping [ErrNotModified], and nothing is
	// written.
	IfNoneMatch string
	// Received, when set, is called with the response once it has come,
	// before its body is written: its metadata (ETag, MediaType...) for
	// the caller to keep. It must not read or close the Body.
	Received func(*Response)
	// Progress, when set, is called as the body's bytes arrive, besides
	// [Client.Progress]; it may block to slow the transfer down.
	Progress func(Progress)
	// Trace and Redirect are as in [FetchOptions]: this download's
	// protocol conversation, and each redirect it followed.
	Trace    func(TraceEvent)
	Redirect func(from, to *url.URL)
	// ErrorBody saves an HTTP error page (a status of 400 or more) as the
	// file, as curl's --fail-with-body does, and returns the error the
	// status is all the same; it is not taken with Segments, Resume,
	// OnlyNewer or a Checksum, which are about the object (an error page
	// would replace the copy OnlyNewer keeps).
	ErrorBody bool
	// Checksum, when set, is the object's expected digest: it is computed
	// as the object streams (on resume, over the part already there first)
	// and checked before NAME.part becomes NAME; a mismatch is [ErrChecksum]
	// and removes NAME.part, so that no resume builds on wrong bytes.
	Checksum *Checksum
	// Segments > 1 fetches the object over that many connections at once,
	// each writing its byte range into NAME.part at its offset (HTTP
	// Range, FTP REST), as aria2 and lftp's pget do, for servers that cap
	// each connection's rate. It is used when the size is known (asked
	// first: HTTP HEAD, FTP SIZE), at least SegmentMin and 2 MiB, and the
	// server resumes; else the object comes over one connection. A range
	// is at least 1 MiB. NAME.part.segments (SegmentsSuffix) keeps each
	// range's progress, so that a download continued with Resume or
	// ResumePart (as [Client.Retry] does) continues every range; a Checksum
	// is then computed by reading the file back once. With a
	// Client.Recorder the object comes over one connection, so that the
	// archive holds it whole, as one response.
	Segments   int
	SegmentMin int64
	// IndexName saves a URL that names no file (a folder, http://h/)
	// under the scheme's fallback name (index.html, index), as wget does;
	// without it, such a download with no Name fails with [ErrNoName].
	IndexName bool
	// Listing, when set, writes a folder's or a group's listing (a
	// response of KindDirectory or KindArticleList) to the file in place
	// of the server's bytes: the form the caller shows its listings in.
	Listing func(w io.Writer, resp *Response) error
	// Root, when set, is the folder the download cannot leave: the dir
	// given is then a folder below it ("" or "." for Root itself), opened
	// through it, and the path returned begins with Root's name.
	Root *os.Root
}

// Download fetches raw into the folder dir under the name the URL
// suggests, and returns the file's path. See DownloadWith.
func (c *Client) Download(ctx context.Context, raw, dir string) (string, error) {
	return c.DownloadWith(ctx, raw, dir, DownloadOptions{})
}

// DownloadWith fetches raw into the folder dir. The object is written
// under a single file name opened relative to dir without following a
// symbolic link (internal/safedir; an os.Root where the system lacks the
// calls), so no name can lead outside it, to a temporary name (NAME.part)
// that is renamed to NAME once the whole object has arrived: an
// interrupted download never sits under the final name.
// The partial file is kept so that a later Resume can continue it. The
// file's modification time is set to the server's when known.
func (c *Client) DownloadWith(ctx context.Context, raw, dir string, o DownloadOptions) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", &Error{Op: "download", URL: url.RedactString(raw), Err: fmt.Errorf("%w: %w", ErrBadURL, err)}
	}
	return c.DownloadURL(ctx, u, dir, o)
}

// DownloadURL is DownloadWith for a URL already parsed, as a caller that
// has looked into it holds it (deref -i parses each URL of its list to
// name its file).
func (c *Client) DownloadURL(ctx context.Context, u *url.URL, dir string, o DownloadOptions) (string, error) {
	var err error
	var path string
	if c.Retry == nil {
		path, err = c.download(ctx, u, dir, o)
	} else {
		attempt := o
		err = c.Retry.Do(ctx, func() error {
			var err error
			path, err = c.download(ctx, u, dir, attempt)
			attempt.ResumePart = true // a later attempt continues what this one left
			return err
		}, nil)
	}
	if err != nil {
		var fe *Error
		if errors.As(err, &fe) {
			fe.Op = "download"
			return "", fe
		}
		return "", &Error{Op: "download", URL: u.Redacted(), Err: err}
	}
	return path, nil
}

func (c *Client) download(ctx context.Context, u *url.URL, dir string, o DownloadOptions) (string, error) {
	if o.Name != "" && (o.Name != filepath.Base(o.Name) || o.Name == "." || o.Name == ".." || strings.ContainsAny(o.Name, `/\`)) {
		return "", WriteError(fmt.Errorf("name %q is not a single file name", o.Name))
	}
	var d *safedir.Dir
	var err error
	identity, known := "", false
	if o.Root != nil {
		d, err = safedir.OpenIn(o.Root, dir)
		if err == nil {
			defer d.Close()
			identity, known = d.Identity()
		}
	} else {
		var f *openFolder
		f, err = c.folders.open(dir)
		if err == nil {
			defer c.folders.release(dir, f)
			d, identity, known = f.d, f.identity, f.known
		}
	}
	if err != nil {
		return "", WriteError(err)
	}

	name := o.Name
	if name == "" {
		if !o.IndexName && c.namesNoFile(u) {
			return "", fmt.Errorf("%w: %s ends in a folder; give a file name (deref -o NAME, DownloadOptions.Name)", ErrNoName, u.Redacted())
		}
		name = c.suggestedName(u)
	}
	// Two downloads to one file (deref --parallel 2 -O a/x b/x) would
	// write one NAME.part at once and rename a mix of both: the second
	// waits for the first, and replaces its file, as it would one after
	// the other.
	key := identity
	if known {
		key += "/" + name // the folder itself, whatever the path to it
	} else {
		key = targetKey(o.Root, dir, name)
	}
	unlock, err := c.targets.Lock(ctx, key)
	if err != nil {
		return "", err
	}
	defer unlock()
	if o.SkipExisting {
		if _, _, err := d.Stat(name); err == nil {
			return filepath.Join(rootName(o.Root), dir, name), fmt.Errorf("%w: %s", ErrExists, name)
		}
	}
	if o.Segments > 1 && c.Recorder == nil {
		if path, handled, err := c.downloadSegments(ctx, u, dir, d, name, o); handled {
			return path, err
		}
	}
	var offset int64
	part := ""
	if (o.Resume || o.ResumePart) && c.Recorder == nil {
		offset, part = resumePoint(d, name, o.Resume)
	}
	fo := FetchOptions{Offset: offset, ModTimeHint: o.ModTimeHint, Progress: o.Progress, Trace: o.Trace, Redirect: o.Redirect, IfNoneMatch: o.IfNoneMatch,
		ErrorBody: o.ErrorBody && o.Segments <= 1 && offset == 0 && o.Checksum == nil && !o.OnlyNewer}
	if offset == 0 {
		fo.IfModifiedSince, fo.LocalSize = condition(d, name, o)
	}
	resp, err := c.fetchWith(ctx, u, fo) // DownloadWith retries the whole of it
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.Kind == KindSession {
		return "", NotAnObject(resp, u)
	}
	if o.Received != nil {
		o.Received(resp)
	}
	switch {
	case resp.Offset == offset:
	case resp.Offset == 0:
		// The server sent the whole object again: start over, under
		// NAME.part even when resuming NAME itself, which stays as it
		// was until the new copy is whole.
		offset, part = 0, ""
	default:
		return "", fmt.Errorf("%w: asked to resume at byte %d, the server sent from byte %d", ErrProtocol, offset, resp.Offset)
	}
	if part == "" {
		part = name + PartSuffix
	}
	flags := os.O_CREATE // not O_APPEND: it rules out splice and copy_file_range
	if offset == 0 {
		flags |= os.O_TRUNC
	}
	f, err := d.OpenFile(part, flags, 0o644)
	if err != nil {
		return "", WriteError(err)
	}
	if offset > 0 {
		st, err := f.Stat()
		if err == nil && st.Size() != offset {
			err = fmt.Errorf("%s changed while resuming", part)
		}
		if err == nil {
			_, err = f.Seek(offset, io.SeekStart)
		}
		if err != nil {
			f.Close()
			return "", WriteError(err)
		}
	}
	var sum hash.Hash
	if o.Checksum != nil {
		sum = newHash(o.Checksum.Algorithm)
		if offset > 0 {
			// The part already there is read back once into the digest.
			err := hashPrefix(sum, d, part, offset)
			if err != nil {
				f.Close()
				return "", WriteError(err)
			}
		}
	}
	var cerr error
	var copied int64
	if o.Listing != nil && (resp.Kind == KindDirectory || resp.Kind == KindArticleList) {
		bw := bufio.NewWriter(f)
		if cerr = o.Listing(bw, resp); cerr == nil {
			cerr = bw.Flush()
		}
		if cerr != nil {
			cerr = WriteError(cerr)
		}
	} else if sum != nil {
		copied, cerr = io.Copy(io.MultiWriter(f, sum), resp.Body) // no file fast path: every byte goes through the digest
	} else {
		copied, cerr = io.Copy(f, resp.Body)
	}
	if cerr == nil {
		cerr = resp.Body.Close()
	}
	if cerr == nil && sum != nil && !bytes.Equal(sum.Sum(nil), o.Checksum.Sum) {
		f.Close()
		d.Remove(part)
		return "", fmt.Errorf("%w: %s of %s is %x, want %x", ErrChecksum, o.Checksum.Algorithm, name, sum.Sum(nil), o.Checksum.Sum)
	}
	if cerr == nil && !o.KeepModTime && !resp.ModTime.IsZero() {
		_ = d.SetTimes(f, part, time.Now(), resp.ModTime)
	}
	if err := f.Close(); err != nil && cerr == nil {
		cerr = WriteError(err)
	}
	if cerr != nil && offset == 0 && copied == 0 && (errors.Is(cerr, ErrNotFound) || errors.Is(cerr, ErrPermission)) {
		// Refused before a byte came (an FTP RETR refused after its data
		// connection was open): no empty NAME.part is left.
		d.Remove(part)
	}
	if cerr != nil {
		return "", cerr
	}
	if part != name {
		if err := d.Rename(part, name); err != nil {
			return "", WriteError(err)
		}
	}
	if resp.Failure != nil {
		return "", resp.Failure // the error page is the file
	}
	return filepath.Join(rootName(o.Root), dir, name), nil
}

// namesNoFile says whether u ends in a folder rather than a name: as
// the scheme's Fetcher says (protocols.Folderer), else no path or a last
// segment that is empty (http://h/, file:///srv/). A scheme whose
// Fetcher names its objects otherwise (protocols.Namer) always has a
// name, and so has one without folders (Scheme.Tree).
func (c *Client) namesNoFile(u *url.URL) bool {
	s, _ := c.scheme(u.Scheme)
	if f, ok := s.Fetcher.(protocols.Folderer); ok {
		return f.EndsInFolder(u)
	}
	if _, ok := s.Fetcher.(protocols.Namer); ok || s.Tree == protocols.TreeNone || s.Session {
		return false
	}
	segs, err := u.Segments()
	if err != nil {
		return false // the retrieval says what is wrong with it
	}
	return len(segs) == 0 || segs[len(segs)-1] == ""
}

// SuggestedName is the local file name for u: its last path segment,
// decoded and made safe, else "index.html" for HTTP and "index" for the
// rest; a protocol may name it otherwise (protocols.Namer: a WAIS
// document's name is in its docid). It never comes from the server.
// Schemes are as DefaultClient knows them.
func SuggestedName(u *url.URL) string { return DefaultClient().suggestedName(u) }

func (c *Client) suggestedName(u *url.URL) string {
	s, _ := c.scheme(u.Scheme)
	if n, ok := s.Fetcher.(protocols.Namer); ok {
		return n.SuggestedName(u)
	}
	fallback := s.Fallback
	if fallback == "" {
		fallback = "index"
	}
	return protocols.NameFromURL(u, fallback)
}

// resumePoint finds what an earlier download of name left: NAME.part,
// else, when whole is set, NAME. It returns the size to resume from and
// the file to append to.
func resumePoint(d *safedir.Dir, name string, whole bool) (int64, string) {
	names := []string{name + PartSuffix}
	if whole {
		names = append(names, name)
	}
	for _, n := range names {
		size, regular, err := d.Stat(n)
		if err == nil && regular {
			return size, n
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	return 0, ""
}

// localCopy is what NAME is when it is a regular file.
// condition is what makes a download of name conditional: the local
// file's time and size (OnlyNewer), else IfModifiedSince; zero for none.
func condition(d *safedir.Dir, name string, o DownloadOptions) (since time.Time, size int64) {
	if o.OnlyNewer {
		if l := localFile(d, name); l != nil {
			return l.mod, l.size
		}
	}
	return o.IfModifiedSince, 0
}

type localCopy struct {
	size int64
	mod  time.Time
}

// localFile describes the regular file name of d, or is nil.
func localFile(d *safedir.Dir, name string) *localCopy {
	size, regular, err := d.Stat(name)
	if err != nil || !regular {
		return nil
	}
	mod, _, err := d.ModTime(name)
	if err != nil {
		return nil
	}
	return &localCopy{size: size, mod: mod}
}

// rootName is the folder of root, "" for none.
func rootName(root *os.Root) string {
	if root == nil {
		return ""
	}
	return root.Name()
}

// hashPrefix writes the first n bytes of the file name of d into h.
func hashPrefix(h hash.Hash, d *safedir.Dir, name string, n int64) error {
	f, err := d.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := io.CopyN(h, f, n); err != nil {
		return fmt.Errorf("reading %s back for its checksum: %w", name, err)
	}
	return nil
}

// targetKey names the file a download writes: name in dir, under root
// when set, as an absolute path where it can be had.
func targetKey(root *os.Root, dir, name string) string {
	p := filepath.Join(dir, name)
	if root != nil {
		return root.Name() + "\x00" + filepath.Clean(p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// openFolders shares the folders that downloads under way write into:
// downloads into one folder at once (deref -i --parallel 4 -O) open it
// and ask its identity once, not once a file. The folder is closed when
// the last of them ends; a download that starts after that opens it
// again, by its path, as it may be another folder now.
type openFolders struct {
	mu sync.Mutex
	m  map[string]*openFolder
}

type openFolder struct {
	d        *safedir.Dir
	identity string // safedir.Dir.Identity
	known    bool
	users    int
}

// open opens the folder dir, or shares it with the downloads into it
// under way.
func (fs *openFolders) open(dir string) (*openFolder, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f := fs.m[dir]; f != nil {
		f.users++
		return f, nil
	}
	d, err := safedir.Open(dir)
	if err != nil {
		return nil, err
	}
	f := &openFolder{d: d, users: 1}
	f.identity, f.known = d.Identity()
	if fs.m == nil {
		fs.m = map[string]*openFolder{}
	}
	fs.m[dir] = f
	return f, nil
}

// release ends a download's use of f, and closes it after the last.
func (fs *openFolders) release(dir string, f *openFolder) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f.users--; f.users == 0 {
		delete(fs.m, dir)
		f.d.Close()
	}
}
