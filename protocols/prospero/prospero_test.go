package prospero_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver/prosperod"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/prospero"
	"github.com/urlderef/deref/url"
)

func serve(t *testing.T, s *prosperod.Server) *prosperod.Server {
	t.Helper()
	if s == nil {
		s = &prosperod.Server{}
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// quick is a Fetcher whose time-outs suit a test on loopback.
func quick() *prospero.Fetcher {
	return &prospero.Fetcher{Timeout: 100 * time.Millisecond}
}

func get(t *testing.T, f *prospero.Fetcher, raw string, edit ...func(*protocols.Request)) (*protocols.Response, []byte, error) {
	t.Helper()
	req := &protocols.Request{URL: url.MustParse(raw)}
	for _, e := range edit {
		e(req)
	}
	resp, err := f.Fetch(context.Background(), req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func TestFiles(t *testing.T) {
	s := serve(t, nil)
	files := prosperod.Fixture()
	for hso, file := range map[string]string{
		"AFTP/pub/hello.txt":                  "ftp/pub/hello.txt",
		"AFTP/pub/big.txt":                    "ftp/pub/big.txt",   // 25 packets, a window ACK
		"AFTP/pub/bytes.bin":                  "ftp/pub/bytes.bin", // every octet, NUL and quote included
		"AFTP/pub/it%27s%20here.txt":          "ftp/pub/it's here.txt",
		"/srv/prospero/root/readme.txt":       "root/readme.txt",
		"AFTP/pub/docs/nested/deep.txt":       "ftp/pub/docs/nested/deep.txt",
		"AFTP/pub/hello.txt;OBJECT-VERSION=0": "ftp/pub/hello.txt",
	} {
		for _, w := range []int{0, -1} {
			f := quick()
			f.Window = w
			resp, b, err := get(t, f, "prospero://"+s.Addr()+"/"+hso)
			if err != nil {
				t.Fatalf("%s: %v", hso, err)
			}
			if string(b) != files[file] || resp.Kind != protocols.KindFile || resp.Size != int64(len(files[file])) {
				t.Errorf("%s (window %d): kind %v size %d, %d bytes %q", hso, w, resp.Kind, resp.Size, len(b), b[:min(len(b), 40)])
			}
			if !resp.ModTime.Equal(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)) {
				t.Errorf("%s: time %v", hso, resp.ModTime)
			}
		}
	}
}

// A file takes two exchanges before its data: what it is (with its
// listing, should it be a folder), then its contents; the requests quote
// the hsoname whole.
func TestRequests(t *testing.T) {
	s := serve(t, nil)
	if _, _, err := get(t, quick(), "prospero://"+s.Addr()+"/AFTP/pub/it%27s%20here.txt;OBJECT-VERSION=3"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"VERSION 5 deref\nAUTHENTICATE '' UNAUTHENTICATED anonymous\nGET-OBJECT-INFO #ALL ASCII 'AFTP/pub/it''s here.txt' 3\nDIRECTORY ASCII 'AFTP/pub/it''s here.txt'\nLIST ATTRIBUTES COMPONENTS\n",
		"VERSION 5 deref\nAUTHENTICATE '' UNAUTHENTICATED anonymous\nGET-OBJECT-INFO CONTENTS ASCII 'AFTP/pub/it''s here.txt' 3\n",
	}
	if got := s.Requests(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("requests:\n%q\nwant\n%q", got, want)
	}
}

// A listing takes one exchange; its entries are the LINK lines with their
// attributes, each with its own prospero: URL.
func TestListing(t *testing.T) {
	s := serve(t, &prosperod.Server{LinkPort: 1525})
	resp, raw, err := get(t, quick(), "prospero://"+s.Addr()+"/AFTP/pub")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.Requests()); n != 1 || resp.Kind != protocols.KindDirectory || resp.MediaType != prospero.ListingType {
		t.Fatalf("%d requests, kind %v, %s", n, resp.Kind, resp.MediaType)
	}
	var b strings.Builder
	for _, e := range resp.Entries {
		size := "-"
		if e.Size >= 0 {
			size = fmt.Sprint(e.Size)
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\n", e.Kind, size, e.ModTime.UTC().Format(time.RFC3339), e.Name, e.URL)
	}
	// The notes' section 7, word for word.
	want := `file	256	2024-01-02T03:04:05Z	bytes.bin	prospero://127.0.0.1/AFTP/pub/bytes.bin
file	43	2024-01-02T03:04:05Z	it's here.txt	prospero://127.0.0.1/AFTP/pub/it's%20here.txt
file	30000	2024-01-02T03:04:05Z	big.txt	prospero://127.0.0.1/AFTP/pub/big.txt
directory	-	2024-01-02T03:04:05Z	many	prospero://127.0.0.1/AFTP/pub/many
file	32	2024-01-02T03:04:05Z	hello.txt	prospero://127.0.0.1/AFTP/pub/hello.txt
directory	-	2024-01-02T03:04:05Z	docs	prospero://127.0.0.1/AFTP/pub/docs
`
	if b.String() != want {
		t.Errorf("listing:\n%s\nwant\n%s", b.String(), want)
	}
	if !strings.HasPrefix(string(raw), "ATTRIBUTE OBJECT INTRINSIC SIZE SEQUENCE 4096' bytes'\n") || !strings.Contains(string(raw), "LINK  L FILE bytes.bin INTERNET-D 127.0.0.1 ASCII AFTP'/pub/bytes.bin' 0\n") {
		t.Errorf("the body is not the server's reply:\n%s", raw)
	}
	// A server on another port names it; a full-path hsoname gives "//".
	s2 := serve(t, nil)
	resp, _, err = get(t, quick(), "prospero://"+s2.Addr()+"//srv/prospero/root")
	if err != nil || len(resp.Entries) != 1 || resp.Entries[0].URL != "prospero://"+s2.Addr()+"//srv/prospero/root/readme.txt" {
		t.Errorf("%v %+v", err, resp)
	}
	// 150 entries, 75 packets with four window ACKs.
	resp, _, err = get(t, &prospero.Fetcher{Window: -1}, "prospero://"+s2.Addr()+"/AFTP/pub/many")
	if err != nil || len(resp.Entries) != 150 || resp.Entries[0].Name != "f076.txt" || resp.Entries[149].Name != "f123.txt" {
		t.Errorf("many: %v, %d entries", err, len(resp.Entries))
	}
}

func TestErrors(t *testing.T) {
	s := serve(t, &prosperod.Server{Reply: func(req string) (string, bool) {
		switch {
		case strings.Contains(req, "'error'"):
			return "ERROR Unknown message: FROBNICATE\n", true
		case strings.Contains(req, "'version'"):
			return "VERSION-NOT-SUPPORTED TRY 1-5", true
		case strings.Contains(req, "'failed'"):
			return "FAILURE SERVER-FAILED out of memory\n", true
		case strings.Contains(req, "'open'"):
			return "ATTRIBUTE OBJECT INTRINSIC SIZE SEQUENCE 4' bytes\n", true
		case strings.Contains(req, "'junk'"):
			return "HELLO THERE\n", true
		case strings.Contains(req, "'dangling'"): // a link whose target is gone
			return "FAILURE NOT-A-DIRECTORY\n", true
		case strings.Contains(req, "'auth'"):
			return "FAILURE AUTHENTICATION-REQUIRED\n", true
		case strings.Contains(req, "'local'"):
			if strings.Contains(req, "CONTENTS") {
				return "FAILURE NOT-FOUND\n", true
			}
			return "ATTRIBUTE OBJECT INTRINSIC SIZE SEQUENCE 4' bytes'\nATTRIBUTE OBJECT INTRINSIC ACCESS-METHOD SEQUENCE LOCAL '' '' '' ''\nATTRIBUTE OBJECT INTRINSIC ACCESS-METHOD SEQUENCE AFS '' '' ASCII /afs/x\nFAILURE NOT-A-DIRECTORY\n", true
		case strings.Contains(req, "'short'"):
			if strings.Contains(req, "CONTENTS") {
				return "ATTRIBUTE OBJECT INTRINSIC CONTENTS SEQUENCE DATA abc\n", true
			}
			return "ATTRIBUTE OBJECT INTRINSIC SIZE SEQUENCE 4' bytes'\nATTRIBUTE OBJECT INTRINSIC ACCESS-METHOD SEQUENCE PROSPERO-CONTENTS '' '' '' ''\nFAILURE NOT-A-DIRECTORY\n", true
		}
		return "", false
	}})
	base := "prospero://" + s.Addr() + "/"
	for path, want := range map[string]error{
		"AFTP/pub/nosuch":            protocols.ErrNotFound,
		"/etc/passwd":                protocols.ErrPermission,
		"AFTP/pub/docs/../hello.txt": protocols.ErrPermission,
		"":                           protocols.ErrPermission,
		"auth":                       protocols.ErrPermission,
		"dangling":                   protocols.ErrNotFound,
		"error":                      protocols.ErrProtocol,
		"version":                    protocols.ErrProtocol,
		"failed":                     protocols.ErrProtocol,
		"open":                       protocols.ErrProtocol,
		"junk":                       protocols.ErrProtocol,
		"local":                      protocols.ErrNotRetrievable,
		"short":                      protocols.ErrShortBody,
		"x;OBJECT-VERSION=new":       protocols.ErrBadURL,
		"x;FORMAT=ps":                protocols.ErrBadURL,
	} {
		_, _, err := get(t, quick(), base+path)
		if !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", path, err, want)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: more than one line: %q", path, err)
		}
	}
	if _, _, err := get(t, quick(), base+"x;FORMAT=ps"); err == nil || !strings.Contains(err.Error(), "FORMAT") {
		t.Errorf("the field is not named: %v", err)
	}
}

func TestForwarded(t *testing.T) {
	s := serve(t, &prosperod.Server{Reply: func(req string) (string, bool) {
		return "FORWARDED INTERNET-D ELSEWHERE.EXAMPLE(1600) ASCII 'AFTP/new home' 2\nID REMOTE 7\n", true
	}})
	resp, _, err := get(t, quick(), "prospero://"+s.Addr()+"/AFTP/old")
	if err != nil || resp.Kind != protocols.KindRedirect || resp.Location.String() != "prospero://elsewhere.example:1600/AFTP/new%20home;OBJECT-VERSION=2" {
		t.Errorf("%v %+v", err, resp)
	}
}

// A file larger than InBandMax that offers AFTP is an ftp: URL, which
// the engine follows as a redirect.
func TestAccessMethod(t *testing.T) {
	ftp, err := net.Listen("tcp", "127.0.0.1:0") // where the FTP server would be
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ftp.Addr().String())
	s := serve(t, &prosperod.Server{AFTPHost: "127.0.0.1(" + port + ")"})
	f := quick()
	f.InBandMax = 1000
	resp, _, err := get(t, f, "prospero://"+s.Addr()+"/AFTP/pub/big.txt")
	if err != nil || resp.Kind != protocols.KindRedirect || resp.Location.String() != "ftp://127.0.0.1:"+port+"/pub/big.txt;type=i" {
		t.Fatalf("%v %+v", err, resp)
	}
	// Where nothing listens, the file comes in-band all the same.
	ftp.Close()
	resp, b, err := get(t, f, "prospero://"+s.Addr()+"/AFTP/pub/big.txt")
	if err != nil || resp.Kind != protocols.KindFile || string(b) != prosperod.Fixture()["ftp/pub/big.txt"] {
		t.Fatalf("nothing at the AFTP host: %v %+v", err, resp)
	}
	if resp, b, err := get(t, f, "prospero://"+s.Addr()+"/AFTP/pub/hello.txt"); err != nil || resp.Kind != protocols.KindFile || string(b) != "Hello from the Prospero server.\n" {
		t.Errorf("a small file: %v %q", err, b)
	}
	for m, want := range map[string]string{
		"AFTP INTERNET-D ftp.example ASCII '/pub/it''s here.txt' BINARY": "ftp://ftp.example/pub/it's%20here.txt;type=i",
		"FTP INTERNET-D ftp.example ASCII /home/a/notes TEXT":            "ftp://ftp.example/%2Fhome/a/notes;type=a",
		"GOPHER INTERNET-D gopher.example(7070) ASCII /docs/a.txt TEXT":  "gopher://gopher.example:7070/0/docs/a.txt",
		"GOPHER INTERNET-D gopher.example ASCII 1/menu":                  "gopher://gopher.example/11/menu",
		"LOCAL '' '' ASCII /etc/passwd":                                  "<nil>",
		"AFS '' '' ASCII /afs/x":                                         "<nil>",
	} {
		tok, _ := prospero.Tokens(m)
		if got := fmt.Sprint(prospero.MethodURL(tok, "h", "n")); got != want {
			t.Errorf("%s: %s, want %s", m, got, want)
		}
	}
}

