// Package waisd is an in-process WAIS server that answers as freeWAIS-sf
// 2.2.8 does, following the rules of the protocol notes' §17: its replies
// to the captured requests are the captured replies, byte for byte (the
// tests check it). It serves database "test" with the three sample
// documents and the catalog, plus any documents added, and scripts the
// faults of §17.5.
package waisd

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/protocols/wais"
)

// The sample documents of the notes (§15).
const (
	Alpha = "Alpha document about gophers\nThe gopher protocol is a simple menu based protocol.\nGophers also live underground and eat roots.\n"
	Beta  = "Beta document about WAIS\nWAIS means Wide Area Information Servers.\nIt uses Z39.50 over TCP port 210 and relevance ranked search.\nThe WAIS client sends seed words and receives document headers.\n"
)

// Gamma returns gamma.txt: 12842 bytes, 201 lines.
func Gamma() string {
	var b strings.Builder
	b.WriteString("Gamma long document for chunked retrieval\n")
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&b, "Gamma long document line %03d about retrieval chunks and gophers\n", i)
	}
	return b.String()
}

// Catalog is the text of the catalog pseudo document (§17.4).
const Catalog = "Catalog for database: /srv/wais/idx/test\nDate: Nov 22 11:14:58 2026\n3 total documents\n\n" +
	"Document # 1\nHeadline: alpha.txt   /srv/wais/docs/\nDocID: 0 127 /srv/wais/docs/alpha.txt\n\n" +
	"Document # 2\nHeadline: beta.txt   /srv/wais/docs/\nDocID: 0 193 /srv/wais/docs/beta.txt\n\n" +
	"Document # 3\nHeadline: gamma.txt   /srv/wais/docs/\nDocID: 0 12842 /srv/wais/docs/gamma.txt\n\n"

// Doc is a document of database "test".
type Doc struct {
	Name  string // file name under /srv/wais/docs/
	Size  int64
	Lines int64
	Data  io.ReaderAt
}

// Fault is a scripted misbehaviour.
type Fault int

// Faults (§17.5 and beyond).
const (
	NoFault      Fault = iota
	CloseFault         // close the connection instead of replying
	TruncFault         // send half the reply, then close
	LengthFault        // a header claiming a body of 9999999999 bytes
	StallFault         // never answer
	GarbageFault       // a reply whose WAIS block has a field longer than itself
	EmptyFault         // a header-only reply
)

// Server is a WAIS server on a loopback port.
type Server struct {
	// Fault is applied to every reply after the first FaultAfter replies
	// of each connection.
	Fault      Fault
	FaultAfter int

	mu   sync.Mutex
	docs map[string]*Doc // by name
	hits map[string][]hit
	ln   net.Listener
	// requests counts the requests received.
	requests int
}

type hit struct {
	name  string
	score int64
}

// New returns a server of database "test" with the sample documents.
func New() *Server {
	s := &Server{docs: map[string]*Doc{}}
	s.Add("alpha.txt", Alpha)
	s.Add("beta.txt", Beta)
	s.Add("gamma.txt", Gamma())
	// The hits the real server returned (§17.2).
	s.hits = map[string][]hit{
		"gophers":         {{"alpha.txt", 191}, {"gamma.txt", 88}},
		"gopher":          {{"alpha.txt", 286}},
		"protocol":        {{"alpha.txt", 382}},
		"gopher protocol": {{"alpha.txt", 669}},
		"retrieval":       {{"gamma.txt", 177}},
		"document":        {{"alpha.txt", 59}, {"beta.txt", 59}, {"gamma.txt", 36}},
		"wais":            {{"beta.txt", 79}, {"alpha.txt", 59}, {"gamma.txt", 18}},
		"gophers wais":    {{"alpha.txt", 250}, {"gamma.txt", 106}, {"beta.txt", 79}},
	}
	return s
}

// Add adds a text document.
func (s *Server) Add(name, text string) {
	s.AddDoc(&Doc{Name: name, Size: int64(len(text)), Lines: int64(strings.Count(text, "\n")), Data: strings.NewReader(text)})
}

// AddDoc adds a document, and a search for its name that finds it with
// score 1000.
func (s *Server) AddDoc(d *Doc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.docs[d.Name] = d
	if s.hits != nil {
		s.hits[strings.ToLower(d.Name)] = []hit{{d.Name, 1000}}
	}
}

// Start listens on a free port of 127.0.0.1.
func (s *Server) Start() error {
	return testserver.ListenInto(&s.ln, s.serve)
}

// Addr is host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops listening.
func (s *Server) Close() error { return s.ln.Close() }

