package byterange

import (
	"errors"
	"io"
	"os"
)

// ErrPastEnd says a range begins at or past the end of the object.
var ErrPastEnd = errors.New("the range begins past the end")

// Part is a range cut from an object, for a 206 answer.
type Part struct {
	Body        io.Reader // the range's bytes
	First, Last int64     // the range's first and last byte
	Total       int64     // the object's length; -1 when not known
	file        *os.File  // the temporary file Body reads, if any
}

// Close removes what the part holds of its own (its temporary file).
func (p *Part) Close() error {
	if p.file != nil {
		return p.file.Close()
	}
	return nil
}

// Cut makes body, an object read from byte from on (size bytes of it
// left, -1 when not known), into the range first to last (last -1: to
// the end), first ≥ from. It discards the bytes before first; where the
// length is not known it reads the range ahead into a temporary file (a
// 206 names its last byte before its body), learning the range's length
// and, when the object ended within it, the object's. A range that
// begins at or past the end is ErrPastEnd, with Total the length.
func Cut(body io.Reader, from, size, first, last int64) (Part, error) {
	n, err := io.CopyN(io.Discard, body, first-from)
	if n < first-from {
		if err == io.EOF {
			return Part{Total: from + n}, ErrPastEnd
		}
		return Part{Total: -1}, err
	}
	if size >= 0 {
		total := from + size
		if first >= total {
			return Part{Total: total}, ErrPastEnd
		}
		end := total - 1
		if last >= 0 && last < end {
			end = last
		}
		return Part{Body: io.LimitReader(body, end-first+1), First: first, Last: end, Total: total}, nil
	}
	src := body
	if last >= 0 {
		src = io.LimitReader(body, last-first+1)
	}
	f, got, err := spool(src)
	if err != nil {
		return Part{Total: -1}, err
	}
	total := int64(-1)
	if last < 0 || got < last-first+1 {
		total = first + got // the end came
	} else if more, _ := body.Read(make([]byte, 1)); more == 0 {
		total = first + got
	}
	if got == 0 {
		f.Close()
		return Part{Total: first}, ErrPastEnd
	}
	return Part{Body: f, First: first, Last: first + got - 1, Total: total, file: f}, nil
}

// Suffix reads body, a whole object of unknown length, to its end into a
// temporary file, and gives its last n bytes; an empty object is
// ErrPastEnd.
func Suffix(body io.Reader, n int64) (Part, error) {
	f, total, err := spool(body)
	if err != nil {
		return Part{Total: -1}, err
	}
	first, last, ok := Range{Suffix: n, Last: -1}.Bounds(total)
	if !ok {
		f.Close()
		return Part{Total: total}, ErrPastEnd
	}
	if _, err := f.Seek(first, io.SeekStart); err != nil {
		f.Close()
		return Part{Total: -1}, err
	}
	return Part{Body: f, First: first, Last: last, Total: total, file: f}, nil
}

// spool copies src into a temporary file, removed at once (gone with its
// last close, also where the process dies), and rewinds it.
func spool(src io.Reader) (*os.File, int64, error) {
	f, err := os.CreateTemp("", "deref-range-*")
	if err != nil {
		return nil, 0, err
	}
	os.Remove(f.Name())
	n, err := io.Copy(f, src)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, n, nil
}
