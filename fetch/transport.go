package fetch

import (
	"errors"
	"fmt"
	"io"
	nethttp "net/http"
	"strconv"
	"strings"
	"time"

	"github.com/urlderef/deref/internal/byterange"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// NewTransport returns an http.RoundTripper that dereferences requests
// with c, so that an unchanged http.Client fetches every scheme c speaks:
//
//	t := &http.Transport{}
//	rt := fetch.NewTransport(fetch.NewClient())
//	for _, s := range []string{"ftp", "gopher", "news", "nntp", "wais", "file"} {
//		t.RegisterProtocol(s, rt)
//	}
//	resp, err := (&http.Client{Transport: t}).Get("ftp://ftp.example.org/pub/README")
//
// It answers GET and HEAD (others get 405). A GET's Range of one range
// ("bytes=N-M", "bytes=N-" or "bytes=-N") is answered with 206 and its
// bytes, of every scheme: the server is asked to start there where the
// protocol can resume, and the bytes before it are skipped here where it
// cannot; the Content-Range names the object's length, or "*" where the
// protocol gives none and the range ends before the object. If-Range is
// honoured as RFC 9110 says (a date must be the object's Last-Modified
// exactly): otherwise, and for several ranges, the whole object comes
// with 200. If-Modified-Since is passed on (304).
//
// When the server answered with a refusal, the answer is a status with
// the error's text as its body: 404 not found, 403 permission, 401 login
// refused, 416 a range beyond the end, 503 a temporary refusal, 502 a bad
// or oversized reply. When no answer came (the connection refused or
// timed out, a name not found, a bad or unsupported URL, a URL that
// designates no object), RoundTrip returns the *Error itself, which
// errors.As reaches through the *url.Error http.Client wraps it in.
//
// Content-Length, Content-Type and Last-Modified come from the
// response's metadata. A listing (a folder, a menu, a newsgroup) is sent
// as the deref command prints it: one TAB-separated line per entry
// (protocols.FormatEntry), as text/tab-separated-values. The body
// streams, and closing it early releases the connection.
func NewTransport(c *Client) nethttp.RoundTripper {
	return &transport{c: c}
}

type transport struct{ c *Client }

func (t *transport) RoundTrip(req *nethttp.Request) (*nethttp.Response, error) {
	if req.Body != nil {
		req.Body.Close() // a RoundTripper closes the request body, even on errors
	}
	if req.URL == nil {
		return nil, &Error{Op: "get", Err: fmt.Errorf("%w: no URL", ErrBadURL)}
	}
	u, err := url.Parse(req.URL.String())
	if err != nil {
		return nil, &Error{Op: "get", URL: url.RedactString(req.URL.String()), Err: fmt.Errorf("%w: %w", ErrBadURL, err)}
	}
	if u.User == nil {
		if user, pass, ok := req.BasicAuth(); ok {
			u.User = url.UserPassword(user, pass)
		}
	}
	switch req.Method {
	case "", nethttp.MethodGet, nethttp.MethodHead:
	default:
		resp := answer(req, nethttp.StatusMethodNotAllowed, fmt.Sprintf("%s: only GET and HEAD dereference a URL", req.Method))
		resp.Header.Set("Allow", "GET, HEAD")
		return resp, nil
	}
	head := req.Method == nethttp.MethodHead
	o := FetchOptions{HeadOnly: head}
	rng, ranged := byterange.Parse(req.Header.Get("Range"))
	ranged = ranged && !head // GET is the only method with ranges
	if ranged {
		o.Offset = rng.Start()
	}
	if ranged && rng.Suffix > 0 {
		// Where the metadata gives the length (FTP's SIZE, HTTP's HEAD),
		// the suffix's first byte is asked for at once, rather than after
		// a transfer from the start, which FTP would have to abort.
		if hr, err := t.c.FetchWith(req.Context(), u, FetchOptions{HeadOnly: true}); err == nil {
			if first, _, ok := rng.Bounds(hr.Size); ok && hr.Size > 0 {
				o.Offset = first
			}
			hr.Body.Close()
		}
	}
	if ims := req.Header.Get("If-Modified-Since"); ims != "" {
		if t, err := nethttp.ParseTime(ims); err == nil {
			o.IfModifiedSince = t
		}
	}
	failed := func(err error) (*nethttp.Response, error) {
		code := statusOf(err)
		if code == 0 {
			return nil, err
		}
		resp := answer(req, code, err.Error())
		if code == nethttp.StatusNotModified {
			resp.Body, resp.ContentLength = nethttp.NoBody, 0
		}
		return resp, nil
	}
	r, err := t.c.FetchWith(req.Context(), u, o)
	if err != nil {
		return failed(err)
	}
	// again fetches the object anew from offset, in place of r.
	again := func(offset int64) error {
		r.Body.Close()
		o.Offset = offset
		r, err = t.c.FetchWith(req.Context(), u, o)
		return err
	}
	if ranged && (r.Kind != KindFile || !byterange.IfRange(req.Header.Get("If-Range"), r.ModTime, r.ETag)) {
		// A listing has no bytes to range over; an object changed since
		// the client's copy, or not known to be the same, is sent whole.
		ranged = false
		if r.Offset > 0 {
			if err := again(0); err != nil {
				return failed(err)
			}
		}
	}
	if ranged && rng.Suffix > 0 && r.Size >= 0 && o.Offset == 0 {
		// The head gave no length, the object did: asked again from the
		// suffix's first byte.
		if first, _, ok := rng.Bounds(r.Size); ok && first > 0 {
			if err := again(first); err != nil {
				return failed(err)
			}
		}
	}
	if r.Kind == KindSession {
		return answer(req, nethttp.StatusNotImplemented, NotAnObject(r, u).Error()), nil
	}
	resp := &nethttp.Response{
		StatusCode: nethttp.StatusOK,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        nethttp.Header{},
		Body:          r.Body,
		ContentLength: r.Size,
		Request:       req,
	}
	if r.MediaType != "" {
		resp.Header.Set("Content-Type", r.MediaType)
	}
	if !r.ModTime.IsZero() {
		resp.Header.Set("Last-Modified", r.ModTime.UTC().Format(nethttp.TimeFormat))
	}
	switch {
	case r.Kind == KindDirectory || r.Kind == KindArticleList:
		r.Body.Close() // the entries are complete without it
		resp.Body, resp.ContentLength = &listingReader{entries: r.Entries}, -1
		resp.Header.Set("Content-Type", "text/tab-separated-values; charset=utf-8")
	case ranged && !(rng == byterange.Range{First: 0, Last: -1} && r.Size < 0):
		// The range's bytes, cut here where the protocol could not start
		// there (Gopher) or gave no length; "bytes=0-" of an object of
		// unknown length is the whole object, streamed as it comes.
		var part byterange.Part
		var err error
		switch {
		case rng.Suffix > 0 && r.Size < 0:
			part, err = byterange.Suffix(r.Body, rng.Suffix)
		case rng.Suffix > 0:
			first, _, _ := rng.Bounds(r.Offset + r.Size)
			part, err = byterange.Cut(r.Body, r.Offset, r.Size, max(first, r.Offset), -1)
		default:
			part, err = byterange.Cut(r.Body, r.Offset, r.Size, rng.First, rng.Last)
		}
		if errors.Is(err, byterange.ErrPastEnd) {
			r.Body.Close()
			resp = answer(req, nethttp.StatusRequestedRangeNotSatisfiable, fmt.Sprintf("%s: the range begins past the end (%d bytes)", u.Redacted(), part.Total))
			resp.Header.Set("Content-Range", fmt.Sprintf("bytes */%d", part.Total))
			return resp, nil
		}
		if err != nil {
			r.Body.Close()
			return nil, &Error{Op: "get", URL: u.Redacted(), Err: err}
		}
		total := "*"
		if part.Total >= 0 {
			total = strconv.FormatInt(part.Total, 10)
		}
		resp.StatusCode = nethttp.StatusPartialContent
		resp.Header.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%s", part.First, part.Last, total))
		resp.ContentLength = part.Last - part.First + 1
		resp.Body = partBody{part.Body, &part, r.Body}
	}
	if r.ETag != "" {
		resp.Header.Set("ETag", r.ETag)
	}
	if resp.ContentLength >= 0 {
		resp.Header.Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	resp.Status = fmt.Sprintf("%d %s", resp.StatusCode, nethttp.StatusText(resp.StatusCode))
	if head {
		resp.Body.Close()
		resp.Body = nethttp.NoBody
	}
	return resp, nil
}

// partBody is a range cut from an object's body: closing it closes both.
type partBody struct {
	io.Reader
	part *byterange.Part
	body io.Closer
}

func (b partBody) Close() error {
	b.part.Close()
	return b.body.Close()
}

// statusOf is the HTTP status that says what a server's refusal meant,
// or 0 when no server answered and the error itself is returned.
func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrNetwork), errors.Is(err, ErrTimeout), errors.Is(err, ErrBadURL),
		errors.Is(err, ErrUnsupportedScheme), errors.Is(err, ErrNotRetrievable):
		return 0
	case errors.Is(err, ErrNotModified):
		return nethttp.StatusNotModified
	case errors.Is(err, ErrNotFound):
		return nethttp.StatusNotFound
	case errors.Is(err, ErrPermission):
		return nethttp.StatusForbidden
	case errors.Is(err, ErrAuth):
		return nethttp.StatusUnauthorized
	case errors.Is(err, ErrRangeNotSatisfied):
		return nethttp.StatusRequestedRangeNotSatisfiable
	case errors.Is(err, ErrTemporary):
		return nethttp.StatusServiceUnavailable
	case errors.Is(err, ErrProtocol), errors.Is(err, ErrShortBody), errors.Is(err, ErrTooLarge):
		return nethttp.StatusBadGateway
	}
	return 0
}

// answer is a response of status code whose body is text.
func answer(req *nethttp.Request, code int, text string) *nethttp.Response {
	body := text + "\n"
	return &nethttp.Response{
		StatusCode: code,
		Status:     fmt.Sprintf("%d %s", code, nethttp.StatusText(code)),
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: nethttp.Header{
			"Content-Type":   {"text/plain; charset=utf-8"},
			"Content-Length": {strconv.Itoa(len(body))},
			"Date":           {time.Now().UTC().Format(nethttp.TimeFormat)},
		},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

// listingReader yields a listing's entries as TAB-separated lines, one
// entry at a time.
type listingReader struct {
	entries []Entry
	line    string
}

func (l *listingReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if l.line == "" {
			if len(l.entries) == 0 {
				break
			}
			l.line = protocols.FormatEntry(l.entries[0]) + "\n"
			l.entries = l.entries[1:]
		}
		c := copy(p[n:], l.line)
		l.line = l.line[c:]
		n += c
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

func (l *listingReader) Close() error {
	l.entries, l.line = nil, ""
	return nil
}
