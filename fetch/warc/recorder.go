package warc

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Recorder tees a fetch.Client's retrievals into a Writer (set it as
// Client.Recorder):
//
//   - an object or a listing of FTP, Gopher, news, WAIS and file: is a
//     resource record (a listing's raw bytes, its URI ending in "/"),
//     WARC-Protocol naming the protocol (gopher+ where Gopher+ was
//     spoken), the media type from the response;
//
//   - FTP's control conversation goes with it as a metadata record of type
//     text/x-ftp-control-conversation (passwords redacted), linked by
//     WARC-Concurrent-To, as Heritrix and wpull write it; so does any
//     scheme's whose conversation is archived (Prospero's request and
//     reply lines, text/x-prospero-conversation);
//
//   - a WAIS search's result list is a metadata record.
//
//   - an HTTP exchange over deref's own connection is a request record
//     (its head as sent, Authorization hidden) and a response record (the
//     head as received and the body), linked by WARC-Concurrent-To, with
//     WARC-IP-Address; a chunked body is recorded whole, its head then
//     saying Content-Length instead of Transfer-Encoding. Redirects and
//     error responses (404 included) are recorded as they came, as
//     wget and Heritrix record them. Through a proxy, the heads are
//     net/http's (the request with the absolute URL the proxy was
//     asked for), not byte for byte what went over the wire, and the
//     address is unknown.
type Recorder struct {
	W *Writer

	mu    sync.Mutex
	err   error
	count int
	items map[string]string // the record IDs of the latest items metadata may follow (Gopher+'s), by key
}

// itemRecord remembers id as the record of an item (when id is not
// empty) and returns the record remembered of it (protocols.Archived's
// Item and Of). It keeps the latest 4,096 items: a Gopher+ attribute
// block is asked for after its item.
func (r *Recorder) itemRecord(key, id string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id == "" {
		return r.items[key]
	}
	if r.items == nil || len(r.items) >= 4096 {
		r.items = map[string]string{}
	}
	r.items[key] = id
	return id
}

// Err is the first error making or writing a record, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	err := r.err
	r.mu.Unlock()
	if err == nil {
		err = r.W.Err()
	}
	return err
}

// Records is how many records were written.
func (r *Recorder) Records() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// Record implements fetch.Recorder.
func (r *Recorder) Record(ctx context.Context, rt fetch.Retrieval) io.WriteCloser {
	group := groupOf(ctx)
	if ex := rt.Exchange; ex != nil && (len(ex.Response) > 0 || ex.Type != "") {
		s := r.recordHTTP(rt.URL, ex, group)
		presize(&s.body.buf, rt.Response.Size)
		return s
	}
	rec, ok := r.describe(rt)
	if !ok {
		return nil
	}
	rec.Group = group
	w := &recordWriter{r: r, rec: rec, conversation: rt.Conversation}
	if rt.Conversation != nil {
		w.convType = cmp.Or(rt.ConversationType, "text/x-ftp-control-conversation")
	}
	presize(&w.buf, rt.Response.Size)
	return w
}

// presize makes room in buf for a body of the size announced (-1:
// unknown), when it is kept in memory: growing to it by doubling would
// copy it several times over.
func presize(buf *bytes.Buffer, size int64) {
	if size > 0 && size <= memPerRecord {
		buf.Grow(int(size))
	}
}

// sizedReader is a block of known length (Len), so that its record is
// given a buffer of its size.
type sizedReader struct {
	io.Reader
	n int
}

// Len is the block's length.
func (s sizedReader) Len() int { return s.n }