// Requests returns how many requests the server has read.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// errHangUp closes the connection without a reply, as the real server's
// per-connection process does when it dies on a request (§13.5).
var errHangUp = errors.New("hang up")

func (s *Server) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	limit := 100000
	for n := 0; ; n++ {
		c.SetDeadline(time.Now().Add(time.Minute))
		var hb [wais.HeaderSize]byte
		if _, err := io.ReadFull(br, hb[:]); err != nil {
			return
		}
		h, err := wais.ParseHeader(hb[:], 100000)
		if err != nil || h.Version > '2' {
			return
		}
		body := make([]byte, h.Length)
		if _, err := io.ReadFull(br, body); err != nil {
			return
		}
		s.mu.Lock()
		s.requests++
		s.mu.Unlock()
		reply, newLimit, err := s.answer(body, limit)
		if err != nil {
			return
		}
		if newLimit > 0 {
			limit = newLimit
		}
		if len(reply) > limit {
			reply = nil
		}
		msg := append(replyHeader(hb[:], len(reply)), reply...)
		if n >= s.FaultAfter {
			switch s.Fault {
			case CloseFault:
				return
			case TruncFault:
				c.Write(msg[:len(msg)/2])
				return
			case LengthFault:
				copy(msg, "9999999999")
			case StallFault:
				time.Sleep(time.Minute)
				return
			case GarbageFault:
				msg = append(replyHeader(hb[:], 16), "\x00\x0b\x17\x00\x00\x00\x00\x00\x00\x00\x00\x00\x63\x02\x81\x16"...)
			case EmptyFault:
				msg = replyHeader(hb[:], 0)
			}
		}
		if _, err := c.Write(msg); err != nil {
			return
		}
	}
}

// replyHeader echoes bytes 10 to 23 of the request's header, the letters
// lowercased, after the length; the checksum is "0" (§17.1).
func replyHeader(req []byte, n int) []byte {
	h := fmt.Appendf(nil, "%010d", n)
	echo := bytes.Clone(req[10:24])
	for _, i := range []int{0, 1, 12, 13} {
		if c := echo[i]; 'A' <= c && c <= 'Z' {
			echo[i] = c + 'a' - 'A'
		}
	}
	return append(append(h, echo...), '0')
}

func (s *Server) answer(body []byte, limit int) ([]byte, int, error) {
	a, err := wais.ParseAPDU(body)
	if err != nil {
		if len(body) >= 3 && body[2] != wais.PDUInit && body[2] != wais.PDUSearch {
			return nil, 0, nil // a PDU it does not implement: header only
		}
		return nil, 0, errHangUp
	}
	switch a.PDU {
	case wais.PDUInit:
		return s.init(a)
	case wais.PDUSearch:
		qt, _ := a.Field(wais.TagQueryType)
		db, _ := a.Field(wais.TagDatabaseNames)
		switch string(qt) {
		case "3":
			return s.search(string(db), a), 0, nil
		case "1":
			r, err := s.retrieve(string(db), a)
			return r, 0, err
		}
		return nil, 0, errHangUp
	}
	return nil, 0, nil
}

// init answers as 16.1, echoing the sizes capped at 100000.
func (s *Server) init(a *wais.APDU) ([]byte, int, error) {
	size := int64(100000)
	for _, tag := range []int{wais.TagPreferredSize, wais.TagMaxRecordSize} {
		if v, ok := a.Field(tag); ok {
			if n, err := wais.ParseNum(v); err == nil && n < size {
				size = n
			}
		}
	}
	r := &wais.APDU{PDU: wais.PDUInitResponse, Fixed: []byte{1}, Fields: []wais.Field{
		{Tag: wais.TagProtocolVersion, Value: []byte{0x80}},
		{Tag: wais.TagOptions, Value: []byte{0x80}},
		{Tag: wais.TagPreferredSize, Value: wais.Num(size)},
		{Tag: wais.TagMaxRecordSize, Value: wais.Num(size)},
		{Tag: 8, Value: []byte("LS6")},
		{Tag: 9, Value: []byte("University of Dortmund Informatik VI")},
		{Tag: 10, Value: []byte("2.2.8 string")},
	}, Ext: &wais.Field{Tag: wais.TagUserInformation, Value: []byte{0x64, 0x01, 0x00, 0x65, 0x01, 0x00}}}
	return r.Marshal(), int(size), nil
}

func field(tag int, v []byte) []byte { return wais.AppendField(nil, tag, v) }

