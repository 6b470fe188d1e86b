package splice

import (
	"fmt"
	"io"
	"sync"

	"github.com/urlderef/deref/protocols"
)

// buffers holds the 1 MiB copy buffers of ReadWrite: many transfers in a
// row would otherwise each allocate and clear one. smallBuffers holds the
// 32 KiB ones of transfers known to be no larger: a pool is emptied at
// garbage collections, and a mirror of many small files would then clear
// (and fault in) a fresh megabyte per worker each time.
var (
	buffers      = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}
	smallBuffers = sync.Pool{New: func() any { b := make([]byte, smallBuffer); return &b }}
)

const smallBuffer = 32 << 10

// ReadWrite copies r into w with a pooled buffer, calling step after each
// chunk, for the pairs Copy cannot splice. A failed write is marked with
// protocols.ErrWrite, so that a full disk is not taken for a failed
// transfer. total is added to the count returned. left is the number of
// bytes still expected, or -1 when unknown: it chooses the buffer's size
// (1 MiB, or 32 KiB for a small remainder).
func ReadWrite(w io.Writer, r io.Reader, step func(int64) error, total, left int64) (int64, error) {
	pool := &buffers
	if left >= 0 && left < smallBuffer {
		pool = &smallBuffers
	}
	bp := pool.Get().(*[]byte)
	defer pool.Put(bp)
	buf := *bp
	for {
		n, err := r.Read(buf)
		if n > 0 {
			m, werr := w.Write(buf[:n])
			total += int64(m)
			if werr != nil {
				return total, fmt.Errorf("%w: %w", protocols.ErrWrite, werr)
			}
			if serr := step(int64(n)); serr != nil {
				return total, serr
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}
