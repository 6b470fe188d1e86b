package wais

import (
	"errors"
	"fmt"
	"strconv"
)

// Tags of the Z39.50 part and of the WAIS block (notes §5).
const (
	TagReferenceID      = 2
	TagProtocolVersion  = 3
	TagOptions          = 4
	TagPreferredSize    = 5
	TagMaxRecordSize    = 6
	TagResultSetName    = 17
	TagDatabaseNames    = 18
	TagElementSetNames  = 19
	TagQueryType        = 20
	TagQuery            = 21
	TagPresentStatus    = 27
	TagAttributeList    = 44
	TagTerm             = 45
	TagOperator         = 46
	TagUserInformation  = 99
	TagSeedWords        = 106
	TagDateFactor       = 111
	TagMaxDocuments     = 114
	TagDocumentID       = 116
	TagVersionNumber    = 117
	TagScore            = 118
	TagBestMatch        = 119
	TagDocumentLength   = 120
	TagSource           = 121
	TagDate             = 122
	TagHeadline         = 123
	TagDocumentText     = 127
	TagLines            = 131
	TagTypeBlock        = 132
	TagType             = 133
	TagDocumentHeader   = 150
	TagDocumentTextGrp  = 153
	defaultMessageSize  = 100000
	defaultMaxDocuments = 40
)

// InitRequest is the Init the classic client sends (notes §6): protocol
// version 1, the search option only, and size as both the preferred
// message size and the maximum record size.
func InitRequest(size int) *APDU {
	return &APDU{PDU: PDUInit, Fields: []Field{
		{TagProtocolVersion, []byte{0x80}},
		{TagOptions, []byte{0x80}},
		{TagPreferredSize, Num(int64(size))},
		{TagMaxRecordSize, Num(int64(size))},
	}}
}

// InitResult returns the Result byte of an InitResponse: 1 accepted.
func InitResult(a *APDU) (byte, error) {
	if a.PDU != PDUInitResponse {
		return 0, fmt.Errorf("PDU %d in reply to Init", a.PDU)
	}
	return a.Fixed[0], nil
}

// SearchRequest is a keyword search, query type "3" (notes §7), with the
// set bounds the classic client sends.
func SearchRequest(database, seedWords string, maxDocs int) *APDU {
	block := MarshalFields([]Field{
		{TagSeedWords, []byte(seedWords)},
		{TagDateFactor, Num(1)},
		{TagMaxDocuments, Num(int64(maxDocs))},
	})
	return &APDU{
		PDU:   PDUSearch,
		Fixed: append(append(append(fixed3(30), fixed3(5000)...), fixed3(30)...), 1),
		Fields: []Field{
			{TagResultSetName, nil},
			{TagDatabaseNames, []byte(database)},
			{TagQueryType, []byte("3")},
		},
		Ext: &Field{TagUserInformation, block},
	}
}

// Chunk units of a retrieval.
const (
	UnitBytes = "wb"
	UnitLines = "wl"
)

// RetrievalRequest is a retrieval, query type "1" (notes §9): docid AND
// type AND position >= start AND position < end, in unit (UnitBytes or
// UnitLines), with the fields the classic clients send.
func RetrievalRequest(database string, docid []byte, typ, unit string, start, end int64) *APDU {
	attr := func(use, rel string) Field {
		return Field{TagAttributeList, []byte(use + " " + rel + " ig ig ig ig")}
	}
	and := Field{TagOperator, []byte("a")}
	query := MarshalFields([]Field{
		attr("un", "re"), {TagTerm, docid},
		attr("wt", "re"), {TagTerm, []byte(typ)}, and,
		attr(unit, "ro"), {TagTerm, strconv.AppendInt(nil, start, 10)}, and,
		attr(unit, "rl"), {TagTerm, strconv.AppendInt(nil, end, 10)}, and,
	})
	return &APDU{
		PDU:   PDUSearch,
		Fixed: append(append(append(fixed3(10), fixed3(16)...), fixed3(15)...), 1),
		Fields: []Field{
			{TagResultSetName, []byte("FOO")},
			{TagDatabaseNames, []byte(database)},
			{TagQueryType, []byte("1")},
			{TagElementSetNames, []byte(" \x1fDocument Text")},
			{TagReferenceID, []byte("3")},
		},
		Ext: &Field{TagQuery, query},
	}
}

// DocumentHeader is one search hit (tag 150, notes §8.1).
type DocumentHeader struct {
	DocID     []byte // nil when the hit has none: it cannot be fetched
	Version   int64
	Score     int64
	BestMatch int64
	Length    int64 // bytes; -1 when not given
	Lines     int64 // -1 when not given
	Types     []string
	Source    string
	Date      string
	Headline  string
}

