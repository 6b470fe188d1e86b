package warc

import "io"

// handOff carries a streamed body from the transfer to the goroutine
// that builds its record, in chunks of handOffChunk, up to handOffAhead
// of them on their way: the transfer goes on reading while the record's
// goroutine digests and compresses what came before. An io.Pipe, whose
// every write waits until it is read, handed a large body over a copy
// buffer at a time, and woke the other goroutine for each: over loopback,
// where a 32 KiB write comes every few microseconds, the goroutines'
// wake-ups cost more than the body's digests.
//
// Write, Close and CloseWithError are the transfer's, called from one
// goroutine; Read is the record's goroutine's.
type handOff struct {
	full  chan *[]byte  // chunks filled, in order, to the reader
	free  chan *[]byte  // chunks read, back to the writer
	made  int           // chunks the writer has taken from the pool
	fill  *[]byte       // the chunk being filled
	read  []byte        // what is left of the chunk being read
	taken *[]byte       // that chunk
	err   error         // the writer's end: nil for EOF (set before full is closed)
	done  chan struct{} // closed when the reader stopped
	rerr  error         // why the reader stopped (set before done is closed)
}

// A chunk is a piece's size, and comes from the same pool (pieces).
const (
	handOffChunk = pieceSize
	handOffAhead = 4
)

func newHandOff() *handOff {
	return &handOff{full: make(chan *[]byte, handOffAhead), free: make(chan *[]byte, handOffAhead), done: make(chan struct{})}
}

// Write copies p into chunks, handing each on once full; it fails once
// the reader has stopped.
func (h *handOff) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if h.fill == nil {
			if err := h.take(); err != nil {
				return n - len(p), err
			}
		}
		k := min(len(p), handOffChunk-len(*h.fill))
		*h.fill = append(*h.fill, p[:k]...)
		p = p[k:]
		if len(*h.fill) == handOffChunk {
			if err := h.send(); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

// take gets an empty chunk to fill: a new one while fewer than
// handOffAhead are out, else one the reader is done with.
func (h *handOff) take() error {
	if h.made < handOffAhead {
		h.made++
		h.fill = pieces.Get().(*[]byte)
		return nil
	}
	select {
	case h.fill = <-h.free:
		return nil
	case <-h.done:
		return h.readerErr()
	}
}

// send hands the chunk filled to the reader.
func (h *handOff) send() error {
	select {
	case h.full <- h.fill:
		h.fill = nil
		return nil
	case <-h.done:
		return h.readerErr()
	}
}

func (h *handOff) readerErr() error {
	if h.rerr != nil {
		return h.rerr
	}
	return io.ErrClosedPipe
}

// Close hands on what is left and ends the body, then waits until the
// reader has stopped: the reader reads EOF after what was handed on.
func (h *handOff) Close() error {
	return h.CloseWithError(nil)
}

// CloseWithError ends the body with err, which the reader reads after
// what was handed on (EOF if err is nil, after what was written), then
// waits until the reader has stopped, and returns why it stopped.
func (h *handOff) CloseWithError(err error) error {
	if err == nil && h.fill != nil && len(*h.fill) > 0 {
		h.send() // the reader's error, if any, is returned below
	}
	h.err = err
	close(h.full)
	<-h.done
	for c := range h.full {
		putPiece(c)
	}
	for len(h.free) > 0 {
		putPiece(<-h.free)
	}
	if h.fill != nil {
		putPiece(h.fill)
		h.fill = nil
	}
	return h.rerr
}

// Read reads the chunks in order.
func (h *handOff) Read(p []byte) (int, error) {
	if len(h.read) == 0 {
		h.release()
		c, ok := <-h.full
		if !ok {
			if h.err != nil {
				return 0, h.err
			}
			return 0, io.EOF
		}
		h.taken, h.read = c, *c
	}
	n := copy(p, h.read)
	h.read = h.read[n:]
	return n, nil
}

// release gives the chunk read back to the writer.
func (h *handOff) release() {
	if h.taken != nil {
		*h.taken = (*h.taken)[:0]
		h.free <- h.taken // never blocks: at most handOffAhead are out
		h.taken = nil
	}
}

// stop ends the reader's side with err (nil: it read the whole body);
// the writer's Write fails after it.
func (h *handOff) stop(err error) {
	h.release()
	h.rerr = err
	close(h.done)
}