// once drops or changes the datagrams fault says, once each.
func faulty(fault func(n int, h prospero.Header, d []byte) [][]byte) func(int, []byte) [][]byte {
	return func(n int, d []byte) [][]byte {
		h, _, err := prospero.ParseHeader(d)
		if err != nil {
			return [][]byte{d}
		}
		return fault(n, h, d)
	}
}

func TestLossAndDisorder(t *testing.T) {
	big := prosperod.Fixture()["ftp/pub/big.txt"]
	var mu sync.Mutex
	var held []byte
	dropped := map[uint16]bool{}
	cases := map[string]func(n int, h prospero.Header, d []byte) [][]byte{
		"packet 3 lost": func(n int, h prospero.Header, d []byte) [][]byte {
			if h.Seq == 3 && h.Total == 0 && !dropped[3] {
				dropped[3] = true
				return nil
			}
			return [][]byte{d}
		},
		"window end lost": func(n int, h prospero.Header, d []byte) [][]byte {
			if h.Seq == 16 && !dropped[16] {
				dropped[16] = true
				return nil
			}
			return [][]byte{d}
		},
		"last lost": func(n int, h prospero.Header, d []byte) [][]byte {
			if h.Seq == 25 && !dropped[25] {
				dropped[25] = true
				return nil
			}
			return [][]byte{d}
		},
		"duplicated": func(n int, h prospero.Header, d []byte) [][]byte { return [][]byte{d, d} },
		"reordered": func(n int, h prospero.Header, d []byte) [][]byte {
			if h.Seq == 4 && held == nil && h.Total == 0 {
				held = d
				return nil
			}
			if h.Seq == 5 && held != nil {
				d2 := held
				held = []byte{}
				return [][]byte{d, d2}
			}
			return [][]byte{d}
		},
		"another connection id": func(n int, h prospero.Header, d []byte) [][]byte {
			if h.Seq == 2 && !dropped[2] {
				dropped[2] = true
				e := append([]byte(nil), d...)
				binary.BigEndian.PutUint16(e[1:], h.ConnID+1)
				return [][]byte{e}
			}
			return [][]byte{d}
		},
	}
	for name, fault := range cases {
		t.Run(name, func(t *testing.T) {
			mu.Lock()
			held, dropped = nil, map[uint16]bool{}
			mu.Unlock()
			s := serve(t, &prosperod.Server{Faults: prosperod.Faults{Out: faulty(func(n int, h prospero.Header, d []byte) [][]byte {
				if len(d) < 40 {
					return [][]byte{d} // the first exchange's one packet
				}
				mu.Lock()
				defer mu.Unlock()
				return fault(n, h, d)
			}), SwapIDs: true}})
			f := quick()
			f.Window = -1
			_, b, err := get(t, f, "prospero://"+s.Addr()+"/AFTP/pub/big.txt")
			if err != nil || string(b) != big {
				t.Fatalf("%v: %d bytes", err, len(b))
			}
		})
	}
}

