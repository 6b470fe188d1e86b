package wais

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Fetcher dereferences wais: URLs. The zero value is ready to use.
type Fetcher struct {
	// MaxDocuments is the most hits a search asks for; 0 means 40.
	MaxDocuments int
	// ChunkSize is the byte range asked for by each retrieval; 0 means
	// 10000, what the classic clients asked (a reply must fit in 100000
	// bytes).
	ChunkSize int
	// ReplyTimeout bounds the wait for each reply; 0 means one minute. A
	// server that closes or never answers is an error, never a hang.
	ReplyTimeout time.Duration
	// NoInit leaves out the Init exchange, as lynx did; servers of the
	// freeWAIS lineage answer searches without it.
	NoInit bool
}

func (f *Fetcher) chunk() int64 {
	if f.ChunkSize > 0 {
		return int64(f.ChunkSize)
	}
	return 10000
}

func (f *Fetcher) timeout() time.Duration {
	if f.ReplyTimeout > 0 {
		return f.ReplyTimeout
	}
	return time.Minute
}

// Error is a failed WAIS exchange: the step (init, search, retrieve slice
// N), the server's diagnostic when it sent one, and the sentinel it maps
// to.
type Error struct {
	Step string
	Diag *Diagnostic
	Kind error // a protocols sentinel
	Err  error // the cause, when not a diagnostic
}

// Error gives the step that failed and why.
func (e *Error) Error() string {
	msg := "wais " + e.Step + ": "
	switch {
	case e.Diag != nil && e.Err != nil:
		msg += e.Err.Error() + " (" + e.Diag.String() + ")"
	case e.Diag != nil:
		msg += e.Diag.String()
	case e.Err != nil:
		msg += e.Err.Error()
	default:
		msg += e.Kind.Error()
	}
	return msg
}

// Unwrap returns the sentinel and the cause.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

// diagKind maps a diagnostic to a sentinel (notes §13): an unknown
// database and a document that is not there are not found, T2 is
// permission, S2 and the resource codes are temporary.
func diagKind(d Diagnostic) error {
	switch {
	case d.Code == "S1" && strings.Contains(d.Info, "database is not available"):
		return protocols.ErrNotFound
	case d.Code == "SF":
		return protocols.ErrNotFound
	case d.Code == "T2" || d.Code == "SH":
		return protocols.ErrPermission
	case d.Code == "S2" || d.Code == "SR" || d.Code == "SS" || d.Code == "ST":
		return protocols.ErrTemporary
	}
	return protocols.ErrProtocol
}

// session is one connection to a WAIS server.
type session struct {
	conn    net.Conn
	br      *bufio.Reader
	req     *protocols.Request
	timeout time.Duration
	stop    func() bool
	buf     []byte // the last reply's body, reused
}

