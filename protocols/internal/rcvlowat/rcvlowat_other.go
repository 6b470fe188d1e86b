//go:build !linux

package rcvlowat

import "net"

// Batch is the raised mark of one connection; on this system the mark is
// never raised.
type Batch struct{}

// Start returns nil here: the mark stays at one byte.
func Start(c net.Conn, left int64) *Batch { return nil }

// Progress does nothing here.
func (b *Batch) Progress(left int64) {}

// Stop does nothing here.
func (b *Batch) Stop() {}
