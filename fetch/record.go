package fetch

import (
	"context"
	"io"
	"sync"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Recorder receives a Client's retrievals for an archive. Record is
// called with each response before its body is read (an HTTP redirect's
// and an HTTP error's too, resp then without a body and ex holding it;
// resp is empty for an error),
// with u the URL actually fetched and ctx the retrieval's context (which
// may carry what the recorder needs of its caller, as fetch/warc's
// groups do); the writer it returns, if any, gets a copy of the body as
// the caller reads it, and is closed when the body is: a listing's bytes
// the caller left unread are copied first. A body that was not read to
// its end (an error, a cancel, a caller that stopped) is not whole: the
// writer's Abort is called instead of Close, where it has one. ex holds
// the heads as they went over the wire where the protocol keeps them
// (HTTP over deref's own connection), else it is empty. conversation
// returns the retrieval's protocol conversation so far, passwords
// redacted; at Close it is whole; it is kept only for the schemes whose
// conversation is archived (protocols.Scheme.Conversation: tracing costs
// time).
type Recorder interface {
	Record(ctx context.Context, rt Retrieval) io.WriteCloser
}

// Retrieval is what a Recorder is given of one retrieval.
type Retrieval struct {
	URL      *url.URL
	Response *Response
	// Exchange holds the heads as they went over the wire where the
	// protocol keeps them (HTTP over deref's own connection), else it is
	// empty.
	Exchange *Exchange
	// Conversation returns the retrieval's protocol conversation so far,
	// passwords redacted (at Close it is whole); nil where the scheme's
	// is not archived (protocols.Scheme.Conversation).
	Conversation func() []TraceEvent
	// ConversationType is the media type of the conversation's record
	// (protocols.Scheme.ConversationType); "" means FTP's,
	// text/x-ftp-control-conversation.
	ConversationType string
	// As is how the protocol has the retrieval archived
	// (protocols.Archiver), its URI and Protocol always set.
	As protocols.Archived
}

// Exchange is what went over the wire; see protocols.Exchange.
type Exchange = protocols.Exchange

// conversation keeps one retrieval's trace, up to 1 MiB of it.
type conversation struct {
	mu   sync.Mutex
	evs  []TraceEvent
	size int
}

func (c *conversation) add(ev TraceEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.size += len(ev.Text); c.size <= 1<<20 {
		c.evs = append(c.evs, ev)
	}
}

func (c *conversation) events() []TraceEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]TraceEvent(nil), c.evs...)
}

// recordedBody copies what is read to the recorder's writer.
type recordedBody struct {
	io.ReadCloser
	w       io.WriteCloser
	size    int64 // as announced; -1: unknown
	listing bool
	tapped  bool // the protocol's body writes to w itself (protocols.Tapper)
	whole   bool // the body was read to its end
	werr    error
	once    sync.Once
}

func (b *recordedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 && b.werr == nil && !b.tapped {
		_, b.werr = b.w.Write(p[:n])
	}
	if err == io.EOF {
		b.whole = true
	}
	return n, err
}

// WriteTo copies the body into w through a pooled buffer, as the body
// unrecorded does: io.Copy into a file would otherwise make a buffer per
// body, which on many small objects costs more than the archive itself.
// A failed write into w is an ErrWrite.
func (b *recordedBody) WriteTo(w io.Writer) (int64, error) {
	return pooledCopy(w, b, b.size)
}

// Close closes the body, then the recorder's writer; a write error of
// the recorder is the body's error, so that an archive is never silently
// short.
func (b *recordedBody) Close() error {
	var err error
	b.once.Do(func() {
		if b.listing && b.werr == nil && !b.whole {
			var to io.Writer = b.w
			if b.tapped {
				to = io.Discard // reading it feeds the tap
			}
			_, b.werr = io.Copy(to, b.ReadCloser) // a listing is archived whole
			b.whole = b.werr == nil
		}
		err = b.ReadCloser.Close()
		if a, ok := b.w.(interface{ Abort() }); ok && (!b.whole || err != nil) {
			a.Abort() // not whole: nothing is archived
			return
		}
		if cerr := b.w.Close(); b.werr == nil {
			b.werr = cerr
		}
		if err == nil && b.werr != nil {
			err = WriteError(b.werr)
		}
	})
	return err
}