func (f *Fetcher) connect(ctx context.Context, req *protocols.Request) (*session, error) {
	addr := req.URL.HostPort()
	req.Tracef(protocols.TraceInfo, "connecting to "+addr)
	conn, err := req.Dialer()(ctx, "tcp", addr)
	if err != nil {
		return nil, protocols.NetError(err)
	}
	s := &session{conn: conn, br: bufio.NewReaderSize(conn, 32<<10), req: req, timeout: f.timeout()}
	s.stop = context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	if f.NoInit {
		return s, nil
	}
	body, err := s.exchange(ctx, "init", InitRequest(defaultMessageSize), "Init")
	if err == nil {
		var a *APDU
		if a, err = ParseAPDU(body); err == nil {
			var res byte
			if res, err = InitResult(a); err == nil && res != 1 {
				err = &Error{Step: "init", Kind: protocols.ErrProtocol, Err: fmt.Errorf("server refused the Init (result %d)", res)}
			} else if err == nil {
				req.Tracef(protocols.TraceRecv, "InitResponse: accepted")
			}
		}
		if err != nil && !isError(err) {
			err = &Error{Step: "init", Kind: protocols.ErrProtocol, Err: &FormatError{What: "InitResponse", Err: err}}
		}
	}
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func isError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

func (s *session) close() {
	s.stop()
	s.conn.Close()
}

// tracef reports a line of the conversation when tracing is on.
func (s *session) tracef(dir protocols.TraceDir, format string, args ...any) {
	if s.req.Trace != nil {
		s.req.Tracef(dir, fmt.Sprintf(format, args...))
	}
}

// exchange sends one APDU and reads the reply body, with a deadline. what
// describes the request for the trace (format and args).
func (s *session) exchange(ctx context.Context, step string, a *APDU, what string, args ...any) ([]byte, error) {
	msg := Message(a.Marshal())
	if s.req.Trace != nil {
		s.tracef(protocols.TraceSend, "%s (%d bytes)", fmt.Sprintf(what, args...), len(msg))
	}
	s.conn.SetDeadline(time.Now().Add(s.timeout))
	if _, err := s.conn.Write(msg); err != nil {
		return nil, s.netErr(ctx, step, err)
	}
	_, body, err := ReadMessage(s.br, MaxBody, s.buf)
	if err != nil {
		var fe *FormatError
		switch {
		case errors.As(err, &fe):
			return nil, &Error{Step: step, Kind: protocols.ErrProtocol, Err: err}
		case errors.Is(err, errClosed), errors.Is(err, io.ErrUnexpectedEOF):
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &Error{Step: step, Kind: protocols.ErrProtocol, Err: err}
		}
		return nil, s.netErr(ctx, step, err)
	}
	if len(body) == 0 {
		return nil, &Error{Step: step, Kind: protocols.ErrProtocol, Err: errNoReply}
	}
	s.buf = body // reused by the next reply: callers are done with this one by then
	return body, nil
}

func (s *session) netErr(ctx context.Context, step string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &Error{Step: step, Kind: protocols.NetError(err), Err: err}
}

// Fetch dereferences a wais: URL: the database form is reported as a
// search index without any traffic; a search returns the hits as
// entries; a document is retrieved slice by slice as Body is read.
func (f *Fetcher) Fetch(ctx context.Context, req *protocols.Request) (*protocols.Response, error) {
	w, err := req.URL.WAIS()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", protocols.ErrBadURL, err)
	}
	switch {
	case w.HasSearch:
		return f.search(ctx, req, w)
	case w.IsDocument():
		docid, err := DecodeWPath(w.WPath)
		if err != nil {
			return nil, fmt.Errorf("%w: wais wpath: %w", protocols.ErrBadURL, err)
		}
		return f.retrieve(ctx, req, w, docid)
	}
	return &protocols.Response{
		Kind: protocols.KindSearchIndex, Size: 0, MediaType: "text/plain",
		Name: protocols.SafeName(w.Database), Body: io.NopCloser(strings.NewReader("")),
		Note: "a WAIS index: search it with " + searchHint(req.URL, w.Database),
	}, nil
}

func searchHint(u *url.URL, db string) string {
	return baseURL(u) + "/" + url.EscapeSegment(db) + "?words"
}

// baseURL is scheme, host and port of u as written, without user info.
func baseURL(u *url.URL) string { return "wais://" + u.Site() }

// DocumentURL is the link of a search hit (notes §12.3): the host and port
// searched, never the server's own name from the docid, the database as
// one segment, the type, the length when known, and the wpath.
func DocumentURL(u *url.URL, database string, h *DocumentHeader) string {
	s := baseURL(u) + "/" + url.EscapeSegment(database) + "/" + url.EscapeSegment(h.Type()) + "/"
	if h.Length > 0 {
		s += strconv.FormatInt(h.Length, 10) + "/"
	}
	return s + EncodeWPath(h.DocID)
}

// catalogPrefix starts the headline of the pseudo hit a freeWAIS server
// returns when nothing matched (notes §13.1).
const catalogPrefix = "Search produced no result."

