//go:build !linux

package blockconn

import (
	"context"
	"net"
	"time"
)

// Supported reports whether Dial and DialPolled are implemented here.
const Supported = false

// Dial returns ErrUnsupported on this system.
func Dial(ctx context.Context, addr string, timeout time.Duration) (net.Conn, error) {
	return nil, ErrUnsupported
}

// DialPolled returns ErrUnsupported on this system.
func DialPolled(ctx context.Context, addr string, timeout time.Duration) (net.Conn, error) {
	return nil, ErrUnsupported
}
