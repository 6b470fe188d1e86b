// Package rcvlowat lets the reader of a fast socket be woken once per large
// chunk rather than once per segment.
//
// While a large object streams in, a reader that is woken as soon as any
// byte is there reads a few dozen kilobytes at a time: each wake-up costs a
// context switch on both ends, and each read a window update the sender
// must process. Raising the socket's receive low-water mark (SO_RCVLOWAT)
// makes the kernel report it readable only once a chunk of Mark bytes is
// queued (or the peer closed). Reads themselves never wait for the mark:
// the connection is non-blocking, so a read returns whatever is there.
//
// A raised mark must not hold back data that has arrived: when no chunk
// completes within Stall, the mark goes back to one byte for the rest of
// the transfer (the kernel then wakes the reader at once), and near the
// end the mark shrinks to the bytes still expected, so that an object
// followed by nothing (an HTTP body on a kept connection) is read at once.
package rcvlowat

import "time"

const (
	// Mark is the low-water mark while a large object streams.
	Mark = 256 << 10
	// MinSize is the smallest object the mark is raised for.
	MinSize = 4 << 20
	// Stall is how long a raised mark may wait for its chunk.
	Stall = 50 * time.Millisecond
)