func (f *Fetcher) search(ctx context.Context, req *protocols.Request, w *url.WAISPath) (*protocols.Response, error) {
	s, err := f.connect(ctx, req)
	if err != nil {
		return nil, err
	}
	defer s.close()
	max := f.MaxDocuments
	if max <= 0 {
		max = defaultMaxDocuments
	}
	body, err := s.exchange(ctx, "search", SearchRequest(w.Database, w.Search, max), "Search %q in %s", w.Search, w.Database)
	if err != nil {
		return nil, err
	}
	r, err := ParseSearchResponse(body)
	if err != nil {
		return nil, &Error{Step: "search", Kind: protocols.ErrProtocol, Err: &FormatError{What: "SearchResponse", Err: err}}
	}
	req.Tracef(protocols.TraceRecv, fmt.Sprintf("SearchResponse: %d documents, %d diagnostics", len(r.Headers), len(r.Diagnostics)))
	for _, d := range r.Diagnostics {
		req.Tracef(protocols.TraceRecv, d.String())
	}
	if len(r.Headers) == 0 && len(r.Diagnostics) > 0 {
		d := r.Diagnostics[0]
		return nil, &Error{Step: "search", Diag: &d, Kind: diagKind(d)}
	}
	resp := &protocols.Response{
		Kind: protocols.KindDirectory, Size: -1, MediaType: "text/plain",
		Name: protocols.SafeName(w.Database) + ".search",
	}
	for i := range r.Headers {
		h := &r.Headers[i]
		e := protocols.Entry{Kind: protocols.KindFile, Name: Headline(h.Headline), Size: h.Length, Type: h.Type(), Score: h.Score}
		if h.Lines > 0 {
			e.Lines = h.Lines
		}
		if h.DocID != nil {
			e.URL = DocumentURL(req.URL, w.Database, h)
		}
		if h.Type() == "URL" {
			if _, err := url.Parse(e.Name); err == nil {
				e.URL = e.Name
			}
		}
		resp.Entries = append(resp.Entries, e)
	}
	if len(r.Headers) == 1 && r.Headers[0].Score == 0 && strings.HasPrefix(r.Headers[0].Headline, catalogPrefix) {
		resp.Note = "no documents matched; the database's catalog is " + resp.Entries[0].URL
	}
	if len(resp.Entries) == 0 {
		resp.Note = "no documents matched"
	}
	for _, d := range r.Diagnostics {
		resp.Status += d.String() + "\n"
	}
	resp.Status = strings.TrimSuffix(resp.Status, "\n")
	text := Render(req.URL, w, resp.Entries, r.Diagnostics)
	resp.Body = io.NopCloser(strings.NewReader(text))
	resp.Size = int64(len(text))
	return resp, nil
}

// Headline makes a headline fit for display (notes §8.1, §8.3): ESC
// markers and other control characters removed, trailing spaces trimmed.
func Headline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 0x1b {
			if i+1 < len(s) && (s[i+1] == '(' || s[i+1] == ')') {
				i++
			} else {
				i += 4
			}
			continue
		}
		if c < 0x20 || c == 0x7f {
			continue
		}
		b.WriteByte(c)
	}
	h := strings.TrimRight(b.String(), " ")
	if h == "" {
		return "(no headline)"
	}
	return h
}

// Render is the plain-text rendering of a search (notes §14): one
// numbered entry per hit with score, lines, length and type, the document
// URL on its own line, then the diagnostics.
func Render(u *url.URL, w *url.WAISPath, entries []protocols.Entry, diags []Diagnostic) string {
	var b strings.Builder
	fmt.Fprintf(&b, "WAIS search of %q in %s at %s: %d documents\n", w.Search, w.Database, u.Site(), len(entries))
	if len(entries) > 0 {
		b.WriteString("(score is relative to this search; best first)\n\n")
	}
	for i, e := range entries {
		fmt.Fprintf(&b, "%2d. %s\n      score %d", i+1, e.Name, e.Score)
		if e.Lines > 0 {
			fmt.Fprintf(&b, "   %d lines", e.Lines)
		}
		if e.Size >= 0 {
			fmt.Fprintf(&b, "   %d bytes", e.Size)
		}
		fmt.Fprintf(&b, "   %s\n", e.Type)
		if e.URL != "" {
			fmt.Fprintf(&b, "      %s\n", e.URL)
		}
	}
	if len(entries) == 0 && len(diags) == 0 {
		b.WriteString("no documents\n")
	}
	for _, d := range diags {
		b.WriteString(d.String() + "\n")
	}
	return b.String()
}

