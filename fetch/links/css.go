package links

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxCSSURL bounds a URL read from a style sheet: a longer one (a data:
// URL of an inlined image, most often) is passed over, never held.
const maxCSSURL = 8 << 10

// CSS returns the URLs a style sheet loads, read as a stream, never
// whole: those of url(...) (quoted or not) and of @import "..."; not what
// comments and other strings hold. Escapes are decoded as CSS has them
// ("\28" is "("). It returns 131,072 URLs at most.
func CSS(r io.Reader) ([]string, error) {
	links, err := CSSSpans(r)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(links))
	for i, l := range links {
		out[i] = l.URL
	}
	return out, nil
}

// CSSLink is a URL a style sheet loads (CSSSpans).
type CSSLink struct {
	URL string
	// Start and End are where the URL is written in the style sheet, as
	// byte offsets: between the quotes of a string, or in url( ) without
	// the white space around it; escapes are as written there.
	Start, End int64
	// Quote is the string's quote it is written in, or 0 in url( )
	// without one.
	Quote byte
}

// CSSSpans is CSS with where each URL is written, so that a
// copy of the style sheet can replace it.
func CSSSpans(r io.Reader) ([]CSSLink, error) {
	s := cssScanner{r: bufio.NewReader(r)}
	return s.links()
}

type cssScanner struct {
	r     *bufio.Reader
	pos   int64 // bytes read
	out   []CSSLink
	ident []byte // the name just read, lowered: "url", "import"
	at    bool   // the name began with "@"
}

// read reads a byte, counting it.
func (s *cssScanner) read() (byte, error) {
	c, err := s.r.ReadByte()
	if err == nil {
		s.pos++
	}
	return c, err
}

func (s *cssScanner) links() ([]CSSLink, error) {
	importing := false // after @import: a string is its URL
	for {
		c, err := s.read()
		if err != nil {
			return s.result(err)
		}
		switch {
		case c == '/':
			if n, _ := s.r.Peek(1); len(n) == 1 && n[0] == '*' {
				s.read()
				if err := s.comment(); err != nil {
					return s.result(err)
				}
				continue
			}
		case c == '"' || c == '\'':
			start := s.pos
			v, ok, err := s.str(c)
			if err != nil {
				return s.result(err)
			}
			if ok && (importing || s.at && string(s.ident) == "import") {
				s.add(v, start, s.pos-1, c)
			}
			importing = false
			s.ident = s.ident[:0]
			continue
		case c == '(':
			if !s.at && string(s.ident) == "url" {
				if err := s.url(); err != nil {
					return s.result(err)
				}
			}
			importing = false
		case c == '\\':
			s.read() // an escaped character: part of a name, never a delimiter
			continue
		case c == '@':
			s.ident, s.at = s.ident[:0], true
			continue
		case c == '-' || c == '_' || '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'z' || c >= 0x80:
			if len(s.ident) < 16 {
				s.ident = append(s.ident, c|0x20)
			}
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			if s.at && string(s.ident) == "import" {
				importing = true
			}
		default:
			importing = false
		}
		s.ident, s.at = s.ident[:0], false
	}
}

func (s *cssScanner) result(err error) ([]CSSLink, error) {
	if errors.Is(err, io.EOF) {
		return s.out, nil
	}
	return nil, err
}

// add adds the URL v, written from start to end.
func (s *cssScanner) add(v string, start, end int64, quote byte) {
	if v = strings.TrimSpace(v); v != "" && len(s.out) < maxLinks {
		s.out = append(s.out, CSSLink{v, start, end, quote})
	}
}

// comment reads to the end of a comment, its "/*" read.
func (s *cssScanner) comment() error {
	star := false
	for {
		c, err := s.read()
		if err != nil {
			return err
		}
		if star && c == '/' {
			return nil
		}
		star = c == '*'
	}
}

// str reads a string to its closing quote q, its opening one read; ok is
// false for one too long or ended by a newline (a bad string).
func (s *cssScanner) str(q byte) (v string, ok bool, err error) {
	var b []byte
	long := false
	for {
		c, err := s.read()
		if err != nil {
			return "", false, err
		}
		switch c {
		case q:
			return string(b), !long, nil
		case '\n':
			return "", false, nil
		case '\\':
			n, _ := s.r.Peek(1)
			if len(n) == 1 && n[0] == '\n' {
				s.read() // a line continued
				continue
			}
			if b, err = s.escape(b); err != nil {
				return "", false, err
			}
		default:
			b = append(b, c)
		}
		if len(b) > maxCSSURL {
			long, b = true, b[:0]
		}
	}
}

// url reads a url( )'s argument, "url(" read: a string, or the text to
// ")" with its white space around dropped.
func (s *cssScanner) url() error {
	c, err := s.skipSpace()
	if err != nil {
		return err
	}
	if c == '"' || c == '\'' {
		start := s.pos
		v, ok, err := s.str(c)
		if err != nil {
			return err
		}
		if ok {
			s.add(v, start, s.pos-1, c)
		}
		return nil
	}
	var b []byte
	long := false
	start, end := s.pos-1, s.pos-1 // c is read: where the URL starts, and where it ends so far
	for ; ; c, err = s.read() {
		if err != nil {
			return err
		}
		switch {
		case c == ')':
			if !long {
				s.add(string(b), start, end, 0)
			}
			return nil
		case c == '\\':
			if b, err = s.escape(b); err != nil {
				return err
			}
			end = s.pos
		case c == '"' || c == '\'' || c == '(':
			return nil // a bad url: passed over
		default:
			b = append(b, c)
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' {
				end = s.pos
			}
		}
		if len(b) > maxCSSURL {
			long, b = true, b[:0]
		}
	}
}

func (s *cssScanner) skipSpace() (byte, error) {
	for {
		c, err := s.read()
		if err != nil || (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f') {
			return c, err
		}
	}
}

// escape appends the character a backslash escapes, the backslash read:
// one to six hexadecimal digits and one white space after them, or the
// character itself.
func (s *cssScanner) escape(b []byte) ([]byte, error) {
	var hex []byte
	for len(hex) < 6 {
		n, err := s.r.Peek(1)
		if err != nil || !isHexDigit(n[0]) {
			break
		}
		s.read()
		hex = append(hex, n[0])
	}
	if len(hex) == 0 {
		c, err := s.read()
		if err != nil {
			return b, err
		}
		return append(b, c), nil
	}
	if n, _ := s.r.Peek(1); len(n) == 1 && (n[0] == ' ' || n[0] == '\t' || n[0] == '\n') {
		s.read()
	}
	v, _ := strconv.ParseUint(string(hex), 16, 32)
	if v == 0 || v > utf8.MaxRune || 0xD800 <= v && v <= 0xDFFF {
		v = utf8.RuneError
	}
	return utf8.AppendRune(b, rune(v)), nil
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f'
}
