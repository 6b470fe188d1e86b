package prospero_test

import (
	"bufio"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urlderef/deref/protocols/prospero"
)

// seedCaptures adds the captured datagrams (whole) or their texts.
func seedCaptures(f *testing.F, whole bool) {
	file, err := os.Open(filepath.Join("..", "..", "testdata", "prospero", "captures.txt"))
	if err != nil {
		f.Fatal(err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		w := strings.Fields(sc.Text())
		if len(w) < 2 || w[0] != "<" && w[0] != ">" {
			continue
		}
		h, _ := hex.DecodeString(w[1])
		var text []byte
		if len(w) > 3 && w[2] == "text" && w[3] != "-" {
			text, _ = hex.DecodeString(w[3])
		}
		if whole {
			f.Add(append(h, text...))
		} else if len(text) > 0 {
			f.Add(text)
		}
	}
}

// Any datagram's header reads or fails with an error, never past the
// datagram; one that reads writes back to the same fields.
func FuzzHeader(f *testing.F) {
	seedCaptures(f, true)
	f.Fuzz(func(t *testing.T, d []byte) {
		h, text, err := prospero.ParseHeader(d)
		if err != nil {
			return
		}
		if h.Len+len(text) != len(d) || h.Len < 1 || h.Len > 63 {
			t.Fatalf("header of %d octets and %d of text in a datagram of %d", h.Len, len(text), len(d))
		}
		if h.Flags&(prospero.FlagAddress|prospero.FlagProtocol) != 0 {
			return // fields Append does not write
		}
		h2, rest, err := prospero.ParseHeader(h.Append(nil))
		if err != nil || len(rest) != 0 {
			t.Fatalf("% x: written back as % x: %v", d[:h.Len], h.Append(nil), err)
		}
		if h2.ConnID != h.ConnID || h2.Seq != h.Seq || h2.Total != h.Total || h2.Rcvd != h.Rcvd || h2.Wait != h.Wait ||
			h2.Flags != h.Flags || h2.Option != h.Option || h2.Window != h.Window || h2.Priority != h.Priority {
			t.Fatalf("%+v written back reads %+v", h, h2)
		}
	})
}

// Any reply text tokenises or fails with an error, never a panic; and any
// string quoted as the server or the client quotes it reads back as
// itself, one token.
func FuzzReply(f *testing.F) {
	seedCaptures(f, false)
	f.Fuzz(func(t *testing.T, msg []byte) {
		if r, err := prospero.ParseReply(string(msg)); err == nil {
			for _, l := range r.Links {
				prospero.EntryOf(l)
			}
			prospero.Size(r.Attributes)
			prospero.ModTime(r.Attributes)
		}
		s := string(msg)
		for _, q := range []string{prospero.QuoteAsServer(s), prospero.Quote(s)} {
			tok, err := prospero.Tokens(q)
			if err != nil || !slices.Equal(tok, []string{s}) {
				t.Fatalf("%q quoted %q reads %q %v", s, q, tok, err)
			}
			lines, err := prospero.Lines(q + "\n")
			if err != nil || len(lines) != 1 {
				t.Fatalf("%q quoted %q is %d lines %v", s, q, len(lines), err)
			}
		}
	})
}
