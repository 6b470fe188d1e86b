// Package blockconn dials TCP connections to IP addresses outside the net
// package's dialer, for connections that carry an object to its end.
//
// Dial's connections are read and written with blocking system calls,
// outside the Go runtime's network poller. A connection that carries one
// large object and is read to its end, as an FTP data connection of a
// large file is, costs the poller a registration, a wake-up through epoll
// and a goroutine switch for every read that finds nothing yet, and the
// net package four more system calls at dial time. A blocking read lets
// the kernel wake the reading thread directly, as C clients do. Such a
// connection ties up a thread, and the processor running it until the
// runtime notices, while it waits: it is for busy connections, not for
// small objects (a wait per object) nor for pools of idle ones.
//
// DialPolled's connections are for small objects: they skip the dialer's
// work that such a connection does not need, and are read with
// non-blocking calls until one finds nothing; from then on they wait in
// the poller, as the net package's do.
package blockconn

import "errors"

// ErrUnsupported is returned by Dial for an address that is not an IP
// address and port, and on systems where Dial is not implemented.
var ErrUnsupported = errors.New("blockconn: not supported")