// write writes a retrieval's record with write (Writer.Write, or the
// archive goroutine's), and the protocol conversation's (FTP's control
// connection) where convType names its record's type, once closed
// has been closed (the conversation is then whole).
func (r *Recorder) write(write func(Record) (string, error), rec Record, convType string, conversation func() []fetch.TraceEvent, closed <-chan struct{}) error {
	id, err := write(rec)
	if errors.Is(err, errAborted) {
		return nil // the body was not whole: no record
	}
	n := 1
	if err == nil && convType != "" {
		<-closed
		if _, err = write(Record{Type: "metadata", URI: rec.URI, Date: rec.Date, MediaType: convType,
			ConcurrentTo: id, Body: strings.NewReader(controlConversation(conversation())), Group: rec.Group}); err == nil {
			n++
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil && r.err == nil {
		r.err = err
	}
	if err == nil {
		r.count += n
	}
	return err
}

// describe is the record a retrieval makes, as its protocol has it
// archived (fetch.Retrieval.As), and whether it makes one.
func (r *Recorder) describe(rt fetch.Retrieval) (Record, bool) {
	as, resp := rt.As, rt.Response
	if as.Skip {
		return Record{}, false
	}
	rec := Record{Type: "resource", URI: as.URI, Date: time.Now(), MediaType: resp.MediaType, Protocol: as.Protocol, Status: "-"}
	if as.MediaType != "" {
		rec.MediaType = as.MediaType
	}
	if as.Metadata && as.Of != "" {
		// Metadata of an item (a Gopher+ attribute block), linked to the
		// item's record when this run wrote one.
		rec.Type = "metadata"
		rec.ConcurrentTo = r.itemRecord(as.Of, "")
		return rec, resp.Body != nil
	}
	if id, err := newRecordID(); err == nil {
		rec.ID = id
		if as.Item != "" {
			r.itemRecord(as.Item, id)
		}
	}
	switch resp.Kind {
	case protocols.KindFile:
	case protocols.KindDirectory, protocols.KindArticleList:
		if as.Metadata {
			rec.Type = "metadata" // a capture all the same (a WAIS search's result list)
		}
	default:
		return rec, false // sessions, redirects, searchable indexes: no object
	}
	if rec.MediaType == "" {
		rec.MediaType = "application/octet-stream"
		if resp.Kind != protocols.KindFile {
			rec.MediaType = "text/plain"
		}
	}
	return rec, true
}

// recordHTTP keeps the body until it is whole (see httpSpool), then
// writes the response and request records.
func (r *Recorder) recordHTTP(u *url.URL, ex *fetch.Exchange, group *Group) *httpSpool {
	return &httpSpool{r: r, u: u, ex: ex, date: time.Now(), group: group, body: spool{dir: r.W.opts.TempDir}}
}

func (r *Recorder) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

// httpSpool holds an HTTP body until it is whole: in memory up to
// memPerRecord (most pages never need more, and their records are built
// in the background once the body is closed). Past that, a body whose
// head is final (its length known) streams into its record as it is
// read, compressed as it comes (see packedBlock), so that a large
// transfer does not wait for its archive when it ends; a chunked one is
// spooled to a temporary file, since its head, which comes first in the
// record, says its length only at its end.
type httpSpool struct {
	r      *Recorder
	body   spool    // the body, unless it streams
	stream *handOff // the records' goroutine's body, once it streams
	u      *url.URL
	ex     *fetch.Exchange
	date   time.Time
	group  *Group
	once   sync.Once
	err    error
}

func (s *httpSpool) Write(p []byte) (int, error) {
	if s.stream != nil {
		return s.stream.Write(p)
	}
	if s.body.f == nil && s.body.buf.Len()+len(p) > memPerRecord {
		if _, chunked := headField(s.ex.Response, "Transfer-Encoding"); !chunked {
			s.stream = streamBody(s.body.buf.Bytes(), func(body io.Reader) error {
				err := s.records(s.r.W.Write, s.ex.Response, body, -1)
				if errors.Is(err, errAborted) {
					return nil // the body was not whole: no record
				}
				if err != nil {
					s.r.fail(err)
					s.err = err
				}
				return err
			})
			return s.stream.Write(p)
		}
	}
	return s.body.Write(p)
}

// streamBody runs run on a goroutine of its own with a body that reads
// held, then what is written to the hand-off returned, whose Close waits
// until run has returned; its writes fail with run's error, if any.
func streamBody(held []byte, run func(body io.Reader) error) *handOff {
	h := newHandOff()
	go func() {
		h.stop(run(io.MultiReader(bytes.NewReader(held), h)))
	}()
	return h
}

// Abort drops the records: the body was not read whole.
func (s *httpSpool) Abort() {
	s.once.Do(func() {
		if s.stream != nil {
			s.stream.CloseWithError(errAborted)
		}
		s.body.Close()
	})
}

// Close hands the body to the writer, whose records of it are built in
// the background: a crawl waits for no record between two pages, unless
// the bodies waiting for the writer are too many already. A streamed
// body's records are built already, but for its end: Close waits for
// them. An error building them is the writer's (Err, Close).
func (s *httpSpool) Close() error {
	s.once.Do(func() {
		if s.stream != nil {
			s.stream.Close()
			return
		}
		body, n, err := s.body.reader()
		if err != nil {
			s.body.Close()
			s.err = err
			return
		}
		s.r.W.build(s.body.buf.Len(), func(write func(Record) (string, error)) error {
			defer s.body.Close()
			err := s.records(write, wholeBodyHead(s.ex.Response, n), body, n)
			if err != nil {
				s.r.fail(err)
			}
			return err
		})
	})
	return s.err
}

// records writes the response record, of head and body (n bytes; -1:
// unknown), then the request record, with write.
func (s *httpSpool) records(write func(Record) (string, error), head []byte, body io.Reader, n int64) error {
	uri := s.u.Redacted()
	status, ctype := statusAndType(head)
	mt, sep := "application/http", ";"
	if s.ex.Type != "" { // another protocol's exchange (Gemini's)
		status, ctype, mt, sep = s.ex.Status, s.ex.PayloadType, s.ex.Type, "; "
	}
	block := io.MultiReader(bytes.NewReader(head), body)
	if n >= 0 && n <= memPerRecord {
		block = sizedReader{block, len(head) + int(n)}
	}
	proto := strings.Join(s.ex.Protocol, ",")
	id, err := write(Record{Type: "response", URI: uri, Date: s.date, MediaType: mt + sep + "msgtype=response", IP: s.ex.IP, Protocol: proto,
		Body: block, PayloadOffset: int64(len(head)), Status: status, PayloadType: ctype, Group: s.group})
	if err == nil {
		_, err = write(Record{Type: "request", URI: uri, Date: s.date, MediaType: mt + sep + "msgtype=request", IP: s.ex.IP, Protocol: proto,
			ConcurrentTo: id, Body: bytes.NewReader(s.ex.Request), Group: s.group})
	}
	if err != nil {
		return err
	}
	s.r.mu.Lock()
	s.r.count += 2
	s.r.mu.Unlock()
	return nil
}

// statusAndType reads a response head's status code and media type.
func statusAndType(head []byte) (status, mediaType string) {
	first, _, _ := bytes.Cut(head, []byte("\n"))
	if f := bytes.Fields(first); len(f) >= 2 {
		status = string(f[1])
	}
	if v, ok := headField(head, "Content-Type"); ok {
		t, _, _ := bytes.Cut(bytes.TrimSpace(v), []byte(";"))
		mediaType = string(t)
	}
	return status, mediaType
}

// wholeBodyHead is a response head for a body recorded whole: a chunked
// one's Transfer-Encoding field becomes the Content-Length of what was
// received.
func wholeBodyHead(head []byte, n int64) []byte {
	if _, ok := headField(head, "Transfer-Encoding"); !ok {
		return head
	}
	var out bytes.Buffer
	for _, l := range bytes.SplitAfter(head, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		k, _, ok := bytes.Cut(l, []byte(":"))
		if ok && (bytes.EqualFold(bytes.TrimSpace(k), []byte("Transfer-Encoding")) || bytes.EqualFold(bytes.TrimSpace(k), []byte("Content-Length"))) {
			continue
		}
		if len(bytes.TrimSpace(l)) == 0 { // the blank line: the length goes before it
			fmt.Fprintf(&out, "Content-Length: %d\r\n", n)
		}
		out.Write(l)
	}
	return out.Bytes()
}

// headField is the value of a head's last field of that name, read in
// place (no copy of the head).
func headField(head []byte, name string) (value []byte, ok bool) {
	_, rest, _ := bytes.Cut(head, []byte("\n")) // after the status line
	for len(rest) > 0 {
		var l []byte
		l, rest, _ = bytes.Cut(rest, []byte("\n"))
		if k, v, found := bytes.Cut(l, []byte(":")); found && bytes.EqualFold(bytes.TrimSpace(k), []byte(name)) {
			value, ok = v, true
		}
	}
	return value, ok
}

// controlConversation writes a traced conversation as lines, the
// client's marked with "> ", the server's plain, as the trace shows them
// (passwords redacted there).
func controlConversation(evs []fetch.TraceEvent) string {
	var b strings.Builder
	n := 0
	for _, ev := range evs {
		n += len(ev.Text) + 4
	}
	b.Grow(n)
	for _, ev := range evs {
		switch ev.Dir {
		case protocols.TraceSend:
			b.WriteString("> ")
			b.WriteString(ev.Text)
			b.WriteString("\r\n")
		case protocols.TraceRecv:
			b.WriteString(ev.Text)
			b.WriteString("\r\n")
		}
	}
	return b.String()
}

// recordWriter is the body's copy. A body up to memPerRecord is kept in
// memory and its records are built in the background once it is closed;
// a larger one streams into the record as it is read (see handOff), and
// Close waits until its records are built.
type recordWriter struct {
	r            *Recorder
	rec          Record
	convType     string // the conversation record's media type; "" for none
	conversation func() []fetch.TraceEvent

	buf    bytes.Buffer
	stream *handOff // once the body outgrew buf
	err    error    // the streamed record's error

	once   sync.Once
	closeC chan struct{} // closed at Close or Abort
}

func (w *recordWriter) Write(p []byte) (int, error) {
	if w.stream == nil && w.buf.Len()+len(p) <= memPerRecord {
		return w.buf.Write(p)
	}
	if w.stream == nil {
		w.closeC = make(chan struct{})
		w.stream = streamBody(w.buf.Bytes(), func(body io.Reader) error {
			rec := w.rec
			rec.Body = body
			w.err = w.r.write(w.r.W.Write, rec, w.convType, w.conversation, w.closeC)
			return w.err
		})
	}
	return w.stream.Write(p)
}

// errAborted ends the body of a record that is not written.
var errAborted = errors.New("the body was not read whole")

// Abort drops the record: its body was not read whole.
func (w *recordWriter) Abort() {
	w.once.Do(func() {
		if w.stream != nil {
			close(w.closeC)
			w.stream.CloseWithError(errAborted)
		}
	})
}

func (w *recordWriter) Close() error {
	w.once.Do(func() {
		if w.stream != nil {
			close(w.closeC)
			w.stream.Close()
			return
		}
		rec := w.rec
		rec.Body = &w.buf
		closed := make(chan struct{})
		close(closed)
		w.r.W.build(w.buf.Len(), func(write func(Record) (string, error)) error {
			return w.r.write(write, rec, w.convType, w.conversation, closed)
		})
	})
	return w.err
}