// Datagrams from another port of the server's address, claiming to be
// the reply, never reach the reply.
func TestSpoofed(t *testing.T) {
	s := serve(t, &prosperod.Server{Faults: prosperod.Faults{Spoof: func(d []byte) []byte {
		h, text, _ := prospero.ParseHeader(d)
		return append(h.Append(nil), bytes.Repeat([]byte("X"), len(text))...)
	}}})
	_, b, err := get(t, quick(), "prospero://"+s.Addr()+"/AFTP/pub/big.txt")
	if err != nil || string(b) != prosperod.Fixture()["ftp/pub/big.txt"] {
		t.Errorf("%v: %q", err, b[:min(40, len(b))])
	}
}

func TestNoAnswer(t *testing.T) {
	s := serve(t, &prosperod.Server{Faults: prosperod.Faults{Silent: true}})
	f := &prospero.Fetcher{Timeout: 20 * time.Millisecond, Retries: 2}
	_, _, err := get(t, f, "prospero://"+s.Addr()+"/AFTP/pub/hello.txt")
	if !errors.Is(err, protocols.ErrTimeout) || !strings.Contains(err.Error(), "after 3 tries") {
		t.Errorf("%v", err)
	}
	if n := s.Received(); n != 3 {
		t.Errorf("%d transmissions, want 3", n)
	}
	// The connect time-out bounds the wait for the first answer.
	_, _, err = get(t, &prospero.Fetcher{}, "prospero://"+s.Addr()+"/AFTP/pub/hello.txt", func(r *protocols.Request) { r.ConnectTimeout = 50 * time.Millisecond })
	if !errors.Is(err, protocols.ErrTimeout) || !strings.Contains(err.Error(), "connect time-out") {
		t.Errorf("%v", err)
	}
	// Cancellation ends it.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = (&prospero.Fetcher{}).Fetch(ctx, &protocols.Request{URL: url.MustParse("prospero://" + s.Addr() + "/AFTP/pub/hello.txt")})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancelled: %v", err)
	}
}