// ParseResults reads a search's result list as Render writes it (an
// archived search's record) back into its entries: name, score, lines,
// size, type and URL of each hit.
func ParseResults(text string) []protocols.Entry {
	var out []protocols.Entry
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		num, name, ok := strings.Cut(strings.TrimLeft(lines[i], " "), ". ")
		if !ok || num == "" || strings.Trim(num, "0123456789") != "" || i+1 >= len(lines) {
			continue
		}
		f := strings.Fields(lines[i+1])
		if len(f) < 2 || f[0] != "score" {
			continue
		}
		e := protocols.Entry{Kind: protocols.KindFile, Name: name, Size: -1}
		e.Score, _ = strconv.ParseInt(f[1], 10, 64)
		for j := 2; j+1 < len(f); j += 2 {
			n, err := strconv.ParseInt(f[j], 10, 64)
			if err != nil {
				break
			}
			switch f[j+1] {
			case "lines":
				e.Lines = n
			case "bytes":
				e.Size = n
			}
		}
		e.Type = f[len(f)-1]
		i++
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "      ") && strings.Contains(lines[i+1], "://") {
			e.URL = strings.TrimSpace(lines[i+1])
			i++
		}
		out = append(out, e)
	}
	return out
}

// MediaType maps a WAIS type to a media type (notes §12.5).
func MediaType(t string) string {
	switch strings.ToUpper(t) {
	case "TEXT":
		return "text/plain"
	case "HTML":
		return "text/html"
	case "WSRC":
		return "application/x-wais-source"
	case "GIF":
		return "image/gif"
	case "JPEG":
		return "image/jpeg"
	case "TIFF":
		return "image/tiff"
	case "PS":
		return "application/postscript"
	case "DVI":
		return "application/x-dvi"
	case "PICT":
		return "image/x-pict"
	}
	return "application/octet-stream"
}

// SuggestedName is the local file name of a wais: URL: for a document, the
// file name of the local id inside its docid (field 3, then 6, as the
// freeWAIS lineage writes "start end path"), else the database; never a
// name the server sends.
func SuggestedName(u *url.URL) string {
	w, err := u.WAIS()
	if err != nil {
		return "index"
	}
	if !w.IsDocument() {
		if n := protocols.SafeName(w.Database); n != "" {
			return n
		}
		return "index"
	}
	if docid, err := DecodeWPath(w.WPath); err == nil {
		if fs, err := ParseFields(docid); err == nil {
			for _, want := range []int{3, 6} {
				for _, f := range fs {
					if f.Tag != want {
						continue
					}
					id := string(f.Value)
					if i := strings.LastIndexByte(id, ' '); i >= 0 {
						id = id[i+1:]
					}
					if n := protocols.SafeName(path.Base(id)); n != "" && n != "/" {
						return n
					}
				}
			}
		}
	}
	if n := protocols.SafeName(w.Database); n != "" {
		return n + ".doc"
	}
	return "document"
}

func (f *Fetcher) retrieve(ctx context.Context, req *protocols.Request, w *url.WAISPath, docid []byte) (*protocols.Response, error) {
	length := w.Length
	if length <= 0 {
		length = -1
	}
	offset := req.Offset
	resp := &protocols.Response{Kind: protocols.KindFile, Size: -1, MediaType: MediaType(w.Type), Name: SuggestedName(req.URL)}
	if length >= 0 {
		if offset > length {
			return nil, fmt.Errorf("%w: offset %d, length %d", protocols.ErrRangeNotSatisfied, offset, length)
		}
		resp.Size = length - offset
		if offset == length {
			resp.Offset = offset
			resp.Body = io.NopCloser(strings.NewReader(""))
			return resp, nil
		}
	}
	s, err := f.connect(ctx, req)
	if err != nil {
		return nil, err
	}
	b := &docBody{ctx: ctx, s: s, db: w.Database, docid: docid, typ: w.Type, chunk: f.chunk(), next: offset, length: length}
	if err := b.fill(true); err != nil {
		s.close()
		return nil, err
	}
	resp.Offset = offset
	resp.Body = b
	return resp, nil
}