// Type returns the first type of the hit, TEXT when it names none.
func (h *DocumentHeader) Type() string {
	if len(h.Types) > 0 && h.Types[0] != "" {
		return h.Types[0]
	}
	return "TEXT"
}

// DocumentText is one retrieved chunk (tag 153, notes §8.2).
type DocumentText struct {
	DocID   []byte
	Version int64
	Text    []byte
	HasText bool // the group carried a DocumentText field, even an empty one
}

// SearchResponse is the decoded reply to a Search of either type.
type SearchResponse struct {
	Status      byte // SearchStatus: unreliable, never interpreted
	Records     int  // NumberOfRecordsReturned: not used for parsing
	ReferenceID []byte
	Headers     []DocumentHeader
	Texts       []DocumentText
	Diagnostics []Diagnostic
}

// ParseSearchResponse decodes a SearchResponse body. Unknown tags are
// skipped by their length.
func ParseSearchResponse(body []byte) (*SearchResponse, error) {
	a, err := ParseAPDU(body)
	if err != nil {
		return nil, err
	}
	if a.PDU != PDUSearchResponse {
		return nil, fmt.Errorf("PDU %d where a SearchResponse belongs", a.PDU)
	}
	r := &SearchResponse{Status: a.Fixed[0], Records: get3(a.Fixed[4:7])}
	r.ReferenceID, _ = a.Field(TagReferenceID)
	if a.Ext == nil {
		return r, nil
	}
	if a.Ext.Tag != TagUserInformation {
		return nil, fmt.Errorf("extension tag %d, want %d", a.Ext.Tag, TagUserInformation)
	}
	es, err := ParseBlock(a.Ext.Value)
	if err != nil {
		return nil, fmt.Errorf("WAIS block: %w", err)
	}
	for _, e := range es {
		switch {
		case e.Diag != nil:
			r.Diagnostics = append(r.Diagnostics, *e.Diag)
		case e.Tag == TagDocumentHeader:
			h, err := parseHeader(e.Value)
			if err != nil {
				return nil, fmt.Errorf("document header %d: %w", len(r.Headers)+1, err)
			}
			r.Headers = append(r.Headers, h)
		case e.Tag == TagDocumentTextGrp:
			t, err := parseText(e.Value)
			if err != nil {
				return nil, fmt.Errorf("document text: %w", err)
			}
			r.Texts = append(r.Texts, t)
		}
	}
	return r, nil
}

func parseHeader(b []byte) (DocumentHeader, error) {
	h := DocumentHeader{Length: -1, Lines: -1}
	fs, err := ParseFields(b)
	if err != nil {
		return h, err
	}
	for _, f := range fs {
		var err error
		switch f.Tag {
		case TagDocumentID:
			h.DocID = f.Value
		case TagVersionNumber:
			h.Version, err = ParseNum(f.Value)
		case TagScore:
			h.Score, err = ParseNum(f.Value)
		case TagBestMatch:
			h.BestMatch, err = ParseNum(f.Value)
		case TagDocumentLength:
			h.Length, err = ParseNum(f.Value)
		case TagLines:
			h.Lines, err = ParseNum(f.Value)
		case TagTypeBlock:
			var ts []Field
			if ts, err = ParseFields(f.Value); err == nil {
				for _, t := range ts {
					if t.Tag == TagType {
						h.Types = append(h.Types, string(t.Value))
					}
				}
			}
		case TagSource:
			h.Source = string(f.Value)
		case TagDate:
			h.Date = string(f.Value)
		case TagHeadline:
			h.Headline = string(f.Value)
		}
		if err != nil {
			return h, fmt.Errorf("tag %d: %w", f.Tag, err)
		}
	}
	return h, nil
}

func parseText(b []byte) (DocumentText, error) {
	var t DocumentText
	fs, err := ParseFields(b)
	if err != nil {
		return t, err
	}
	for _, f := range fs {
		switch f.Tag {
		case TagDocumentID:
			t.DocID = f.Value
		case TagVersionNumber:
			if t.Version, err = ParseNum(f.Value); err != nil {
				return t, fmt.Errorf("tag %d: %w", f.Tag, err)
			}
		case TagDocumentText:
			t.Text, t.HasText = f.Value, true
		}
	}
	return t, nil
}

// errNoReply is a header-only reply (notes §2): the server had nothing to
// say, for an unsupported PDU or a reply over the negotiated size.
var errNoReply = errors.New("server sent an empty reply")