func (s *Server) docID(d *Doc) []byte {
	local := fmt.Sprintf("0 %d /srv/wais/docs/%s", d.Size, d.Name)
	var b []byte
	for i, v := range []string{"localhost:2110", "/srv/wais/idx/test", local, "localhost:2110", "/srv/wais/idx/test", local} {
		b = wais.AppendField(b, i+1, []byte(v))
	}
	return wais.AppendField(b, 7, []byte{0})
}

func catalogID(db string) []byte {
	b := field(2, []byte(db))
	b = append(b, field(3, []byte("0 0 /srv/wais/idx/"+db+".cat"))...)
	return append(b, field(7, []byte{0})...)
}

func searchResponse(status byte, records int, refID []byte, block []byte) []byte {
	fixed := []byte{status, 0, 0, 0, byte(records >> 16), byte(records >> 8), byte(records), 0, 0, 0}
	fs := []wais.Field{{Tag: wais.TagPresentStatus, Value: []byte{0}}}
	if refID != nil {
		fs = append(fs, wais.Field{Tag: wais.TagReferenceID, Value: refID})
	}
	a := &wais.APDU{PDU: wais.PDUSearchResponse, Fixed: fixed, Fields: fs, Ext: &wais.Field{Tag: wais.TagUserInformation, Value: block}}
	return a.Marshal()
}

func diag(code, info string, surrogate byte) []byte {
	return wais.MarshalBlock([]wais.Element{{Diag: &wais.Diagnostic{Code: code, Info: info, Surrogate: surrogate}}})
}

var textType = field(wais.TagTypeBlock, field(wais.TagType, []byte("TEXT")))

func (s *Server) search(db string, a *wais.APDU) []byte {
	if db != "test" {
		return searchResponse(0, 1, nil, diag("S1", "The following database is not available: /srv/wais/idx/"+db, 0))
	}
	var seed []byte
	maxDocs := int64(40)
	if a.Ext != nil {
		if fs, err := wais.ParseFields(a.Ext.Value); err == nil {
			for _, f := range fs {
				switch f.Tag {
				case wais.TagSeedWords:
					seed = f.Value
				case wais.TagMaxDocuments:
					maxDocs, _ = wais.ParseNum(f.Value)
				}
			}
		}
	}
	s.mu.Lock()
	hits := s.hits[strings.ToLower(string(seed))]
	var block []byte
	n := 0
	for _, h := range hits {
		if int64(n) >= maxDocs {
			break
		}
		d := s.docs[h.name]
		var g []byte
		g = append(g, field(wais.TagDocumentID, s.docID(d))...)
		g = append(g, field(wais.TagScore, wais.Num(h.score))...)
		g = append(g, field(wais.TagBestMatch, []byte{0})...)
		g = append(g, field(wais.TagDocumentLength, wais.Num(d.Size))...)
		g = append(g, field(wais.TagLines, wais.Num(d.Lines))...)
		g = append(g, textType...)
		g = append(g, field(wais.TagSource, []byte("/srv/wais/idx/test"))...)
		g = append(g, field(wais.TagDate, []byte("0"))...)
		g = append(g, field(wais.TagHeadline, []byte(d.Name+"   /srv/wais/docs/"))...)
		block = append(block, field(wais.TagDocumentHeader, g)...)
		n++
	}
	s.mu.Unlock()
	if n == 0 {
		var g []byte
		g = append(g, field(wais.TagDocumentID, catalogID(db))...)
		g = append(g, field(wais.TagScore, []byte{0})...)
		g = append(g, field(wais.TagDocumentLength, wais.Num(int64(len(Catalog))))...)
		g = append(g, field(wais.TagLines, wais.Num(17))...)
		g = append(g, textType...)
		g = append(g, field(wais.TagSource, []byte(db))...)
		g = append(g, field(wais.TagHeadline, []byte("Search produced no result. Here's the Catalog for database: "+db))...)
		block = field(wais.TagDocumentHeader, g)
		n = 1
	}
	return searchResponse(1, n, nil, block)
}

// query is a parsed type-1 query: docid, type and a range.
type query struct {
	docid      []byte
	typ        []byte
	hasType    bool
	unit       string
	start, end int64
	hasRange   bool
}

