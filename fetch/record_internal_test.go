package fetch

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// recordedCopy is a recorder's writer that keeps what it is given.
type recordedCopy struct {
	bytes.Buffer
	closed, aborted bool
}

func (r *recordedCopy) Close() error { r.closed = true; return nil }
func (r *recordedCopy) Abort()       { r.aborted = true }

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// io.Copy of a recorded body (as the mirror and the command copy into a
// file) goes through its WriteTo: the destination and the recorder get
// every byte, whatever size was announced (none, the right one, or one
// too small, as a server may announce), the body counts as whole, and a
// failed write is ErrWrite.
func TestRecordedBodyWriteTo(t *testing.T) {
	want := strings.Repeat("0123456789abcdef", 20000) // more than one buffer
	for _, size := range []int64{-1, int64(len(want)), 100} {
		rec := &recordedCopy{}
		b := &recordedBody{ReadCloser: io.NopCloser(strings.NewReader(want)), w: rec, size: size}
		var dst bytes.Buffer
		n, err := io.Copy(&dst, b)
		if err != nil || n != int64(len(want)) || dst.String() != want {
			t.Fatalf("size %d: copied %d bytes, err %v; equal: %v", size, n, err, dst.String() == want)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if rec.String() != want || !rec.closed || rec.aborted {
			t.Errorf("size %d: recorder got %d bytes, closed %v, aborted %v", size, rec.Len(), rec.closed, rec.aborted)
		}
	}

	rec := &recordedCopy{}
	b := &recordedBody{ReadCloser: io.NopCloser(strings.NewReader(want)), w: rec, size: -1}
	if _, err := io.Copy(failingWriter{}, b); !errors.Is(err, ErrWrite) {
		t.Errorf("a failed write: %v, want ErrWrite", err)
	}
	b.Close()
	if !rec.aborted || rec.closed {
		t.Errorf("a body not read whole: recorder closed %v, aborted %v", rec.closed, rec.aborted)
	}
}