// A reply whose last packet never comes, whose total changes, or that
// goes on past its total is cut off with a protocol error.
func TestLyingServer(t *testing.T) {
	for name, fault := range map[string]func(h prospero.Header, d []byte) [][]byte{
		"never ends": func(h prospero.Header, d []byte) [][]byte {
			if h.Seq == 25 {
				return nil
			}
			return [][]byte{d}
		},
		"a million packets": func(h prospero.Header, d []byte) [][]byte {
			if h.Seq == 25 { // the total would be 25: say 65535
				binary.BigEndian.PutUint16(d[5:], 0xffff)
			}
			return [][]byte{d}
		},
		"total changes": func(h prospero.Header, d []byte) [][]byte {
			if h.Seq == 20 && h.Total != 0 {
				binary.BigEndian.PutUint16(d[5:], 30)
			}
			return [][]byte{d}
		},
		"packet past the total": func(h prospero.Header, d []byte) [][]byte {
			if h.Seq == 17 {
				e := append([]byte(nil), d...)
				binary.BigEndian.PutUint16(e[3:], 26)
				return [][]byte{e, d}
			}
			return [][]byte{d}
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := serve(t, &prosperod.Server{Faults: prosperod.Faults{Out: faulty(func(n int, h prospero.Header, d []byte) [][]byte {
				if len(d) < 40 {
					return [][]byte{d}
				}
				return fault(h, d)
			})}})
			f := &prospero.Fetcher{Timeout: 20 * time.Millisecond, Window: -1}
			_, b, err := get(t, f, "prospero://"+s.Addr()+"/AFTP/pub/big.txt")
			if !errors.Is(err, protocols.ErrProtocol) && !errors.Is(err, protocols.ErrShortBody) {
				t.Errorf("%v (%d bytes)", err, len(b))
			}
		})
	}
}

