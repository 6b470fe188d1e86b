package prosperod

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// capture is one case of testdata/prospero/captures.txt.
type capture struct {
	name, title string
	dgrams      []dgram
	whole       string // sha256 of the reassembled reply, where given
}

type dgram struct {
	out     bool // client to server
	header  []byte
	text    []byte // nil when only hashed
	sha     string
	n       int
	dropped bool
}

func loadCaptures(t testing.TB) []capture {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "testdata", "prospero", "captures.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cs []capture
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || l[0] == '#' {
			continue
		}
		w := strings.Fields(l)
		switch w[0] {
		case "case":
			cs = append(cs, capture{name: w[1], title: strings.Join(w[2:], " ")})
			continue
		case "whole":
			cs[len(cs)-1].whole = w[2]
			continue
		}
		d := dgram{out: w[0] == ">"}
		var err error
		if d.header, err = hex.DecodeString(w[1]); err != nil {
			t.Fatal(err)
		}
		for i := 2; i < len(w); i++ {
			switch w[i] {
			case "text":
				d.text = []byte{}
				if w[i+1] != "-" {
					d.text, _ = hex.DecodeString(w[i+1])
				}
				d.n = len(d.text)
				i++
			case "sha256":
				d.sha = w[i+1]
				i++
			case "len":
				d.n, _ = strconv.Atoi(w[i+1])
				i++
			case "dropped":
				d.dropped = true
			}
		}
		cs[len(cs)-1].dgrams = append(cs[len(cs)-1].dgrams, d)
	}
	return cs
}

// TestCaptures sends each captured request, datagram for datagram, and
// checks that the server answers with the captured datagrams: every
// header octet, every text octet (or its digest, or its length where
// the notes give only that). The captures win: where this server and the
// notes' prose disagree, these are what the real one sent.
func TestCaptures(t *testing.T) {
	for _, c := range loadCaptures(t) {
		t.Run(c.name, func(t *testing.T) {
			s := &Server{}
			if c.name == "C29" {
				s.LinkPort = 1526 // the second instance
			} else {
				s.LinkPort = 1525
			}
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			conn, err := net.Dial("udp", s.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			buf := make([]byte, 65535)
			var whole []byte
			for i, d := range c.dgrams {
				if d.out {
					if _, err := conn.Write(append(append([]byte(nil), d.header...), d.text...)); err != nil {
						t.Fatal(err)
					}
					continue
				}
				conn.SetReadDeadline(time.Now().Add(2 * time.Second))
				n, err := conn.Read(buf)
				if err != nil {
					t.Fatalf("datagram %d (%s): %v", i, c.title, err)
				}
				got := buf[:n]
				if !bytes.HasPrefix(got, d.header) || len(got) != len(d.header)+d.n {
					t.Fatalf("datagram %d: header % x, %d octets of text; the capture has % x, %d", i, got[:min(len(got), 13)], len(got)-len(d.header), d.header, d.n)
				}
				text := got[len(d.header):]
				switch {
				case d.text != nil && !bytes.Equal(text, d.text):
					t.Fatalf("datagram %d text:\n%q\nthe capture's:\n%q", i, text, d.text)
				case d.sha != "":
					if sum := sha256.Sum256(text); hex.EncodeToString(sum[:]) != d.sha {
						t.Fatalf("datagram %d: sha256 %x, the capture's %s (begins %q)", i, sum, d.sha, text[:min(len(text), 60)])
					}
				}
				if !d.dropped {
					whole = append(whole, text...)
				}
			}
			if c.whole != "" {
				if sum := sha256.Sum256(whole); hex.EncodeToString(sum[:]) != c.whole {
					t.Errorf("reassembled: sha256 %x, the capture's %s", sum, c.whole)
				}
			}
		})
	}
}