func parseQuery(b []byte) (*query, error) {
	fs, err := wais.ParseFields(b)
	if err != nil {
		return nil, err
	}
	q := &query{}
	var terms [][]byte
	var attrs []string
	for _, f := range fs {
		switch f.Tag {
		case wais.TagAttributeList:
			attrs = append(attrs, string(f.Value))
		case wais.TagTerm:
			terms = append(terms, f.Value)
		}
	}
	if len(terms) != len(attrs) {
		return nil, errors.New("terms and attribute lists do not pair")
	}
	var positions []int64
	for i, a := range attrs {
		use, _, _ := strings.Cut(a, " ")
		switch use {
		case "un":
			q.docid = terms[i]
		case "wt":
			q.typ, q.hasType = terms[i], true
		case "wb", "wl":
			if q.unit == "" {
				q.unit = use
			}
			v, err := strconv.ParseInt(string(terms[i]), 10, 64)
			if err != nil {
				return nil, err
			}
			positions = append(positions, v)
		}
	}
	if len(positions) == 2 {
		q.start, q.end, q.hasRange = positions[0], positions[1], true
	}
	return q, nil
}

func (s *Server) retrieve(db string, a *wais.APDU) ([]byte, error) {
	refID, _ := a.Field(wais.TagReferenceID)
	if a.Ext == nil || a.Ext.Tag != wais.TagQuery {
		return nil, errHangUp
	}
	q, err := parseQuery(a.Ext.Value)
	if err != nil || !q.hasType || db != "test" || len(q.docid) == 0 {
		return nil, errHangUp
	}
	if !q.hasRange {
		return searchResponse(0, 0, refID, nil), nil
	}
	if q.start > q.end {
		return nil, errHangUp
	}
	sf := func(info string) []byte { return searchResponse(0, 1, refID, diag("SF", info, 1)) }
	fs, err := wais.ParseFields(q.docid)
	if err != nil {
		return sf("Missing DocID in request"), nil
	}
	var local []byte
	hasDB := false
	for _, f := range fs {
		switch f.Tag {
		case 2:
			hasDB = true
		case 3:
			local = f.Value
		}
	}
	if !hasDB {
		return nil, errHangUp
	}
	var text string
	var data io.ReaderAt
	var size int64
	s.mu.Lock()
	for _, d := range s.docs {
		if string(local) == fmt.Sprintf("0 %d /srv/wais/docs/%s", d.Size, d.Name) {
			data, size = d.Data, d.Size
		}
	}
	s.mu.Unlock()
	if string(local) == "0 0 /srv/wais/idx/"+db+".cat" {
		text = Catalog
		data, size = strings.NewReader(text), int64(len(text))
	}
	if data == nil {
		return sf("Request out of range"), nil
	}
	var chunk []byte
	records := 0
	hasText, out := true, false
	if q.unit == "wl" {
		chunk = lines(data, size, q.start, q.end)
	} else {
		switch {
		case q.start > size:
			hasText, out = false, true
		default:
			end := min(q.end, size)
			chunk = make([]byte, end-q.start)
			data.ReadAt(chunk, q.start)
			out = q.end > size
		}
	}
	var block []byte
	if hasText {
		g := field(wais.TagDocumentID, q.docid)
		g = append(g, field(wais.TagVersionNumber, []byte{0})...)
		g = append(g, field(wais.TagDocumentText, chunk)...)
		block = field(wais.TagDocumentTextGrp, g)
		records++
	}
	if out {
		block = append(block, diag("SF", "Request out of range", 1)...)
		records++
	}
	return searchResponse(0, records, refID, block), nil
}

// lines returns lines [start,end) of the document, each with its LF.
func lines(data io.ReaderAt, size, start, end int64) []byte {
	all := make([]byte, size)
	data.ReadAt(all, 0)
	var out []byte
	n := int64(0)
	for len(all) > 0 && n < end {
		i := bytes.IndexByte(all, '\n')
		line := all
		if i >= 0 {
			line = all[:i+1]
		}
		if n >= start {
			out = append(out, line...)
		}
		all = all[len(line):]
		n++
	}
	return out
}

// ParseDump reads a hex dump in the layout of the protocol notes: a
// 4-digit hex offset, two spaces, up to 16 hex bytes, the ASCII column.
func ParseDump(text []byte) ([]byte, error) {
	var b []byte
	for _, line := range strings.Split(strings.TrimRight(string(text), "\n"), "\n") {
		if len(line) < 8 {
			return nil, fmt.Errorf("short line %q", line)
		}
		off, err := strconv.ParseInt(line[:4], 16, 64)
		if err != nil || int(off) != len(b) {
			return nil, fmt.Errorf("line %q at offset %d", line, len(b))
		}
		for _, h := range strings.Fields(line[6:min(len(line), 6+47)]) {
			v, err := hex.DecodeString(h)
			if err != nil || len(v) != 1 {
				return nil, fmt.Errorf("%q is not a hex byte", h)
			}
			b = append(b, v[0])
		}
	}
	return b, nil
}
