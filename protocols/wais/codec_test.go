package wais_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/internal/testserver/waisd"
	"github.com/urlderef/deref/protocols/wais"
)

// capture reads a message captured from freeWAIS-sf 2.2.8, kept as the
// hex dump of the protocol notes (§16).
func capture(t testing.TB, name string) []byte {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("..", "..", "testdata", "wais", name+".hex"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := waisd.ParseDump(text)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

var captures = []string{"16.1", "16.2", "16.3", "16.4", "16.5", "16.6", "16.7", "16.8"}

// Sample documents of the notes (§15).
const (
	alphaWP   = "1=localhost%3A2110;2=/srv/wais/idx/test;3=0%20127%20/srv/wais/docs/alpha.txt;4=localhost%3A2110;5=/srv/wais/idx/test;6=0%20127%20/srv/wais/docs/alpha.txt;7=%00;"
	betaWP    = "1=localhost%3A2110;2=/srv/wais/idx/test;3=0%20193%20/srv/wais/docs/beta.txt;4=localhost%3A2110;5=/srv/wais/idx/test;6=0%20193%20/srv/wais/docs/beta.txt;7=%00;"
	gammaWP   = "1=localhost%3A2110;2=/srv/wais/idx/test;3=0%2012842%20/srv/wais/docs/gamma.txt;4=localhost%3A2110;5=/srv/wais/idx/test;6=0%2012842%20/srv/wais/docs/gamma.txt;7=%00;"
	catalogWP = "2=test;3=0%200%20/srv/wais/idx/test.cat;7=%00;"
)

func docid(t testing.TB, wpath string) []byte {
	t.Helper()
	d, err := wais.DecodeWPath(wpath)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func split(t *testing.T, msg []byte) (wais.Header, []byte) {
	t.Helper()
	h, err := wais.ParseHeader(msg[:wais.HeaderSize], wais.MaxBody)
	if err != nil {
		t.Fatal(err)
	}
	if h.Length != len(msg)-wais.HeaderSize {
		t.Fatalf("length field %d, body %d", h.Length, len(msg)-wais.HeaderSize)
	}
	return h, msg[wais.HeaderSize:]
}

// Every captured message decodes into header, wais.APDU, WAIS block and groups,
// and each level encodes back to the captured bytes.
func TestCapturesRoundTrip(t *testing.T) {
	for _, c := range captures {
		for _, dir := range []string{"request", "reply"} {
			name := c + "." + dir
			msg := capture(t, name)
			h, body := split(t, msg)
			if got := h.Marshal(); !bytes.Equal(got, msg[:wais.HeaderSize]) {
				t.Errorf("%s: header %q re-encodes as %q", name, msg[:wais.HeaderSize], got)
			}
			if h.Type != 'z' || h.Version != '2' || string(h.Server[:]) != "wais      " || h.Checksum != '0' {
				t.Errorf("%s: header fields %+v", name, h)
			}
			a, err := wais.ParseAPDU(body)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := a.Marshal(); !bytes.Equal(got, body) {
				t.Errorf("%s: body does not re-encode:\n got %x\nwant %x", name, got, body)
			}
			if a.Ext == nil || a.Ext.Tag != wais.TagUserInformation {
				continue
			}
			es, err := wais.ParseBlock(a.Ext.Value)
			if err != nil {
				t.Fatalf("%s: block: %v", name, err)
			}
			if got := wais.MarshalBlock(es); !bytes.Equal(got, a.Ext.Value) {
				t.Errorf("%s: WAIS block does not re-encode", name)
			}
			for _, e := range es {
				if e.Diag != nil || (e.Tag != wais.TagDocumentHeader && e.Tag != wais.TagDocumentTextGrp) {
					continue
				}
				fs, err := wais.ParseFields(e.Value)
				if err != nil {
					t.Fatalf("%s: group %d: %v", name, e.Tag, err)
				}
				if got := wais.MarshalFields(fs); !bytes.Equal(got, e.Value) {
					t.Errorf("%s: group %d does not re-encode", name, e.Tag)
				}
			}
		}
	}
}

// The requests this client builds are byte for byte those of the classic
// client in the captures.
func TestRequestsMatchCaptures(t *testing.T) {
	alpha, beta := docid(t, alphaWP), docid(t, betaWP)
	for _, tc := range []struct {
		name string
		a    *wais.APDU
	}{
		{"16.1", wais.InitRequest(100000)},
		{"16.2", wais.SearchRequest("test", "gophers", 40)},
		{"16.3", wais.SearchRequest("test", "zebra", 40)},
		{"16.4", wais.SearchRequest("nosuchdb", "gophers", 40)},
		{"16.5", wais.RetrievalRequest("test", alpha, "TEXT", wais.UnitBytes, 0, 127)},
		{"16.6", wais.RetrievalRequest("test", beta, "TEXT", wais.UnitBytes, 0, 10000)},
		{"16.7", wais.RetrievalRequest("test", alpha, "TEXT", wais.UnitLines, 1, 2)},
		{"16.8", wais.RetrievalRequest("test", alpha, "TEXT", wais.UnitBytes, 127, 10127)},
	} {
		want := capture(t, tc.name+".request")
		if got := wais.Message(tc.a.Marshal()); !bytes.Equal(got, want) {
			t.Errorf("%s: request\n got %x\nwant %x", tc.name, got, want)
		}
	}
}

func TestInitResponse(t *testing.T) {
	_, body := split(t, capture(t, "16.1.reply"))
	a, err := wais.ParseAPDU(body)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := wais.InitResult(a); err != nil || r != 1 {
		t.Fatalf("result %d, %v", r, err)
	}
	want := []wais.Field{
		{3, []byte{0x80}}, {4, []byte{0x80}}, {5, []byte{1, 0x86, 0xa0}}, {6, []byte{1, 0x86, 0xa0}},
		{8, []byte("LS6")}, {9, []byte("University of Dortmund Informatik VI")}, {10, []byte("2.2.8 string")},
	}
	if len(a.Fields) != len(want) {
		t.Fatalf("fields %v", a.Fields)
	}
	for i, f := range want {
		if a.Fields[i].Tag != f.Tag || !bytes.Equal(a.Fields[i].Value, f.Value) {
			t.Errorf("field %d: %d %q, want %d %q", i, a.Fields[i].Tag, a.Fields[i].Value, f.Tag, f.Value)
		}
	}
	if n, _ := wais.ParseNum(a.Fields[2].Value); n != 100000 {
		t.Errorf("PreferredMessageSize %d", n)
	}
	es, err := wais.ParseBlock(a.Ext.Value)
	if err != nil || len(es) != 2 || es[0].Tag != 100 || es[1].Tag != 101 {
		t.Fatalf("block %v %v", es, err)
	}
}

func searchReply(t *testing.T, name string) *wais.SearchResponse {
	t.Helper()
	_, body := split(t, capture(t, name+".reply"))
	r, err := wais.ParseSearchResponse(body)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func TestSearchResponseTwoHits(t *testing.T) {
	r := searchReply(t, "16.2")
	if r.Status != 1 || r.Records != 2 || len(r.Headers) != 2 || len(r.Diagnostics) != 0 || len(r.Texts) != 0 {
		t.Fatalf("%+v", r)
	}
	a, g := r.Headers[0], r.Headers[1]
	if !bytes.Equal(a.DocID, docid(t, alphaWP)) || len(a.DocID) != 139 {
		t.Errorf("alpha docid %q", a.DocID)
	}
	if a.Score != 191 || a.BestMatch != 0 || a.Length != 127 || a.Lines != 3 || a.Type() != "TEXT" ||
		a.Source != "/srv/wais/idx/test" || a.Date != "0" || a.Headline != "alpha.txt   /srv/wais/docs/" {
		t.Errorf("alpha %+v", a)
	}
	if !bytes.Equal(g.DocID, docid(t, gammaWP)) || len(g.DocID) != 143 {
		t.Errorf("gamma docid %q", g.DocID)
	}
	if g.Score != 88 || g.Length != 12842 || g.Lines != 201 || g.Headline != "gamma.txt   /srv/wais/docs/" {
		t.Errorf("gamma %+v", g)
	}
	fs, err := wais.ParseFields(a.DocID)
	if err != nil || len(fs) != 7 || string(fs[0].Value) != "localhost:2110" || string(fs[2].Value) != "0 127 /srv/wais/docs/alpha.txt" || !bytes.Equal(fs[6].Value, []byte{0}) {
		t.Errorf("docid fields %v %v", fs, err)
	}
}

func TestSearchResponseCatalog(t *testing.T) {
	r := searchReply(t, "16.3")
	if len(r.Headers) != 1 || r.Records != 1 {
		t.Fatalf("%+v", r)
	}
	h := r.Headers[0]
	if !bytes.Equal(h.DocID, docid(t, catalogWP)) || h.Score != 0 || h.Length != 357 || h.Lines != 17 ||
		h.Source != "test" || h.Date != "" || h.Headline != "Search produced no result. Here's the Catalog for database: test" {
		t.Errorf("%+v", h)
	}
}

func TestSearchResponseDiagnostic(t *testing.T) {
	r := searchReply(t, "16.4")
	if r.Status != 0 || len(r.Headers) != 0 || len(r.Diagnostics) != 1 {
		t.Fatalf("%+v", r)
	}
	d := r.Diagnostics[0]
	if d.Code != "S1" || d.Info != "The following database is not available: /srv/wais/idx/nosuchdb" || d.Surrogate != 0 {
		t.Errorf("%+v", d)
	}
}

func TestRetrievalReplies(t *testing.T) {
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	r := searchReply(t, "16.5")
	if len(r.Texts) != 1 || len(r.Diagnostics) != 0 || string(r.ReferenceID) != "3" {
		t.Fatalf("%+v", r)
	}
	if got := sum(r.Texts[0].Text); got != "ff2ff3cda292abe2ae98f22d290aabd5f30e3065fe660dca5da18d2385485a32" || string(r.Texts[0].Text) != waisd.Alpha {
		t.Errorf("alpha.txt sha256 %s", got)
	}
	if !bytes.Equal(r.Texts[0].DocID, docid(t, alphaWP)) {
		t.Error("docid not echoed")
	}
	r = searchReply(t, "16.6")
	if len(r.Texts) != 1 || len(r.Diagnostics) != 1 || r.Records != 2 {
		t.Fatalf("%+v", r)
	}
	if got := sum(r.Texts[0].Text); got != "3e2d0eb5e37ae57177886883aa018cc57bc60d954f230712d0a54287103f7bbf" || string(r.Texts[0].Text) != waisd.Beta {
		t.Errorf("beta.txt sha256 %s", got)
	}
	if d := r.Diagnostics[0]; d.Code != "SF" || d.Info != "Request out of range" || d.Surrogate != 1 {
		t.Errorf("%+v", d)
	}
	r = searchReply(t, "16.7")
	if len(r.Texts) != 1 || string(r.Texts[0].Text) != "The gopher protocol is a simple menu based protocol.\n" || len(r.Diagnostics) != 0 {
		t.Errorf("%+v", r)
	}
	r = searchReply(t, "16.8")
	if len(r.Texts) != 1 || !r.Texts[0].HasText || len(r.Texts[0].Text) != 0 || len(r.Diagnostics) != 1 || r.Diagnostics[0].Code != "SF" {
		t.Errorf("%+v", r)
	}
}

// The compressed integers of the table in notes §3.1.
func TestCompressedIntegers(t *testing.T) {
	for _, tc := range []struct {
		v   int
		hex string
	}{
		{0, "00"}, {5, "05"}, {127, "7f"}, {128, "8100"}, {131, "8103"}, {139, "810b"}, {150, "8116"},
		{153, "8119"}, {447, "833f"}, {1000, "8768"}, {10156, "cf2c"}, {16383, "ff7f"}, {16384, "818000"},
		{100000, "868d20"}, {2097151, "ffff7f"}, {2097152, "81808000"},
	} {
		if got := hex.EncodeToString(wais.AppendCI(nil, tc.v)); got != tc.hex {
			t.Errorf("CI(%d) = %s, want %s", tc.v, got, tc.hex)
		}
		b, _ := hex.DecodeString(tc.hex)
		v, n, err := wais.ReadCI(b)
		if err != nil || v != tc.v || n != len(b) {
			t.Errorf("wais.ReadCI(%s) = %d, %d, %v", tc.hex, v, n, err)
		}
	}
	if v, n, err := wais.ReadCI([]byte{0x80, 0x05}); v != 5 || n != 2 || err != nil {
		t.Errorf("leading 80: %d %d %v", v, n, err)
	}
	for _, bad := range [][]byte{{0x81, 0x80, 0x80, 0x80, 0x00}, {0x81}, {}} {
		if _, _, err := wais.ReadCI(bad); err == nil {
			t.Errorf("wais.ReadCI(%x) accepted", bad)
		}
	}
	for _, tc := range []struct {
		v   int64
		hex string
	}{{0, "00"}, {191, "bf"}, {357, "0165"}, {12842, "322a"}, {100000, "0186a0"}, {1 << 24, "01000000"}} {
		if got := hex.EncodeToString(wais.Num(tc.v)); got != tc.hex {
			t.Errorf("wais.Num(%d) = %s, want %s", tc.v, got, tc.hex)
		}
	}
}

func TestHeaderLimits(t *testing.T) {
	for _, h := range []string{"00000000x1z2wais        0", "0000200000z2wais        0"} {
		if _, err := wais.ParseHeader([]byte(h), 100000); err == nil {
			t.Errorf("%q accepted", h)
		}
	}
	if _, _, err := wais.ReadMessage(strings.NewReader("0000000010z2wais        0abc"), wais.MaxBody, nil); err == nil {
		t.Error("a cut-off body was accepted")
	}
	if _, _, err := wais.ReadMessage(strings.NewReader("00000"), wais.MaxBody, nil); err == nil {
		t.Error("a cut-off header was accepted")
	}
}

func TestBadBodies(t *testing.T) {
	for _, b := range []string{
		"", "\x00", "\x00\x05\x17", "\x00\x01\x99", // short, cut, unknown PDU
		"\x00\x0b\x17\x00\x00\x00\x00\x00\x00\x00\x00\x00\x63\x05",                 // extension longer than the body
		"\x00\x0b\x17\x00\x00\x00\x00\x00\x00\x00\x00\x00\x63\x03\x1c\x00\x09",     // diagnostic cut off
		"\x00\x0b\x17\x00\x00\x00\x00\x00\x00\x00\x00\x00\x63\x04\x81\x16\x05\x00", // group longer than the block
	} {
		if _, err := wais.ParseSearchResponse([]byte(b)); err == nil {
			t.Errorf("%q accepted", b)
		}
	}
}

// The worked examples of notes §12.3, both ways.
func TestWPath(t *testing.T) {
	r := searchReply(t, "16.2")
	if got := wais.EncodeWPath(r.Headers[0].DocID); got != alphaWP {
		t.Errorf("alpha wpath\n got %s\nwant %s", got, alphaWP)
	}
	if got := wais.EncodeWPath(r.Headers[1].DocID); got != gammaWP {
		t.Errorf("gamma wpath %s", got)
	}
	if got := wais.EncodeWPath(searchReply(t, "16.3").Headers[0].DocID); got != catalogWP {
		t.Errorf("catalog wpath %s", got)
	}
	if d := docid(t, alphaWP); len(d) != 139 {
		t.Errorf("alpha docid of %d bytes", len(d))
	}
	if d := docid(t, catalogWP); len(d) != 37 {
		t.Errorf("catalog docid of %d bytes", len(d))
	}
	// Lower-case hex is read too; a long field gets a two-byte length.
	if d := docid(t, "3=%3a%3A;"); !bytes.Equal(d, []byte{3, 2, ':', ':'}) {
		t.Errorf("%x", d)
	}
	long := strings.Repeat("x", 200)
	if d := docid(t, "3="+long+";"); !bytes.Equal(d[:3], []byte{3, 0x81, 0x48}) || wais.EncodeWPath(d) != "3="+long+";" {
		t.Errorf("long field %x", d[:3])
	}
	// Not of the tagged shape: decoded whole.
	if d := docid(t, "abc%20def"); string(d) != "abc def" {
		t.Errorf("%q", d)
	}
	for _, bad := range []string{"", "1=abc", "1=a%zz;", "1=a;=b;", "1=a;2", "1=a;x=b;", "ab%2"} {
		if _, err := wais.DecodeWPath(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
