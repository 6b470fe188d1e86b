package telnet_test

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/telnet"
	"github.com/urlderef/deref/url"
)

// FuzzNegotiation feeds a session whatever a server might send: option
// negotiation (IAC DO/DONT/WILL/WONT, subnegotiations, cut anywhere) mixed
// with text. The session must neither panic nor hang, and no IAC sequence
// may reach the output as if it were text.
func FuzzNegotiation(f *testing.F) {
	const iac, do, will, sb, se = 255, 253, 251, 250, 240
	f.Add([]byte{iac, do, 24, iac, do, 31, iac, will, 1, iac, sb, 24, 1, iac, se, 'h', 'i'})
	f.Add([]byte{iac, 241, iac, 242, 'l', 'o', 'g', 'i', 'n', ':', ' '})
	f.Add([]byte{iac, sb, 24})
	f.Add([]byte{iac, iac, 'x', iac})
	f.Add(append([]byte{iac, sb, 24}, bytes.Repeat([]byte{iac, iac}, 5000)...)) // an escaped subnegotiation without end
	f.Fuzz(func(t *testing.T, in []byte) {
		client, server := net.Pipe()
		go func() {
			server.SetDeadline(time.Now().Add(5 * time.Second))
			go io.Copy(io.Discard, server)
			server.Write(in)
			server.Close()
		}()
		s, err := (&telnet.Fetcher{Term: "xterm", Width: 80, Height: 24}).Open(client, &protocols.Request{URL: url.MustParse("telnet://h/")})
		if err != nil {
			return
		}
		defer s.Close()
		client.SetDeadline(time.Now().Add(5 * time.Second))
		out, _ := io.ReadAll(s)
		if len(out) > len(in) {
			t.Fatalf("%d bytes out of %d in", len(out), len(in))
		}
	})
}
