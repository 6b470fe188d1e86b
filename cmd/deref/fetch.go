// The retrieval of one URL: to standard output, to a file, or as a
// session.

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/xattr"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/gopher"
	"github.com/urlderef/deref/url"
)

// discard is a writer that drops everything, as /dev/null does, without a
// system call per write. It has no ReadFrom, so the copy reads with its own
// large buffer.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// discardIfNull returns discard for a file that is /dev/null (as GNU tar
// does, since writing there has no effect), and f otherwise.
func discardIfNull(f *os.File) io.Writer {
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return f
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(st, null) {
		return discard{}
	}
	return f
}

// folderTimes asks for the exact times of the FTP files among urls that
// share a folder, in one pipelined exchange per folder, up to parallel
// folders at once: their transfers then need no MDTM round trip of their
// own. What cannot be asked is left to each transfer, as are the folders
// whose transfers ask their times with their own commands
// (Client.InlineTimes): a batch would only keep the transfers waiting.
// With onlyNewer every time decides a transfer, and is asked beforehand.
func folderTimes(ctx context.Context, c *fetch.Client, urls []string, parallel int, onlyNewer bool) map[string]time.Time {
	type folder struct {
		u    *url.URL
		raws map[string][]string // name -> the URLs as given
	}
	folders := map[string]*folder{}
	var order []string
	// Whether a server's transfers ask their own times is asked once per
	// server, and its URLs are then passed over without more work.
	type server struct{ scheme, user, host, port string }
	inline := map[server]bool{}
	for _, raw := range urls {
		u, err := parseArg(raw)
		if err != nil || !c.HasModTimes(u.Scheme) {
			continue
		}
		if !onlyNewer {
			k := server{scheme: u.Scheme, host: u.Host, port: u.Port}
			if u.User != nil {
				k.user = u.User.String()
			}
			in, ok := inline[k]
			if !ok {
				in = c.InlineTimes(u)
				inline[k] = in
			}
			if in {
				continue
			}
		}
		fp, err := u.FTP()
		if err != nil || fp.Name == "" || fp.Type == 'd' {
			continue
		}
		dot, err := url.ParseReference("./")
		if err != nil {
			continue
		}
		dir := u.ResolveReference(dot)
		key := dir.String()
		f := folders[key]
		if f == nil {
			f = &folder{u: dir, raws: map[string][]string{}}
			folders[key] = f
			order = append(order, key)
		}
		f.raws[fp.Name] = append(f.raws[fp.Name], raw)
	}
	out := map[string]time.Time{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, max(parallel, 1))
	for _, key := range order {
		f := folders[key]
		if len(f.raws) < 2 {
			continue
		}
		names := make([]string, 0, len(f.raws))
		for n := range f.raws {
			names = append(names, n)
		}
		sort.Strings(names)
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			times, err := c.ModTimes(ctx, f.u, names)
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for n, t := range times {
				for _, raw := range f.raws[n] {
					out[raw] = t
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// deref retrieves one URL into its destination, noting in res what -w
// reports; res.attempt counts the attempts before this one (--retry).
func deref(ctx context.Context, c *fetch.Client, o *options, raw string, stdout, stderr io.Writer, res *result) error {
	u, err := parseArg(raw)
	if err != nil {
		return &fetch.Error{Op: "get", URL: url.RedactString(raw), Err: fmt.Errorf("%w: %w", fetch.ErrBadURL, err)}
	}
	progress := transferHook(ctx, o, res)
	if o.byteRange != "" && o.output != "" && o.output != "-" && !isDevice(o.output) {
		return rangeToFile(ctx, c, o, raw, stderr, res)
	}
	if o.output != "" && o.output != "-" && !o.remoteName {
		// A device or pipe (-o /dev/null) is written directly, as curl does:
		// it has no final name to protect.
		if st, err := os.Stat(o.output); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
			f, err := os.OpenFile(o.output, os.O_WRONLY, 0)
			if err != nil {
				return fetch.WriteError(err)
			}
			defer f.Close()
			stdout = discardIfNull(f)
			res.filename = o.output // what curl's %{filename_effective} names: the device
			dev := *o
			dev.output = "-"
			o = &dev
		}
	}
	if (o.output != "" && o.output != "-") || o.remoteName {
		dir, name, err := outputTarget(o)
		if err != nil {
			return err
		}
		sum, err := expectedSum(o, u, name)
		if err != nil {
			return err
		}
		trace, redirect := res.watch(o)
		path, err := c.DownloadURL(ctx, u, dir, fetch.DownloadOptions{Name: name, Resume: o.resume == "-", ResumePart: res.attempt > 0, ModTimeHint: o.modTimes[raw], OnlyNewer: o.onlyNewer, SkipExisting: o.skipExisting, Progress: progress, Checksum: sum,
			Trace: trace, Redirect: redirect, IfModifiedSince: o.since, ErrorBody: o.failWithBody, IfNoneMatch: o.ifNoneMatch,
			Received: func(resp *fetch.Response) { res.etag, res.etagSeen, res.contentType = resp.ETag, true, resp.MediaType },
			Segments: o.segments, SegmentMin: o.segmentMin, IndexName: o.wgetDir, Listing: listingTo(o)})
		res.filename = path
		if err == nil && o.xattr && path != "" {
			writeXattrs(path, u, res.contentType, stderr)
		}
		return err
	}
	switch cs := commandSchemes[u.Scheme]; {
	case cs.args != nil:
		return handOver(ctx, u, cs, o, stdout, stderr)
	case cs.mail:
		return sendMail(ctx, u, o, c, stderr)
	}
	offset := o.offset + res.written // a retry goes on where standard output stopped
	length, rangeLength := int64(0), o.rangeLength
	if o.rangeSuffix > 0 {
		if !res.fromKnown {
			if res.from, res.fromLen, err = lastBytes(ctx, c, u, o.rangeSuffix); err != nil {
				return err
			}
			res.fromKnown = true
		}
		if res.fromLen == 0 {
			return nil // an empty object
		}
		offset, rangeLength = res.from+res.written, res.fromLen
	}
	if rangeLength > 0 {
		if length = rangeLength - res.written; length <= 0 {
			return nil // the range was written whole before the retry
		}
	}
	trace, redirect := res.watch(o)
	var heads *httpHeads
	if o.head && !o.json && !o.spider {
		heads = &httpHeads{}
		trace = heads.tap(trace)
	}
	resp, err := c.FetchWith(ctx, u, fetch.FetchOptions{Offset: offset, Length: length, HeadOnly: o.head, Progress: progress, Trace: trace, Redirect: redirect, IfModifiedSince: o.since,
		IfNoneMatch: o.ifNoneMatch, ErrorBody: o.failWithBody && !o.head})
	if err == nil || res.code > 0 {
		res.started() // a reply came
	}
	if o.dump != nil {
		o.dump.end() // the blank line after an HTTP head comes before the object
	}
	if err != nil {
		return err
	}
	res.contentType = resp.MediaType
	res.etag, res.etagSeen = resp.ETag, true
	if resp.Offset != offset && resp.Kind == protocols.KindFile && resp.Failure == nil {
		if resp.Offset != 0 {
			resp.Body.Close()
			return &fetch.Error{Op: "get", URL: u.Redacted(), Err: fmt.Errorf("%w: -C %d: the server sent from byte %d", fetch.ErrProtocol, offset, resp.Offset)}
		}
		// The server ignored the offset and sends the whole object: its
		// first bytes are read and dropped here, so that standard output
		// still gets the object from the offset on.
		if _, err := io.CopyN(io.Discard, resp.Body, offset); err != nil {
			resp.Body.Close()
			if errors.Is(err, io.EOF) {
				return &fetch.Error{Op: "get", URL: u.Redacted(), Err: fmt.Errorf("%w: byte %d is beyond the end of the object", fetch.ErrRangeNotSatisfied, offset)}
			}
			return err
		}
	}
	if resp.Kind == protocols.KindSession {
		return interact(ctx, resp, u, o, stdout, stderr)
	}
	defer resp.Body.Close()
	if o.head {
		resp.Body.Close()
		if o.spider {
			return nil // it is there
		}
		gopherPlusMeta(ctx, c, u, resp)
		if o.json {
			return printMetaJSON(stdout, u, resp)
		}
		return printHead(stdout, c, u, resp, heads.String())
	}
	if resp.Note != "" && resp.Kind != protocols.KindSearchIndex {
		fmt.Fprintln(stderr, "deref: "+resp.Note)
	}
	switch {
	case (resp.Kind == protocols.KindDirectory || resp.Kind == protocols.KindArticleList) && !o.raw:
		bw := bufio.NewWriter(stdout)
		err := listingTo(o)(bw, resp)
		if err == nil {
			err = bw.Flush()
		}
		if err != nil {
			return fetch.WriteError(err)
		}
		return resp.Body.Close()
	case resp.Kind == protocols.KindSearchIndex && resp.Prompt != "": // a server's question
		how := "deref '" + u.Redacted() + "?ANSWER' (the answer %-encoded)"
		if resp.Sensitive {
			how += "; the answer is sensitive: it stays in your shell's history"
		}
		fmt.Fprintln(stderr, "deref: "+u.Redacted()+" asks: "+protocols.Printable(resp.Prompt)+"; to answer: "+how)
	case resp.Kind == protocols.KindSearchIndex:
		fmt.Fprintln(stderr, "deref: "+u.Redacted()+" is a searchable index; to search it: deref '"+u.Redacted()+"?words'")
	}

	out := stdout
	if o.retry > 0 {
		out = &countingWriter{w: stdout, n: &res.written} // only then: counting costs the copy its fast paths
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		return err
	}
	if err := resp.Body.Close(); err != nil {
		return err
	}
	if resp.Failure != nil { // --fail-with-body: the error page was written
		return &fetch.Error{Op: "get", URL: u.Redacted(), Err: resp.Failure}
	}
	return nil
}

// listingTo is what a file gets of a listing: what standard output
// would show (the TAB form, --json's, -l's names), or with --raw nothing
// of deref's (nil: the server's bytes).
func listingTo(o *options) func(io.Writer, *fetch.Response) error {
	if o.raw {
		return nil
	}
	return func(w io.Writer, resp *fetch.Response) error {
		if o.listOnly && !o.json {
			for _, e := range resp.Entries {
				if e.Name != "" && e.Kind != protocols.KindInfo {
					if _, err := io.WriteString(w, oneLine(e.Name)+"\n"); err != nil {
						return err
					}
				}
			}
			return nil
		}
		return printEntries(w, resp.Entries, o.json)
	}
}

// removePartial is --remove-on-error: what a retrieval of raw to a file
// that failed with err left is removed: NAME.part and its segments file
// (kept otherwise, for -C - to continue), and NAME when --fail-with-body
// wrote an error page there. A NAME the failed retrieval did not write
// is left: deref never leaves a partial object under it.
func removePartial(o *options, raw string, err error) {
	if o.output == "-" || o.output == "" && !o.remoteName || o.output != "" && isDevice(o.output) {
		return
	}
	dir, name, terr := outputTarget(o)
	if terr != nil {
		return
	}
	if name == "" {
		u, perr := parseArg(raw)
		if perr != nil {
			return
		}
		name = fetch.SuggestedName(u)
	}
	os.Remove(filepath.Join(dir, name+fetch.PartSuffix))
	os.Remove(filepath.Join(dir, name+fetch.SegmentsSuffix))
	if o.failWithBody && fetch.HTTPStatus(err) >= 400 {
		os.Remove(filepath.Join(dir, name))
	}
}

// outputTarget is the folder a file goes into (-o's with --output-dir,
// made with --create-dirs) and its name ("" for -O: the URL's), checked
// not to be a folder.
func outputTarget(o *options) (dir, name string, err error) {
	dir = o.outputDir
	if o.output != "" {
		name = filepath.Base(o.output)
		dir = filepath.Join(o.outputDir, filepath.Dir(o.output))
	}
	if dir == "" {
		dir = "."
	}
	if o.createDirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", "", fetch.WriteError(err)
		}
	}
	if name != "" {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.IsDir() {
			return "", "", fetch.WriteError(fmt.Errorf("%s is a folder", filepath.Join(dir, name)))
		}
	}
	return dir, name, nil
}

// headerDump writes -D's lines: what the servers answer before the
// object, each line ending in CRLF, and an HTTP head ending in a blank
// line, as curl -D writes them.
type headerDump struct {
	mu   sync.Mutex
	w    io.Writer
	head bool // within an HTTP head
}

func (d *headerDump) line(text string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if strings.HasPrefix(text, "HTTP/") {
		if d.head {
			io.WriteString(d.w, "\r\n") // a redirect's head ends before the next one's
		}
		d.head = true
	}
	io.WriteString(d.w, oneLine(text)+"\r\n")
}

// end ends an HTTP head written.
func (d *headerDump) end() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.head {
		io.WriteString(d.w, "\r\n")
		d.head = false
	}
}

