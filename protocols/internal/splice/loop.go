package splice

import (
	"fmt"
	"io"
	"sync"

	"github.com/urlderef/deref/protocols"
)

// buffers holds the 1 MiB copy buffers of ReadWrite: many small
// transfers in a row would otherwise each allocate and clear one.
var buffers = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// ReadWrite copies r into w with a pooled 1 MiB buffer, calling step after each
// chunk, for the pairs Copy cannot splice. A failed write is marked with
// protocols.ErrWrite, so that a full disk is not taken for a failed
// transfer. total is added to the count returned.
func ReadWrite(w io.Writer, r io.Reader, step func(int64) error, total int64) (int64, error) {
	bp := buffers.Get().(*[]byte)
	defer buffers.Put(bp)
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
