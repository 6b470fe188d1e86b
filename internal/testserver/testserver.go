// Package testserver holds what the project's test servers share; its
// sub-packages are the servers.
package testserver

import "net"

// Listen listens on a free port of 127.0.0.1 and serves every connection
// with serve, each on its own goroutine, until the listener is closed.
func Listen(serve func(net.Conn)) (net.Listener, error) {
	var ln net.Listener
	err := ListenInto(&ln, serve)
	return ln, err
}

// ListenInto is Listen for a server that keeps its listener in *ln
// (which serve may read, for its address): *ln is set before the first
// connection is served.
func ListenInto(ln *net.Listener, serve func(net.Conn)) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	*ln = l
	go Serve(l, serve)
	return nil
}

// Serve accepts connections on ln and serves each with serve on its own
// goroutine until ln is closed.
func Serve(ln net.Listener, serve func(net.Conn)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go serve(c)
	}
}
