package telnet_test

import (
	"bytes"
	"io"
	"net"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/telnet"
	"github.com/urlderef/deref/url"
)

// TestEndlessSubnegotiation: a server that opens a subnegotiation and
// never closes it (plain bytes, or escaped IACs) leaves the session
// holding a bounded buffer (4 KiB), and none of it reaches the output.
func TestEndlessSubnegotiation(t *testing.T) {
	const iac, sb = 255, 250
	for _, filler := range [][]byte{{'x'}, {iac, iac}} {
		client, server := net.Pipe()
		go func() {
			go io.Copy(io.Discard, server)
			server.Write([]byte{iac, sb, 24})
			chunk := bytes.Repeat(filler, 64<<10)
			for range 160 { // 10-20 MiB
				if _, err := server.Write(chunk); err != nil {
					break
				}
			}
			server.Write([]byte("after"))
			server.Close()
		}()
		runtime.GC()
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(sample)
		before := sample[0].Value.Uint64()
		s, err := (&telnet.Fetcher{Term: "xterm", Width: 80, Height: 24}).Open(client, &protocols.Request{URL: url.MustParse("telnet://h/")})
		if err != nil {
			t.Fatal(err)
		}
		client.SetDeadline(time.Now().Add(20 * time.Second))
		out, _ := io.ReadAll(s)
		runtime.GC()
		metrics.Read(sample)
		if len(out) != 0 {
			t.Errorf("%d bytes of the subnegotiation reached the output", len(out))
		}
		if grown := int64(sample[0].Value.Uint64()) - int64(before); grown > 4<<20 {
			t.Errorf("the session holds %d MiB more after an endless subnegotiation", grown>>20)
		}
		s.Close()
	}
}
