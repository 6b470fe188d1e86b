// Package mail dereferences mid: and cid: URLs (RFC 2392) in mail already
// received: a Maildir folder or an mbox file. mid:<message-id> is the
// whole message; cid:<content-id> is the body part with that Content-ID
// in any message; mid:<message-id>/<content-id> is that part of that
// message. A part's transfer encoding (base64, quoted-printable) is
// undone; the bytes are streamed from the file.
package mail

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Fetcher finds messages and parts in Dir. The zero value has no mail
// and fails every URL with a clear error.
type Fetcher struct {
	// Dir is an mbox file, a Maildir (with cur/ and new/), or a folder of
	// mailboxes: mbox files, Maildirs and such folders, searched in name
	// order, links not followed.
	Dir string
}

// maxHeader bounds a message's header block.
const maxHeader = 1 << 20

// Fetch finds the message (and part) the URL names.
func (f *Fetcher) Fetch(ctx context.Context, req *protocols.Request) (*protocols.Response, error) {
	u := req.URL
	if f.Dir == "" {
		return nil, fmt.Errorf("%w: %s: refers to mail already received; name the mailbox to look in (--mail-dir, a Maildir or mbox)", protocols.ErrUnsupportedScheme, u.Scheme)
	}
	mid, cid, err := Parse(u)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", protocols.ErrBadURL, err)
	}
	var found *protocols.Response
	err = f.each(func(open func() (io.ReadCloser, error)) (bool, error) {
		r, err := open()
		if err != nil {
			return false, err
		}
		resp, ok, err := match(r, mid, cid)
		if err != nil || !ok {
			r.Close()
			return false, err
		}
		found = resp
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		what := "message <" + mid + ">"
		if mid == "" {
			what = "part <" + cid + ">"
		} else if cid != "" {
			what = "part <" + cid + "> of " + what
		}
		return nil, fmt.Errorf("%w: no %s in %s", protocols.ErrNotFound, what, f.Dir)
	}
	return found, nil
}

// Parse reads a mid: or cid: URL into the message-id and content-id it
// names, without angle brackets (RFC 2392: percent-encoded addr-specs).
func Parse(u *url.URL) (mid, cid string, err error) {
	p := u.Path
	switch u.Scheme {
	case "mid":
		m, c, hasPart := strings.Cut(p, "/")
		if mid, err = url.Unescape(m); err != nil {
			return "", "", fmt.Errorf("mid message-id: %w", err)
		}
		if hasPart {
			if cid, err = url.Unescape(c); err != nil || cid == "" {
				return "", "", fmt.Errorf("mid content-id: %q", c)
			}
		}
	case "cid":
		if cid, err = url.Unescape(p); err != nil {
			return "", "", fmt.Errorf("cid content-id: %w", err)
		}
	default:
		return "", "", fmt.Errorf("scheme %s is not mid or cid", u.Scheme)
	}
	if mid == "" && cid == "" {
		return "", "", errors.New("empty message-id")
	}
	return mid, cid, nil
}

// each calls fn with an opener for every message of the mailbox until fn
// says it is done. Dir is an mbox file, a Maildir, or a folder of
// mailboxes (as ~/Mail usually is: mbox files and Maildirs side by side,
// in folders of their own), searched in name order.
func (f *Fetcher) each(fn func(open func() (io.ReadCloser, error)) (bool, error)) error {
	st, err := os.Stat(f.Dir)
	if err != nil {
		return fmt.Errorf("%w: mailbox: %w", protocols.ErrNotFound, err)
	}
	if !st.IsDir() {
		_, err := eachMbox(f.Dir, fn)
		return err
	}
	_, err = eachIn(f.Dir, 0, fn)
	return err
}

// maxMailDepth bounds how deep folders of mailboxes are searched.
const maxMailDepth = 8

