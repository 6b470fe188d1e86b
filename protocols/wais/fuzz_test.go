package wais_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/urlderef/deref/internal/testserver/waisd"
	"github.com/urlderef/deref/protocols/wais"
)

func seedCaptures(f *testing.F, dir string) {
	for _, c := range []string{"16.1", "16.2", "16.3", "16.4", "16.5", "16.6", "16.7", "16.8"} {
		text, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wais", c+"."+dir+".hex"))
		if err != nil {
			f.Fatal(err)
		}
		b, err := waisd.ParseDump(text)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// Any reply decodes or fails with an error: no panic, no read beyond the
// limit, and every decoded hit yields a wpath that decodes to its docid.
func FuzzReply(f *testing.F) {
	seedCaptures(f, "reply")
	f.Fuzz(func(t *testing.T, msg []byte) {
		_, body, err := wais.ReadMessage(bytes.NewReader(msg), 1<<16, nil)
		if err != nil {
			return
		}
		if len(body) > 1<<16 {
			t.Fatalf("body of %d bytes read past the limit", len(body))
		}
		if a, err := wais.ParseAPDU(body); err == nil {
			if _, err := wais.ParseAPDU(a.Marshal()); err != nil {
				t.Fatalf("re-encoded APDU does not parse: %v", err)
			}
		}
		r, err := wais.ParseSearchResponse(body)
		if err != nil {
			return
		}
		for _, h := range r.Headers {
			if len(h.DocID) == 0 {
				continue
			}
			back, err := wais.DecodeWPath(wais.EncodeWPath(h.DocID))
			if err != nil {
				t.Fatalf("wpath of %x: %v", h.DocID, err)
			}
			if canonical(h.DocID) && !bytes.Equal(back, h.DocID) {
				t.Fatalf("docid %x came back as %x", h.DocID, back)
			}
		}
	})
}

// canonical reports whether docid is written as the encoder writes it:
// tagged fields with minimal lengths, or not tagged fields at all.
func canonical(docid []byte) bool {
	fs, err := wais.ParseFields(docid)
	return err != nil || bytes.Equal(wais.MarshalFields(fs), docid)
}

// Encoding then decoding a docid returns it byte for byte; decoding any
// string either fails or gives bytes that encode and decode stably.
func FuzzWPath(f *testing.F) {
	f.Add([]byte("\x01\x0elocalhost:2110\x07\x01\x00"), "1=localhost%3A2110;2=/srv/wais/idx/test;7=%00;")
	f.Add([]byte("opaque id"), "abc%20def")
	f.Fuzz(func(t *testing.T, docid []byte, wpath string) {
		if len(docid) > 0 && canonical(docid) {
			back, err := wais.DecodeWPath(wais.EncodeWPath(docid))
			if err != nil || !bytes.Equal(back, docid) {
				t.Fatalf("docid %x: %x, %v", docid, back, err)
			}
		}
		d, err := wais.DecodeWPath(wpath)
		if err != nil || len(d) == 0 || !canonical(d) {
			return
		}
		again, err := wais.DecodeWPath(wais.EncodeWPath(d))
		if err != nil || !bytes.Equal(again, d) {
			t.Fatalf("%q: %x then %x, %v", wpath, d, again, err)
		}
	})
}
