package wais

import (
	"errors"
	"fmt"
	"io"
	"strconv"
)

// HeaderSize is the size of the ASCII header before every message body.
const HeaderSize = 25

// MaxBody is the largest message body read: the size this client announces
// in Init (100000 bytes, which is also freeWAIS's buffer) with room for
// servers that round up. A larger length field ends the exchange before
// anything is read.
const MaxBody = 1 << 20

// Header is the 25-byte header of a message (notes §2).
type Header struct {
	Length      int      // body length
	Type        byte     // 'z' for a Z39.50 APDU
	Version     byte     // '2'
	Server      [10]byte // free text, space padded
	Compression byte     // ' ' none
	Encoding    byte     // ' ' none
	Checksum    byte     // '0', never computed
}

// DefaultHeader returns the header a client sends for a body of n bytes:
// "0000000041z2wais        0".
func DefaultHeader(n int) Header {
	h := Header{Length: n, Type: 'z', Version: '2', Compression: ' ', Encoding: ' ', Checksum: '0'}
	copy(h.Server[:], "wais      ")
	return h
}

// Marshal returns the 25 header bytes.
func (h Header) Marshal() []byte {
	b := make([]byte, 0, HeaderSize)
	b = fmt.Appendf(b, "%010d", h.Length)
	b = append(b, h.Type, h.Version)
	b = append(b, h.Server[:]...)
	return append(b, h.Compression, h.Encoding, h.Checksum)
}

// ParseHeader reads a header. The length must be ten ASCII digits no
// larger than max.
func ParseHeader(b []byte, max int) (Header, error) {
	var h Header
	if len(b) != HeaderSize {
		return h, fmt.Errorf("header of %d bytes, want %d", len(b), HeaderSize)
	}
	for _, c := range b[:10] {
		if c < '0' || c > '9' {
			return h, fmt.Errorf("header length %q is not ten digits", b[:10])
		}
	}
	n, _ := strconv.ParseInt(string(b[:10]), 10, 64)
	if n > int64(max) {
		return h, fmt.Errorf("body of %d bytes exceeds the limit of %d", n, max)
	}
	h.Length = int(n)
	h.Type, h.Version = b[10], b[11]
	copy(h.Server[:], b[12:22])
	h.Compression, h.Encoding, h.Checksum = b[22], b[23], b[24]
	return h, nil
}

// ReadMessage reads one message: exactly 25 header bytes, then the body,
// into buf when it is large enough (so that a stream of replies reuses one
// buffer). A body longer than max is refused before it is read.
func ReadMessage(r io.Reader, max int, buf []byte) (Header, []byte, error) {
	var hb [HeaderSize]byte
	if _, err := io.ReadFull(r, hb[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return Header{}, nil, errClosed
		}
		return Header{}, nil, err
	}
	h, err := ParseHeader(hb[:], max)
	if err != nil {
		return h, nil, &FormatError{What: "header", Err: err}
	}
	body := buf[:0]
	if cap(body) < h.Length {
		body = make([]byte, h.Length)
	}
	body = body[:h.Length]
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return h, nil, fmt.Errorf("connection closed after %d of %d reply bytes: %w", HeaderSize, HeaderSize+h.Length, io.ErrUnexpectedEOF)
		}
		return h, nil, err
	}
	return h, body, nil
}

// errClosed is a connection closed before a reply began.
var errClosed = errors.New("server closed the connection without replying")

// FormatError is a message that does not follow the encoding.
type FormatError struct {
	What string // the part being read
	Err  error
}

// Error names the part malformed and why.
func (e *FormatError) Error() string { return "malformed " + e.What + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *FormatError) Unwrap() error { return e.Err }

// AppendCI appends the compressed integer v (notes §3.1): base 128, most
// significant group first, the high bit set on every byte but the last.
func AppendCI(b []byte, v int) []byte {
	var tmp [5]byte
	i := len(tmp) - 1
	tmp[i] = byte(v & 0x7f)
	for v >>= 7; v > 0; v >>= 7 {
		i--
		tmp[i] = byte(v&0x7f) | 0x80
	}
	return append(b, tmp[i:]...)
}