// eachIn searches the folder dir: its messages when it is a Maildir, then
// every mbox file, Maildir and folder of mailboxes in it (Maildir++
// folders such as .Sent inside a Maildir among them). Links are not
// followed, so no folder is searched twice.
func eachIn(dir string, depth int, fn func(open func() (io.ReadCloser, error)) (bool, error)) (bool, error) {
	maildir := isMaildir(dir)
	if maildir {
		if done, err := eachMaildir(dir, fn); err != nil || done {
			return done, err
		}
	}
	if depth >= maxMailDepth {
		return false, nil
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return false, nil // a folder that cannot be read holds nothing to find
	}
	for _, de := range des {
		name := de.Name()
		if maildir && (name == "cur" || name == "new" || name == "tmp") {
			continue
		}
		p := filepath.Join(dir, name)
		var done bool
		switch {
		case de.IsDir():
			done, err = eachIn(p, depth+1, fn)
		case de.Type().IsRegular() && isMbox(p):
			done, err = eachMbox(p, fn)
		}
		if err != nil || done {
			return done, err
		}
	}
	return false, nil
}

// isMaildir reports whether dir has the cur and new folders of a Maildir.
func isMaildir(dir string) bool {
	for _, sub := range []string{"cur", "new"} {
		if st, err := os.Stat(filepath.Join(dir, sub)); err != nil || !st.IsDir() {
			return false
		}
	}
	return true
}

// isMbox reports whether the file at p starts as an mbox does, with a
// "From " line (an empty file is an empty mbox, with nothing to find).
func isMbox(p string) bool {
	file, err := os.Open(p)
	if err != nil {
		return false
	}
	defer file.Close()
	b := make([]byte, 5)
	n, _ := io.ReadFull(file, b)
	return string(b[:n]) == "From "
}

// eachMaildir calls fn for the messages in cur and new.
func eachMaildir(dir string, fn func(open func() (io.ReadCloser, error)) (bool, error)) (bool, error) {
	for _, sub := range []string{"cur", "new"} {
		names, _ := filepath.Glob(filepath.Join(dir, sub, "*"))
		for _, n := range names {
			done, err := fn(func() (io.ReadCloser, error) { return os.Open(n) })
			if err != nil || done {
				return done, err
			}
		}
	}
	return false, nil
}

// eachMbox calls fn for the messages of the mbox file at name.
func eachMbox(name string, fn func(open func() (io.ReadCloser, error)) (bool, error)) (bool, error) {
	// An mbox: messages start at lines "From " after an empty line (or at
	// the start); each is read as a section of the file.
	file, err := os.Open(name)
	if err != nil {
		return false, err
	}
	defer file.Close()
	var starts []int64
	br := bufio.NewReader(file)
	var off int64
	prevEmpty := true
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 && prevEmpty && bytes.HasPrefix(line, []byte("From ")) {
			starts = append(starts, off)
		}
		prevEmpty = len(bytes.TrimRight(line, "\r\n")) == 0
		off += int64(len(line))
		if err == bufio.ErrBufferFull {
			prevEmpty = false
			continue
		}
		if err != nil {
			break
		}
	}
	starts = append(starts, off)
	for i := 0; i+1 < len(starts); i++ {
		start, end := starts[i], starts[i+1]
		done, err := fn(func() (io.ReadCloser, error) {
			f, err := os.Open(file.Name())
			if err != nil {
				return nil, err
			}
			sr := io.NewSectionReader(f, start, end-start)
			br := bufio.NewReader(sr)
			br.ReadSlice('\n') // the "From " line
			return struct {
				io.Reader
				io.Closer
			}{unquoteFrom(br), f}, nil
		})
		if err != nil || done {
			return done, err
		}
	}
	return false, nil
}

// unquoteFrom undoes mboxrd quoting: ">From " at a line start becomes
// "From " (and ">>From " becomes ">From ").
func unquoteFrom(r *bufio.Reader) io.Reader { return &fromReader{r: r} }

// fromReader reads line by line (in pieces of at most the buffer's size,
// so that a long line is not held whole).
type fromReader struct {
	r       *bufio.Reader
	line    []byte // the rest of the current piece, inside r's buffer
	midLine bool   // the piece continues a line
	err     error
}

func (f *fromReader) Read(p []byte) (int, error) {
	for len(f.line) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		var err error
		f.line, err = f.r.ReadSlice('\n')
		if !f.midLine && len(f.line) > 0 && f.line[0] == '>' && bytes.HasPrefix(bytes.TrimLeft(f.line, ">"), []byte("From ")) {
			f.line = f.line[1:]
		}
		f.midLine = err == bufio.ErrBufferFull
		if err != nil && err != bufio.ErrBufferFull {
			f.err = err
		}
	}
	n := copy(p, f.line)
	f.line = f.line[n:]
	return n, nil
}

