package warc

import (
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
//   - FTP's control conversation goes with it as a metadata record of type
//     text/x-ftp-control-conversation (passwords redacted), linked by
//     WARC-Concurrent-To, as Heritrix and wpull write it;
//   - a WAIS search's result list is a metadata record.
//
// HTTP exchanges are not recorded yet: they need the request and
// response as they went over the wire.
type Recorder struct {
	W *Writer

	mu    sync.Mutex
	err   error
	count int
}

// Err is the first error writing a record, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Records is how many records were written.
func (r *Recorder) Records() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// Record implements fetch.Recorder.
func (r *Recorder) Record(u *url.URL, resp *fetch.Response, conversation func() []fetch.TraceEvent) io.WriteCloser {
	rec, ok := r.describe(u, resp)
	if !ok {
		return nil
	}
	pr, pw := io.Pipe()
	rec.Body = pr
	w := &recordWriter{pw: pw, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		id, err := r.W.Write(rec)
		pr.CloseWithError(err) // the body's writes fail with it, if any
		n := 1
		if err == nil && (u.Scheme == "ftp" || u.Scheme == "ftps") {
			<-w.closed()
			if _, err = r.W.Write(Record{Type: "metadata", URI: rec.URI, Date: rec.Date, MediaType: "text/x-ftp-control-conversation",
				ConcurrentTo: id, Body: strings.NewReader(controlConversation(conversation()))}); err == nil {
				n++
			}
		}
		r.mu.Lock()
		if err != nil && r.err == nil {
			r.err = err
		}
		if err == nil {
			r.count += n
		}
		r.mu.Unlock()
		w.err = err
	}()
	return w
}

// describe is the record a response makes, and whether it makes one.
func (r *Recorder) describe(u *url.URL, resp *fetch.Response) (Record, bool) {
	rec := Record{Type: "resource", URI: u.Redacted(), Date: time.Now(), MediaType: resp.MediaType, Protocol: u.Scheme}
	switch u.Scheme {
	case "http", "https":
		return rec, false
	case "gopher", "gophers":
		rec.Protocol = "gopher"
		if g, err := u.Gopher(); err == nil && g.HasPlus {
			rec.Protocol = "gopher+"
		}
	case "news", "snews", "nntp", "nntps":
		rec.Protocol = "nntp"
	case "ftps":
		rec.Protocol = "ftp"
	}
	switch resp.Kind {
	case protocols.KindFile:
	case protocols.KindDirectory, protocols.KindArticleList:
		if u.Scheme == "wais" {
			rec.Type = "metadata" // a search's result list
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

// controlConversation writes a traced conversation as lines, the
// client's marked with "> ", the server's plain, as the trace shows them
// (passwords redacted there).
func controlConversation(evs []fetch.TraceEvent) string {
	var b strings.Builder
	for _, ev := range evs {
		switch ev.Dir {
		case protocols.TraceSend:
			b.WriteString("> " + ev.Text + "\r\n")
		case protocols.TraceRecv:
			b.WriteString(ev.Text + "\r\n")
		}
	}
	return b.String()
}

// recordWriter is the body's copy: its Close waits until the record (and
// the conversation's) is written.
type recordWriter struct {
	pw     *io.PipeWriter
	done   chan struct{}
	once   sync.Once
	closeC chan struct{}
	mu     sync.Mutex
	err    error
}

func (w *recordWriter) closed() chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closeC == nil {
		w.closeC = make(chan struct{})
	}
	return w.closeC
}

func (w *recordWriter) Write(p []byte) (int, error) { return w.pw.Write(p) }

func (w *recordWriter) Close() error {
	w.once.Do(func() {
		w.pw.Close()
		close(w.closed())
	})
	<-w.done
	return w.err
}
