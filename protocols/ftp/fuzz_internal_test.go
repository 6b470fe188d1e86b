package ftp

import (
	"bytes"
	"errors"
	"testing"

	"github.com/urlderef/deref/protocols"
)

// FuzzReplyBound feeds the control connection's reply bound any bytes, cut
// into reads anywhere: it must not panic, must fail only with
// ErrProtocol, and must never fail while every line and every reply stays
// within its bounds.
func FuzzReplyBound(f *testing.F) {
	f.Add([]byte("220 vsftpd ready\r\n331 Please specify the password.\r\n230 Login successful.\r\n"), 7)
	f.Add([]byte("211-Features:\r\n EPSV\r\n MDTM\r\n PASV\r\n REST STREAM\r\n SIZE\r\n211 End\r\n"), 3)
	f.Add([]byte("220-harness proftpd\r\n220-second line\r\n220 ready\r\n"), 1)
	f.Add([]byte("150 Opening BINARY mode data connection (10 bytes).\r\n226 Transfer complete.\r\n"), 50)
	f.Fuzz(func(t *testing.T, in []byte, cut int) {
		req := &protocols.Request{MaxLineLength: 64, MaxListing: 256}
		var b replyBound
		var err error
		step := max(cut%(len(in)+1), 1)
		for i := 0; i < len(in) && err == nil; i += step {
			err = b.scan(in[i:min(i+step, len(in))], req)
		}
		if err != nil && !errors.Is(err, protocols.ErrProtocol) {
			t.Fatalf("error %v is not a protocol error", err)
		}
		longLine := false
		for _, l := range bytes.Split(in, []byte("\n")) {
			longLine = longLine || len(l) >= 64
		}
		if err != nil && !longLine && len(in) <= 256 {
			t.Fatalf("%q: %v, though every line and reply is within bounds", in, err)
		}
	})
}
