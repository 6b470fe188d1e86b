package warc

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// A body handed over in writes of every size, across chunks, reads back
// whole and in order, however it is read, and ends in EOF at Close.
func TestHandOffCarriesBody(t *testing.T) {
	body := make([]byte, 3*handOffAhead*handOffChunk+12345)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range body {
		body[i] = byte(rng.Uint32())
	}
	var got []byte
	var readErr error
	h := streamBody(body[:100], func(r io.Reader) error {
		got, readErr = io.ReadAll(iotest.OneByteReader(iotest.HalfReader(r)))
		return readErr
	})
	rest := body[100:]
	for len(rest) > 0 {
		k := min(len(rest), 1+rng.IntN(2*handOffChunk))
		if n, err := h.Write(rest[:k]); n != k || err != nil {
			t.Fatalf("Write of %d bytes: %d, %v", k, n, err)
		}
		rest = rest[k:]
	}
	if err := h.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if readErr != nil {
		t.Fatalf("reading: %v", readErr)
	}
	if !bytes.Equal(got, body) {
		t.Fatalf("read %d bytes, not the %d written", len(got), len(body))
	}
}

// CloseWithError ends the body with its error, after what was handed on.
func TestHandOffAbort(t *testing.T) {
	var got []byte
	var readErr error
	h := streamBody(nil, func(r io.Reader) error {
		got, readErr = io.ReadAll(r)
		return nil
	})
	full := bytes.Repeat([]byte("a"), handOffChunk)
	h.Write(full)
	h.Write([]byte("not handed on"))
	h.CloseWithError(errAborted)
	if !errors.Is(readErr, errAborted) {
		t.Fatalf("the reader read %v at the end, want %v", readErr, errAborted)
	}
	if !bytes.Equal(got, full) {
		t.Fatalf("the reader read %d bytes before the end, want the %d of the chunk handed on", len(got), len(full))
	}
}

// Once the reader stops with an error, the writer's writes fail with it
// (after at most the chunks already on their way), and so does Close;
// nothing waits forever.
func TestHandOffReaderFails(t *testing.T) {
	stop := errors.New("disk full")
	h := streamBody(nil, func(r io.Reader) error {
		io.ReadFull(r, make([]byte, 10))
		return stop
	})
	chunk := make([]byte, handOffChunk)
	var err error
	for i := 0; i < 2*handOffAhead+2 && err == nil; i++ {
		_, err = h.Write(chunk)
	}
	if !errors.Is(err, stop) {
		t.Fatalf("writes after the reader stopped: %v, want %v", err, stop)
	}
	if err := h.Close(); !errors.Is(err, stop) {
		t.Fatalf("Close: %v, want %v", err, stop)
	}
}
