package protocols

import (
	"context"
	"io"
	"net"
	"os"
	"time"
)

// StreamResponse is the Response of a protocol that answers a request
// with the object and then closes (finger, Nex): the connection's bytes
// as the Body, the wait for the first of them bounded by firstByte, the
// context ending it.
func StreamResponse(ctx context.Context, conn net.Conn, firstByte time.Duration, mediaType, name string) *Response {
	conn.SetReadDeadline(time.Now().Add(firstByte))
	return &Response{Kind: KindFile, Size: -1, MediaType: mediaType, Name: name, Body: &streamBody{conn: conn, stop: context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })}}
}

type streamBody struct {
	conn  net.Conn
	stop  func() bool
	first bool
}

func (b *streamBody) Read(p []byte) (int, error) {
	n, err := b.conn.Read(p)
	if n > 0 && !b.first {
		b.first = true
		b.conn.SetReadDeadline(time.Time{})
	}
	if err != nil && err != io.EOF {
		if os.IsTimeout(err) && !b.first {
			err = &wrapped{ErrTimeout, err}
		} else {
			err = NetError(err)
		}
	}
	return n, err
}

func (b *streamBody) Close() error {
	b.stop()
	return b.conn.Close()
}

// Abort breaks a Read under way (Aborter).
func (b *streamBody) Abort() { b.conn.SetDeadline(time.Unix(1, 0)) }