// docBody streams a document, one retrieval per slice: at most one slice
// is held at a time.
type docBody struct {
	ctx    context.Context
	s      *session
	db     string
	docid  []byte
	typ    string
	chunk  int64
	next   int64 // where the next slice starts
	length int64 // -1 when unknown
	slices int
	buf    []byte
	done   bool
	err    error
	closed bool
}

// fill fetches the next slice into buf.
func (b *docBody) fill(first bool) error {
	start := b.next
	end := start + b.chunk
	if b.length >= 0 && end > b.length {
		end = b.length
	}
	b.slices++
	step := "retrieve slice " + strconv.Itoa(b.slices)
	body, err := b.s.exchange(b.ctx, step, RetrievalRequest(b.db, b.docid, b.typ, UnitBytes, start, end),
		"Retrieve %s bytes [%d,%d) of %s", b.typ, start, end, b.db)
	if err != nil {
		return err
	}
	r, err := ParseSearchResponse(body)
	if err != nil {
		return &Error{Step: step, Kind: protocols.ErrProtocol, Err: &FormatError{What: "SearchResponse", Err: err}}
	}
	var text []byte
	hasText := false
	for _, t := range r.Texts {
		if t.HasText {
			if !hasText {
				text = t.Text // inside the reply buffer: read before the next slice
			} else {
				text = append(text[:len(text):len(text)], t.Text...)
			}
			hasText = true
		}
	}
	var diag *Diagnostic
	if len(r.Diagnostics) > 0 {
		diag = &r.Diagnostics[0]
	}
	b.s.tracef(protocols.TraceRecv, "DocumentText: %d bytes", len(text))
	if diag != nil {
		b.s.tracef(protocols.TraceRecv, "%s", diag)
	}
	if int64(len(text)) > end-start {
		return &Error{Step: step, Kind: protocols.ErrProtocol, Err: fmt.Errorf("server sent %d bytes for a slice of %d", len(text), end-start)}
	}
	if first && start > 0 && !hasText && diag != nil && diag.Code == "SF" {
		return &Error{Step: step, Diag: diag, Kind: protocols.ErrRangeNotSatisfied}
	}
	if first && len(text) == 0 && diag != nil && (start == 0 || diag.Code != "SF") {
		return &Error{Step: step, Diag: diag, Kind: diagKind(*diag)}
	}
	if first && !hasText && diag == nil {
		return &Error{Step: step, Kind: protocols.ErrNotFound, Err: errors.New("the server sent no text for the document")}
	}
	if diag != nil && diag.Code != "SF" {
		return &Error{Step: step, Diag: diag, Kind: diagKind(*diag)}
	}
	b.buf = text
	b.next = start + int64(len(text))
	short := int64(len(text)) < end-start
	switch {
	case b.length >= 0 && b.next >= b.length:
		b.done = true
	case b.length >= 0 && (short || diag != nil || !hasText):
		b.done = true
		e := &Error{Step: step, Diag: diag, Kind: protocols.ErrShortBody, Err: fmt.Errorf("document ended at byte %d of %d", b.next, b.length)}
		if len(text) == 0 {
			return e
		}
		b.err = e
	case b.length < 0 && (short || diag != nil || !hasText):
		b.done = true
	}
	return nil
}

// Read returns the pending slice, fetching the next one when it is used up.
func (b *docBody) Read(p []byte) (int, error) {
	for len(b.buf) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		if b.closed {
			return 0, errors.New("read after close")
		}
		if b.done {
			return 0, io.EOF
		}
		if err := b.fill(false); err != nil {
			b.err = err
			return 0, err
		}
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	return n, nil
}

// Close ends the connection.
func (b *docBody) Close() error {
	if !b.closed {
		b.closed = true
		b.s.close()
	}
	return nil
}

// The contracts it claims, checked when it compiles.
var _ protocols.Fetcher = (*Fetcher)(nil)