// ReadCI decodes a compressed integer at the start of b and returns it and
// the bytes it took. Leading 0x80 bytes are accepted; more than four bytes
// are not.
func ReadCI(b []byte) (int, int, error) {
	v := 0
	for i := 0; i < len(b); i++ {
		if i == 4 {
			return 0, 0, errors.New("compressed integer longer than 4 bytes")
		}
		v = v<<7 | int(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errors.New("compressed integer cut off")
}

// Num returns the minimal big-endian bytes of v (notes §3.3): one byte
// below 256, two below 65536, and so on; zero is one byte.
func Num(v int64) []byte {
	switch {
	case v < 1<<8:
		return []byte{byte(v)}
	case v < 1<<16:
		return []byte{byte(v >> 8), byte(v)}
	case v < 1<<24:
		return []byte{byte(v >> 16), byte(v >> 8), byte(v)}
	}
	return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
}

// ParseNum reads a number of one to four bytes.
func ParseNum(b []byte) (int64, error) {
	if len(b) < 1 || len(b) > 4 {
		return 0, fmt.Errorf("number of %d bytes", len(b))
	}
	var v int64
	for _, c := range b {
		v = v<<8 | int64(c)
	}
	return v, nil
}

// Field is one tagged field: tag, and the value bytes (for a group, its
// encoded fields).
type Field struct {
	Tag   int
	Value []byte
}

// AppendField appends tag, length and value.
func AppendField(b []byte, tag int, value []byte) []byte {
	b = AppendCI(b, tag)
	b = AppendCI(b, len(value))
	return append(b, value...)
}

// readField reads one tagged field at the start of b.
func readField(b []byte) (Field, int, error) {
	tag, n, err := ReadCI(b)
	if err != nil {
		return Field{}, 0, fmt.Errorf("tag: %w", err)
	}
	l, m, err := ReadCI(b[n:])
	if err != nil {
		return Field{}, 0, fmt.Errorf("length of tag %d: %w", tag, err)
	}
	if l > len(b)-n-m {
		return Field{}, 0, fmt.Errorf("tag %d claims %d bytes, %d left", tag, l, len(b)-n-m)
	}
	return Field{Tag: tag, Value: b[n+m : n+m+l]}, n + m + l, nil
}

// ParseFields splits b into tagged fields.
func ParseFields(b []byte) ([]Field, error) {
	var fs []Field
	for len(b) > 0 {
		f, n, err := readField(b)
		if err != nil {
			return nil, err
		}
		fs = append(fs, f)
		b = b[n:]
	}
	return fs, nil
}

// MarshalFields encodes fields in order.
func MarshalFields(fs []Field) []byte {
	var b []byte
	for _, f := range fs {
		b = AppendField(b, f.Tag, f.Value)
	}
	return b
}

// Diagnostic is a diagnostic record (notes §10): a two-character code such
// as "S1" or "SF", the server's text, and the surrogate flag.
type Diagnostic struct {
	Code      string
	Info      string
	Surrogate byte
}

// String gives the diagnostic's code and text.
func (d Diagnostic) String() string { return "Diagnostic " + d.Code + ": " + d.Info }

// tagDiagnostic starts a diagnostic record inside a WAIS block.
const tagDiagnostic = 28

// Element is one element of a WAIS block: a tagged field, or a diagnostic
// record when Diag is set.
type Element struct {
	Field
	Diag *Diagnostic
}

// ParseBlock walks a WAIS block: byte 1c starts a diagnostic record (a
// 2-byte binary length, code, text, surrogate flag, then 1d outside the
// length); anything else is a tagged field.
func ParseBlock(b []byte) ([]Element, error) {
	var es []Element
	for len(b) > 0 {
		if b[0] == tagDiagnostic {
			if len(b) < 3 {
				return nil, errors.New("diagnostic record cut off")
			}
			n := int(b[1])<<8 | int(b[2])
			if n < 3 || len(b) < 3+n+1 {
				return nil, fmt.Errorf("diagnostic record of %d bytes, %d left", n, len(b)-3)
			}
			rec := b[3 : 3+n]
			if b[3+n] != 0x1d {
				return nil, fmt.Errorf("diagnostic record ends with %#02x, not 1d", b[3+n])
			}
			es = append(es, Element{Diag: &Diagnostic{Code: string(rec[:2]), Info: string(rec[2 : n-1]), Surrogate: rec[n-1]}})
			b = b[3+n+1:]
			continue
		}
		f, n, err := readField(b)
		if err != nil {
			return nil, err
		}
		es = append(es, Element{Field: f})
		b = b[n:]
	}
	return es, nil
}

// MarshalBlock encodes the elements of a WAIS block.
func MarshalBlock(es []Element) []byte {
	var b []byte
	for _, e := range es {
		if d := e.Diag; d != nil {
			n := len(d.Code) + len(d.Info) + 1
			b = append(b, tagDiagnostic, byte(n>>8), byte(n))
			b = append(b, d.Code...)
			b = append(b, d.Info...)
			b = append(b, d.Surrogate, 0x1d)
			continue
		}
		b = AppendField(b, e.Tag, e.Value)
	}
	return b
}

// PDU types (notes §4).
const (
	PDUInit           = 20
	PDUInitResponse   = 21
	PDUSearch         = 22
	PDUSearchResponse = 23
)

// fixedSize is the size of the fixed fields after each PDU byte.
var fixedSize = map[byte]int{PDUInit: 0, PDUInitResponse: 1, PDUSearch: 10, PDUSearchResponse: 10}

// APDU is a message body: the PDU type, its fixed fields, the tagged
// fields of the Z39.50 part, and the WAIS extension (tag 99 or 21) if any.
type APDU struct {
	PDU    byte
	Fixed  []byte
	Fields []Field
	Ext    *Field
}

// ParseAPDU splits a body into its parts (notes §4): a 2-byte length L,
// the Z39.50 part of L bytes, and at most one tagged field after it.
func ParseAPDU(body []byte) (*APDU, error) {
	if len(body) < 3 {
		return nil, fmt.Errorf("body of %d bytes", len(body))
	}
	l := int(body[0])<<8 | int(body[1])
	if l < 1 || 2+l > len(body) {
		return nil, fmt.Errorf("Z39.50 part of %d bytes in a body of %d", l, len(body))
	}
	part := body[2 : 2+l]
	a := &APDU{PDU: part[0]}
	fs, ok := fixedSize[a.PDU]
	if !ok {
		return nil, fmt.Errorf("unknown PDU type %d", a.PDU)
	}
	if len(part) < 1+fs {
		return nil, fmt.Errorf("PDU %d cut off in its fixed fields", a.PDU)
	}
	a.Fixed = part[1 : 1+fs]
	var err error
	if a.Fields, err = ParseFields(part[1+fs:]); err != nil {
		return nil, err
	}
	if rest := body[2+l:]; len(rest) > 0 {
		f, n, err := readField(rest)
		if err != nil {
			return nil, fmt.Errorf("extension: %w", err)
		}
		if n != len(rest) {
			return nil, fmt.Errorf("%d bytes after the extension", len(rest)-n)
		}
		a.Ext = &f
	}
	return a, nil
}

// Marshal encodes the body.
func (a *APDU) Marshal() []byte {
	part := append([]byte{a.PDU}, a.Fixed...)
	part = append(part, MarshalFields(a.Fields)...)
	b := append([]byte{byte(len(part) >> 8), byte(len(part))}, part...)
	if a.Ext != nil {
		b = AppendField(b, a.Ext.Tag, a.Ext.Value)
	}
	return b
}

// Field returns the first field with tag in the Z39.50 part.
func (a *APDU) Field(tag int) ([]byte, bool) {
	for _, f := range a.Fields {
		if f.Tag == tag {
			return f.Value, true
		}
	}
	return nil, false
}

// Message returns header and body as sent on the wire, with the client's
// default header.
func Message(body []byte) []byte {
	return append(DefaultHeader(len(body)).Marshal(), body...)
}

// fixed3 is a 3-byte fixed field.
func fixed3(v int) []byte { return []byte{byte(v >> 16), byte(v >> 8), byte(v)} }

func get3(b []byte) int { return int(b[0])<<16 | int(b[1])<<8 | int(b[2]) }
