package url

import (
	"strconv"
	"strings"
)

// Character classes of RFC 1738 §2.2 and §5, one bit each.
const (
	clAlpha    = 1 << iota // a-z A-Z
	clDigit                // 0-9
	clSafe                 // $ - _ . +
	clExtra                // ! * ' ( ) ,
	clReserved             // ; / ? : @ & =
	clUnsafe               // space < > " # % { } | \ ^ ~ [ ] `
)

var classes [256]uint8

func init() {
	for c := 'a'; c <= 'z'; c++ {
		classes[c] = clAlpha
		classes[c-'a'+'A'] = clAlpha
	}
	for c := '0'; c <= '9'; c++ {
		classes[c] = clDigit
	}
	for _, c := range "$-_.+" {
		classes[c] = clSafe
	}
	for _, c := range "!*'()," {
		classes[c] = clExtra
	}
	for _, c := range ";/?:@&=" {
		classes[c] = clReserved
	}
	for _, c := range " <>\"#%{}|\\^~[]`" {
		classes[c] = clUnsafe
	}
}

// unreserved reports whether c may always stand unencoded (RFC 1738 §5).
func unreserved(c byte) bool { return classes[c]&(clAlpha|clDigit|clSafe|clExtra) != 0 }

// reserved reports whether c is one of the characters a scheme may reserve.
func reserved(c byte) bool { return classes[c]&clReserved != 0 }

// unsafeChar reports whether c must always be encoded: the unsafe
// characters, controls, space and every octet outside printable US-ASCII.
func unsafeChar(c byte) bool {
	return classes[c]&clUnsafe != 0 || c < 0x21 || c >= 0x7f
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

const upperhex = "0123456789ABCDEF"

// writeEscaped writes c as "%" and two upper-case hexadecimal digits.
func writeEscaped(b *strings.Builder, c byte) {
	b.WriteByte('%')
	b.WriteByte(upperhex[c>>4])
	b.WriteByte(upperhex[c&15])
}

// EscapeError reports a malformed %-escape: a "%" not followed by two
// hexadecimal digits (RFC 1630 reserves such sequences for future use).
type EscapeError struct {
	Offset int    // byte offset of the "%" within the text examined
	Text   string // the malformed sequence, at most three characters
}

// Error quotes the malformed escape and gives its offset.
func (e *EscapeError) Error() string {
	return "malformed escape " + strconv.Quote(e.Text) + " at offset " + strconv.Itoa(e.Offset)
}

// checkEscapes verifies that every "%" in s starts a valid escape. base is
// added to the offset reported.
func checkEscapes(s string, base int) error {
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		if i+2 >= len(s) || !ishex(s[i+1]) || !ishex(s[i+2]) {
			end := min(i+3, len(s))
			return &EscapeError{Offset: base + i, Text: s[i:end]}
		}
		i += 2
	}
	return nil
}

// Unescape decodes every %XX escape in s. A malformed escape is an
// *EscapeError naming its offset within s.
func Unescape(s string) (string, error) {
	n := strings.Count(s, "%")
	if n == 0 {
		return s, nil
	}
	if err := checkEscapes(s, 0); err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(s) - 2*n)
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String(), nil
}

// escape encodes every octet of s that is not unreserved and for which keep
// returns false.
func escape(s string, keep func(byte) bool) string {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !unreserved(c) && (keep == nil || !keep(c)) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) || keep != nil && keep(c) {
			b.WriteByte(c)
			continue
		}
		writeEscaped(&b, c)
	}
	return b.String()
}

// EscapeSegment encodes s for use as one hierarchical path segment (an FTP
// cwd or name, an HTTP or file segment): "/", ";", "?" and "#" are
// encoded, as is everything unsafe; ":", "@", "&" and "=" stay.
func EscapeSegment(s string) string {
	return escape(s, func(c byte) bool { return c == ':' || c == '@' || c == '&' || c == '=' })
}

// EscapeUserinfo encodes a user name or password: ":", "@" and "/" are
// encoded (RFC 1738 §3.1), and so is everything unsafe.
func EscapeUserinfo(s string) string {
	return escape(s, func(c byte) bool { return c == ';' || c == '?' || c == '&' || c == '=' })
}

// EscapeGopher encodes a Gopher selector, search or Gopher+ string. No
// character is reserved in a gopher-path (RFC 1738 §3.4.1), so only what is
// unsafe, and "?" (which other software takes for a query), is encoded.
func EscapeGopher(s string) string {
	return escape(s, func(c byte) bool { return reserved(c) && c != '?' })
}

// EscapeQuery encodes s for a search part: every reserved or unsafe
// character is encoded, and "+" stays literal (RFC 1738 gives it no
// meaning; a caller that wants "+" for space replaces it first).
func EscapeQuery(s string) string {
	return escape(s, nil)
}

// CheckArg returns an error if s holds a CR, LF or NUL. Every decoded value
// bound for a protocol command line passes it.
func CheckArg(part, s string) error {
	if i := strings.IndexAny(s, "\r\n\x00"); i >= 0 {
		return &PartError{Part: part, Msg: "decoded " + ctlName(s[i]) + " is not allowed", Offset: -1}
	}
	return nil
}

func ctlName(c byte) string {
	switch c {
	case '\r':
		return "CR"
	case '\n':
		return "LF"
	case 0:
		return "NUL"
	case '\t':
		return "TAB"
	}
	return strconv.QuoteRune(rune(c))
}
