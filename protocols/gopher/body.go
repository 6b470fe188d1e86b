package gopher

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"syscall"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/internal/splice"
)

// rawBody is a binary reply: the bytes already buffered, then the socket,
// up to a length (Gopher+ "+n") or until the server closes.
type rawBody struct {
	br   *bufio.Reader
	conn net.Conn
	left int64 // -1: until close
}

func (b *rawBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, io.EOF
	}
	if b.left > 0 && int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.br.Read(p)
	if b.left > 0 {
		b.left -= int64(n)
	}
	return n, b.mapErr(err)
}

func (b *rawBody) mapErr(err error) error {
	switch {
	case err == nil:
		return nil
	case err == io.EOF && b.left > 0:
		return fmt.Errorf("%w: the server closed the connection with %d bytes to come", protocols.ErrShortBody, b.left)
	case err == io.EOF:
		return io.EOF
	}
	return protocols.NetError(err)
}

// CopyTo splices the socket into a file where it can, one splice(2) at a
// time, after the bytes already buffered.
func (b *rawBody) CopyTo(w io.Writer, step func(int64) error) (int64, error) {
	var total int64
	if k := int64(b.br.Buffered()); k > 0 {
		if b.left >= 0 {
			k = min(k, b.left)
		}
		n, err := io.CopyN(w, b.br, k)
		total += n
		if b.left > 0 {
			b.left -= n
		}
		if err != nil {
			return total, fmt.Errorf("%w: %w", protocols.ErrWrite, err)
		}
		if err := step(n); err != nil {
			return total, err
		}
	}
	f, isFile := w.(splice.Dst) // a file, or a socket (a gateway passing an object on)
	sc, isSock := b.conn.(syscall.Conn)
	if isFile && isSock && b.left != 0 {
		want := b.left
		if want < 0 {
			want = math.MaxInt64
		}
		n, err := splice.Copy(f, sc, want, step)
		total += n
		if b.left > 0 {
			b.left -= n
		}
		switch {
		case err == nil:
			return total, nil
		case err == io.ErrUnexpectedEOF: // the server closed: the end, unless a length was promised
			if e := b.mapErr(io.EOF); e != io.EOF {
				return total, e
			}
			return total, nil
		case errors.Is(err, splice.ErrUnsupported):
		default:
			var pe *os.PathError
			if errors.As(err, &pe) {
				return total, fmt.Errorf("%w: %w", protocols.ErrWrite, err)
			}
			return total, protocols.NetError(err)
		}
	}
	return splice.ReadWrite(w, b, step, total, b.left)
}

// Close closes the connection.
func (b *rawBody) Close() error { return b.conn.Close() }

// The contracts it claims, checked when it compiles.
var _ protocols.Copier = (*rawBody)(nil)