// rangeToFile writes -r's bytes into -o's file: into a temporary file
// beside it first, which gets the name once the range is whole, so that
// a failure leaves nothing under it. A retry starts the range over.
func rangeToFile(ctx context.Context, c *fetch.Client, o *options, raw string, stderr io.Writer, res *result) error {
	dir, name, err := outputTarget(o)
	if err != nil {
		return err
	}
	final := filepath.Join(dir, name)
	f, err := rangeTemp(dir, name)
	if err != nil {
		return fetch.WriteError(err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	std := *o
	std.output = "-"
	res.written = 0
	if err := deref(ctx, c, &std, raw, f, stderr, res); err != nil {
		return err
	}
	res.written = 0
	if err := f.Close(); err != nil {
		return fetch.WriteError(err)
	}
	if err := os.Rename(f.Name(), final); err != nil {
		return fetch.WriteError(err)
	}
	ok = true
	res.filename = final
	return nil
}

// lastBytes is where the last n bytes of u's object start, and how many
// there are (all of a smaller object), for -r -N: its size is asked
// first (HTTP HEAD, FTP SIZE), so that every scheme that gives one can
// then be read from that byte.
func lastBytes(ctx context.Context, c *fetch.Client, u *url.URL, n int64) (int64, int64, error) {
	resp, err := c.FetchWith(ctx, u, fetch.FetchOptions{HeadOnly: true})
	if err != nil {
		return 0, 0, err
	}
	resp.Body.Close()
	if resp.Size < 0 || resp.Kind != protocols.KindFile {
		return 0, 0, &fetch.Error{Op: "get", URL: u.Redacted(), Err: fmt.Errorf("%w: -r -%d counts from the end, and the server gives no size", fetch.ErrRangeNotSatisfied, n)}
	}
	n = min(n, resp.Size)
	return resp.Size - n, n, nil
}

// rangeTemp makes the temporary file of a range written to name in dir:
// a new file, with the permissions the umask leaves of 0666 as the
// downloads' (os.CreateTemp's are 0600).
func rangeTemp(dir, name string) (*os.File, error) {
	for {
		var b [6]byte
		rand.Read(b[:])
		f, err := os.OpenFile(filepath.Join(dir, "."+name+"."+hex.EncodeToString(b[:])+".part"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
}

// gopherPlusMeta asks a Gopher+ server for what plain Gopher lacks: the
// item's size (the "+" view's length header) and its attributes ("!").
// A server that does not speak Gopher+ leaves r as it was.
func gopherPlusMeta(ctx context.Context, c *fetch.Client, u *url.URL, r *fetch.Response) {
	g, err := u.Gopher()
	if err != nil || !commandSchemes[u.Scheme].plusMeta || g.HasPlus || g.Type == '7' {
		return
	}
	if g.Type != '1' {
		if pu, err := gopher.WithPlus(u, "+"); err == nil {
			if pr, err := c.Fetch(ctx, pu, 0); err == nil {
				pr.Body.Close()
				if pr.Size >= 0 {
					r.Size = pr.Size
				}
			}
		}
	}
	if au, err := gopher.WithPlus(u, "!"); err == nil {
		if ar, err := c.Fetch(ctx, au, 0); err == nil {
			ar.Body.Close()
			r.Attributes = ar.Attributes
			if t, ok := gopher.ModDate(ar.Attributes); ok && r.ModTime.IsZero() {
				r.ModTime = t
			}
		}
	}
}

// expectedSum is the digest a download of u named name must have: from
// --checksum, or its line in the --checksum-file; nil when neither is set.
func expectedSum(o *options, u *url.URL, name string) (*fetch.Checksum, error) {
	switch {
	case o.sum != nil:
		return o.sum, nil
	case o.sums != nil:
		if name == "" {
			name = fetch.SuggestedName(u)
		}
		c, ok, err := fetch.FindChecksum(bytes.NewReader(o.sums), name)
		if err != nil {
			return nil, &fetch.Error{Op: "get", URL: u.Redacted(), Err: fmt.Errorf("%w: --checksum-file: %w", fetch.ErrChecksum, err)}
		}
		if !ok {
			return nil, &fetch.Error{Op: "get", URL: u.Redacted(), Err: fmt.Errorf("%w: the --checksum-file has no line for %s", fetch.ErrChecksum, name)}
		}
		return &c, nil
	}
	return nil, nil
}

// readSums fetches a sums file, a URL of any scheme or a local path, whole
// (at most 16 MiB).
func readSums(ctx context.Context, c *fetch.Client, where string) ([]byte, error) {
	// A URL of a scheme the client knows (file:/srv/SUMS too), else a path
	// (C:\SUMS is one).
	scheme, _, colon := strings.Cut(where, ":")
	if _, known := c.Scheme(strings.ToLower(scheme)); strings.Contains(where, "://") || colon && known {
		u, err := parseArg(where)
		if err != nil {
			return nil, &fetch.Error{Op: "get", URL: url.RedactString(where), Err: fmt.Errorf("%w: %w", fetch.ErrBadURL, err)}
		}
		resp, err := c.Fetch(ctx, u, 0)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
		if err == nil {
			err = resp.Body.Close()
		}
		return b, err
	}
	f, err := os.Open(where)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 16<<20))
}

// writeXattrs writes the URL a file came from (without user and
// password) and its media type into its extended attributes, as curl
// --xattr and wget --xattr do; a file system or system without them gets
// a warning, not a failure.
func writeXattrs(path string, u *url.URL, mediaType string, stderr io.Writer) {
	origin := *u
	origin.User = nil
	attrs := [][2]string{{"user.xdg.origin.url", origin.String()}}
	if mediaType != "" {
		attrs = append(attrs, [2]string{"user.mime_type", mediaType})
	}
	if err := xattr.Set(path, attrs); err != nil {
		errMu.Lock()
		fmt.Fprintln(stderr, "deref: --xattr: "+oneLine(path+": "+err.Error()))
		errMu.Unlock()
	}
}