// A reply that goes on and on, its total never given, is cut off at the
// listing limit: memory stays flat.
func TestEndlessReply(t *testing.T) {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		buf := make([]byte, 2048)
		n, addr, err := c.ReadFromUDP(buf)
		if err != nil {
			return
		}
		h, _, _ := prospero.ParseHeader(buf[:n])
		line := bytes.Repeat([]byte("LINK  L FILE x INTERNET-D H ASCII x 0\n"), 40)[:prospero.PacketText]
		for seq := 1; seq < 0xffff; seq++ {
			hd := prospero.Header{ConnID: h.ConnID, Seq: uint16(seq), Len: 7}
			if seq%16 == 0 {
				hd.Len, hd.HasRcvd, hd.HasWait, hd.Flags = 12, true, true, prospero.FlagAck
			}
			if _, err := c.WriteToUDP(append(hd.Append(nil), line...), addr); err != nil {
				return
			}
			if seq%16 == 0 {
				c.SetReadDeadline(time.Now().Add(time.Second))
				if _, _, err := c.ReadFromUDP(buf); err != nil {
					return
				}
			}
		}
	}()
	_, _, err = get(t, &prospero.Fetcher{Window: -1}, "prospero://"+c.LocalAddr().String()+"/AFTP/x", func(r *protocols.Request) { r.MaxListing = 100 << 10 })
	if !errors.Is(err, protocols.ErrTooLarge) {
		t.Errorf("%v", err)
	}
}

