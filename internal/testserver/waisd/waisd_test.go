package waisd

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func dump(t *testing.T, name string) []byte {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "wais", name+".hex"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseDump(text)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

func exchange(t *testing.T, c net.Conn, req []byte) []byte {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	var h [25]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range h[:10] {
		n = n*10 + int(d-'0')
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	return append(h[:], body...)
}

// The server answers every captured request with the captured reply of
// the real server, byte for byte; 16.1 and 16.2 share a connection, as
// they did.
func TestRepliesMatchCaptures(t *testing.T) {
	s := New()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conns := [][]string{{"16.1", "16.2"}, {"16.3"}, {"16.4"}, {"16.5"}, {"16.6"}, {"16.7"}, {"16.8"}}
	for _, names := range conns {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			got := exchange(t, c, dump(t, name+".request"))
			if want := dump(t, name+".reply"); !bytes.Equal(got, want) {
				t.Errorf("%s: reply\n got %x\nwant %x", name, got, want)
			}
		}
		c.Close()
	}
}

func TestSampleDocuments(t *testing.T) {
	g := Gamma()
	sum := sha256.Sum256([]byte(g))
	if len(g) != 12842 || hex.EncodeToString(sum[:]) != "f7b29093201a141db529dd35930d3a5f47330bad498d2a6c73be4b70cc03d5ce" {
		t.Errorf("gamma.txt: %d bytes, sha256 %x", len(g), sum)
	}
	if len(Catalog) != 357 {
		t.Errorf("catalog of %d bytes", len(Catalog))
	}
	// Byte 10000 of gamma.txt falls in line 156 (§15).
	if want := "rieval chunks and gophers\nGamma long document line 157"; g[10000:10000+len(want)] != want {
		t.Errorf("gamma[10000:] = %q", g[10000:10060])
	}
}

// A header version above 2 and a retrieval without the type operand
// close the connection without a reply (§13.5); other PDUs get a
// header-only reply (§2).
func TestHangUps(t *testing.T) {
	s := New()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	closed := func(req []byte) bool {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		c.Write(req)
		n, err := c.Read(make([]byte, 1))
		return n == 0 && err == io.EOF
	}
	init := dump(t, "16.1.request")
	v3 := bytes.Clone(init)
	v3[11] = '3'
	if !closed(v3) {
		t.Error("header version 3 was answered")
	}
	if closed(init) {
		t.Error("Init was not answered")
	}
	present := []byte("0000000003z2wais        0\x00\x01\x18")
	c, _ := net.Dial("tcp", s.Addr())
	defer c.Close()
	if got := exchange(t, c, present); string(got) != "0000000000z2wais        0" {
		t.Errorf("Present got %q", got)
	}
}
