package testserver

import (
	"net"
	"time"
)

// Relay listens on a free port of target's loopback address and passes
// each connection through to target with rtt/2 of delay each way, as a
// wide-area link would: a request's answer comes a round trip later.
func Relay(target string, rtt time.Duration) (net.Listener, error) {
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, err
	}
	go Serve(ln, func(c net.Conn) {
		s, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			return
		}
		go Delay(s, c, rtt/2)
		Delay(c, s, rtt/2)
	})
	return ln, nil
}

// Delay copies from src to dst, each chunk delay after it was read, in
// order; it closes dst when src ends.
func Delay(dst, src net.Conn, delay time.Duration) {
	type chunk struct {
		at time.Time
		b  []byte
	}
	q := make(chan chunk, 1024)
	go func() {
		defer close(q)
		for {
			b := make([]byte, 4096)
			n, err := src.Read(b)
			if n > 0 {
				q <- chunk{time.Now().Add(delay), b[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		time.Sleep(time.Until(c.at))
		if _, err := dst.Write(c.b); err != nil {
			break
		}
	}
	dst.Close()
}