// A body closed early cancels the reply; a Read under way ends with the
// context.
func TestCancelBody(t *testing.T) {
	s := serve(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := quick().Fetch(ctx, &protocols.Request{URL: url.MustParse("prospero://" + s.Addr() + "/AFTP/pub/big.txt")})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || !strings.HasPrefix(string(buf), "00000 abc") {
		t.Fatalf("%v %q", err, buf)
	}
	cancel()
	resp.Body.Close()
}

func TestHead(t *testing.T) {
	s := serve(t, nil)
	resp, b, err := get(t, quick(), "prospero://"+s.Addr()+"/AFTP/pub/big.txt", func(r *protocols.Request) { r.HeadOnly = true })
	if err != nil || len(b) != 0 || resp.Size != 30000 || resp.MediaType != "text/plain" || resp.Kind != protocols.KindFile {
		t.Errorf("%v %+v", err, resp)
	}
	if n := len(s.Requests()); n != 1 || strings.Contains(s.Requests()[0], "DIRECTORY") {
		t.Errorf("requests: %q", s.Requests())
	}
	resp, _, err = get(t, quick(), "prospero://"+s.Addr()+"/AFTP/pub/docs", func(r *protocols.Request) { r.HeadOnly = true })
	if err != nil || resp.Kind != protocols.KindDirectory {
		t.Errorf("%v %+v", err, resp)
	}
}

// An offset in-band skips the octets before it: there is no way to ask
// the server for fewer.
func TestOffset(t *testing.T) {
	s := serve(t, nil)
	resp, b, err := get(t, quick(), "prospero://"+s.Addr()+"//srv/prospero/root/readme.txt", func(r *protocols.Request) { r.Offset = 40 })
	if err != nil || string(b) != prosperod.Fixture()["root/readme.txt"][40:] || resp.Offset != 40 || resp.Size != 6 {
		t.Errorf("%v %q %+v", err, b, resp)
	}
	resp, b, err = get(t, quick(), "prospero://"+s.Addr()+"/AFTP/pub/big.txt", func(r *protocols.Request) { r.Offset = 29990 })
	if err != nil || string(b) != prosperod.Fixture()["ftp/pub/big.txt"][29990:] || resp.Offset != 29990 || resp.Size != 10 {
		t.Errorf("%v %q %+v", err, b, resp)
	}
	if _, _, err = get(t, quick(), "prospero://"+s.Addr()+"//srv/prospero/root/readme.txt", func(r *protocols.Request) { r.Offset = 47 }); !errors.Is(err, protocols.ErrRangeNotSatisfied) {
		t.Errorf("past the end: %v", err)
	}
}

func TestTrace(t *testing.T) {
	s := serve(t, nil)
	var lines []string
	_, _, err := get(t, quick(), "prospero://"+s.Addr()+"/AFTP/pub/bytes.bin", func(r *protocols.Request) {
		r.Trace = func(ev protocols.TraceEvent) { lines = append(lines, fmt.Sprint(ev.Dir)+" "+ev.Text) }
	})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{"1 GET-OBJECT-INFO #ALL ASCII 'AFTP/pub/bytes.bin' 0", "2 ATTRIBUTE OBJECT INTRINSIC SIZE SEQUENCE 256' bytes'", "1 GET-OBJECT-INFO CONTENTS ASCII 'AFTP/pub/bytes.bin' 0", "2 ATTRIBUTE OBJECT INTRINSIC CONTENTS SEQUENCE DATA (the file's octets, quoted)"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in\n%s", want, all)
		}
	}
	if strings.Contains(all, "\x01\x02") {
		t.Error("the trace shows the file's octets")
	}
}