func trimID(s string) string { return strings.TrimSpace(strings.Trim(strings.TrimSpace(s), "<>")) }

// match reads a message's header; when its Message-ID is mid (or mid is
// empty), it returns the message or the part cid of it.
func match(r io.ReadCloser, mid, cid string) (*protocols.Response, bool, error) {
	br := bufio.NewReaderSize(r, 32<<10)
	var head bytes.Buffer
	tp := textproto.NewReader(bufio.NewReader(io.TeeReader(io.LimitReader(br, maxHeader), &head)))
	h, err := tp.ReadMIMEHeader()
	if err != nil && len(h) == 0 {
		return nil, false, nil // not a message: skip it
	}
	if mid != "" && trimID(h.Get("Message-ID")) != mid {
		return nil, false, nil
	}
	// What the textproto reader buffered past the header is the start of
	// the body: rebuild the stream from the bytes read.
	headerLen := headerLength(head.Bytes())
	rest := io.MultiReader(bytes.NewReader(head.Bytes()[headerLen:]), br)
	resp := &protocols.Response{Kind: protocols.KindFile, Size: -1}
	if t, err := mail.ParseDate(h.Get("Date")); err == nil {
		resp.ModTime = t
	}
	if cid == "" {
		resp.MediaType = "message/rfc822"
		resp.Name = protocols.SafeName(mid) + ".eml"
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head.Bytes()[:headerLen]), rest), r}
		return resp, true, nil
	}
	part, ok, err := findPart(textproto.MIMEHeader(h), rest, cid)
	if err != nil || !ok {
		return nil, false, err
	}
	part.Body = struct {
		io.Reader
		io.Closer
	}{part.Body, r}
	return part, true, nil
}

// headerLength is the length of the header block in b, through its empty
// line.
func headerLength(b []byte) int {
	for _, sep := range [][]byte{[]byte("\r\n\r\n"), []byte("\n\n")} {
		if i := bytes.Index(b, sep); i >= 0 {
			return i + len(sep)
		}
	}
	return len(b)
}

// findPart walks a MIME entity for the part with Content-ID cid.
func findPart(h textproto.MIMEHeader, body io.Reader, cid string) (*protocols.Response, bool, error) {
	if trimID(h.Get("Content-ID")) == cid {
		mt, params, _ := mime.ParseMediaType(h.Get("Content-Type"))
		resp := &protocols.Response{Kind: protocols.KindFile, Size: -1, MediaType: mt, Name: protocols.SafeName(cid)}
		if _, dp, err := mime.ParseMediaType(h.Get("Content-Disposition")); err == nil && dp["filename"] != "" {
			resp.Name = protocols.SafeName(filepath.Base(dp["filename"]))
		} else if params["name"] != "" {
			resp.Name = protocols.SafeName(filepath.Base(params["name"]))
		}
		switch strings.ToLower(h.Get("Content-Transfer-Encoding")) {
		case "base64":
			body = base64.NewDecoder(base64.StdEncoding, &skipSpace{r: body})
		case "quoted-printable":
			body = quotedprintable.NewReader(body)
		}
		resp.Body = io.NopCloser(body)
		return resp, true, nil
	}
	mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
		return nil, false, nil
	}
	mr := multipart.NewReader(body, params["boundary"])
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, nil // a malformed message: not the part
		}
		if resp, ok, err := findPart(p.Header, p, cid); ok || err != nil {
			return resp, ok, err
		}
	}
}

// skipSpace drops line ends and blanks from base64 text.
type skipSpace struct{ r io.Reader }

func (s *skipSpace) Read(p []byte) (int, error) {
	for {
		n, err := s.r.Read(p)
		k := 0
		for _, c := range p[:n] {
			if c != '\r' && c != '\n' && c != ' ' && c != '\t' {
				p[k] = c
				k++
			}
		}
		if k > 0 || err != nil {
			return k, err
		}
	}
}

// The contracts it claims, checked when it compiles.
var _ protocols.Fetcher = (*Fetcher)(nil)