// A window's ACK lost on its way: the server waits, the client's
// time-out sends the request again with its received-through, and the
// server goes on from there.
func TestAckLost(t *testing.T) {
	acks := 0
	s := serve(t, &prosperod.Server{Faults: prosperod.Faults{In: func(n int, d []byte) bool {
		if h, _, err := prospero.ParseHeader(d); err == nil && h.Seq == 0 {
			if acks++; acks == 1 {
				return false
			}
		}
		return true
	}}})
	f := quick()
	f.Window = -1
	_, b, err := get(t, f, "prospero://"+s.Addr()+"/AFTP/pub/big.txt")
	if err != nil || string(b) != prosperod.Fixture()["ftp/pub/big.txt"] {
		t.Fatalf("%v, %d bytes", err, len(b))
	}
	if reqs := s.Requests(); len(reqs) != 2 {
		t.Errorf("%d requests run, want 2 (the contents' again answered from the done queue)", len(reqs))
	}
}

// The server's wait hint holds the client's retransmission back; a wait
// longer than MaxWait, and a refusal, end the retrieval.
func TestWaitAndRefusal(t *testing.T) {
	s := serve(t, &prosperod.Server{Faults: prosperod.Faults{Out: faulty(func(n int, h prospero.Header, d []byte) [][]byte {
		if n == 1 { // the first reply: say wait a second, and lose it
			return [][]byte{prospero.Header{ConnID: h.ConnID, Seq: 0, HasRcvd: true, Wait: 1, HasWait: true}.Append(nil)}
		}
		return [][]byte{d}
	})}})
	done := make(chan error, 1)
	go func() {
		_, _, err := get(t, quick(), "prospero://"+s.Addr()+"//srv/prospero/root/readme.txt")
		done <- err
	}()
	time.Sleep(500 * time.Millisecond)
	if n := s.Received(); n != 1 {
		t.Errorf("%d datagrams within half the wait the server asked for, want 1 (a time-out of 100 ms)", n)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	for name, h := range map[string]prospero.Header{
		"wait too long": {Seq: 0, HasRcvd: true, Wait: 3600, HasWait: true},
		"refused":       {Seq: 0, HasRcvd: true, HasWait: true, Option: prospero.OptCancel},
	} {
		s := serve(t, &prosperod.Server{Faults: prosperod.Faults{Out: faulty(func(n int, got prospero.Header, d []byte) [][]byte {
			h.ConnID = got.ConnID
			return [][]byte{h.Append(nil)}
		})}})
		_, _, err := get(t, quick(), "prospero://"+s.Addr()+"//srv/prospero/root/readme.txt")
		if want := map[string]error{"wait too long": protocols.ErrTemporary, "refused": protocols.ErrNetwork}[name]; !errors.Is(err, want) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestUnresolvedAndWarning(t *testing.T) {
	s := serve(t, &prosperod.Server{Reply: func(string) (string, bool) {
		return "WARNING OUT-OF-DATE the catalog is old\nLINK  L FILE a INTERNET-D H ASCII 'AFTP/a' 0\nUNRESOLVED b c\n", true
	}})
	resp, _, err := get(t, quick(), "prospero://"+s.Addr()+"/AFTP/x")
	if err != nil || !strings.Contains(resp.Note, "OUT-OF-DATE the catalog is old") || !strings.Contains(resp.Note, "unresolved: b c") || len(resp.Entries) != 1 {
		t.Errorf("%v %+v", err, resp)
	}
}
