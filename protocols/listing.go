package protocols

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/urlderef/deref/url"
)

// FormatEntry renders one listing entry in the format every scheme shares,
// one line per entry, fields separated by TAB:
//
//	kind  size  modification-time  name  URL  [target | description]
//
// kind is Kind's String: "file", "directory", "link", "search",
// "articles", "session" or "info"; size is "-" when unknown; the time is
// RFC 3339 in UTC or "-"; the URL is empty where the entry cannot be
// dereferenced. A link whose target is known has it as a sixth field,
// and an entry with a description (a newsgroup's, from LIST NEWSGROUPS)
// has that.
// TABs and line breaks inside the name and the target become spaces, and
// other control characters are escaped as Printable does.
func FormatEntry(e Entry) string {
	size := "-"
	if e.Size >= 0 {
		size = strconv.FormatInt(e.Size, 10)
	}
	mod := "-"
	if !e.ModTime.IsZero() {
		mod = e.ModTime.UTC().Format(time.RFC3339)
	}
	line := e.Kind.String() + "\t" + size + "\t" + mod + "\t" + oneField(e.Name) + "\t" + e.URL
	switch {
	case e.Kind == KindLink && e.Target != "":
		line += "\t" + oneField(e.Target)
	case e.Description != "":
		line += "\t" + oneField(e.Description)
	}
	return line
}

// oneField turns the TABs and line breaks of s into spaces, and escapes
// the other control characters (Printable).
func oneField(s string) string {
	return Printable(strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s))
}

// WriteListing writes entries with FormatEntry, one per line.
func WriteListing(w io.Writer, entries []Entry) error {
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(FormatEntry(e))
		b.WriteByte('\n')
		if b.Len() > 32<<10 {
			if _, err := io.WriteString(w, b.String()); err != nil {
				return err
			}
			b.Reset()
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// NameFromURL suggests a local file name from the last segment of a
// hierarchical URL, decoded; it never comes from the server. A URL that
// names a directory gets the directory's name, and a URL with no usable
// segment gets fallback. The result holds no "/" and is never "." or "..".
func NameFromURL(u *url.URL, fallback string) string {
	segs, err := u.Segments()
	if err != nil {
		return fallback
	}
	for i := len(segs) - 1; i >= 0; i-- {
		if s := SafeName(segs[i]); s != "" {
			return s
		}
	}
	return fallback
}

// SafeName turns a remote name into one path element safe to create
// locally: "/" and "\" and control characters become "_", and "", "." and
// ".." give "".
func SafeName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < 0x20 || r == 0x7f {
			return '_'
		}
		return r
	}, s)
	if s == "" || s == "." || s == ".." {
		return ""
	}
	return s
}

// Printable makes text from a server safe to show on a terminal: CR and LF
// become \r and \n, every other control character but TAB (ESC, BEL,
// DEL, the C1 controls) becomes \xNN, and a byte that is not UTF-8 becomes
// \xNN too, so that no server can move the cursor, recolour or retitle
// the terminal, or hide a line. Text without them is returned as it is.
func Printable(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < 0x80 {
			if c < 0x20 && c != '\t' || c == 0x7f {
				break
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r >= 0x80 && r <= 0x9f {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\n':
			b.WriteString(`\n`)
		case c < 0x20 && c != '\t' || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		case c < 0x80:
			b.WriteByte(c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				fmt.Fprintf(&b, `\x%02x`, c)
			case r >= 0x80 && r <= 0x9f:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				b.WriteString(s[i : i+size])
			}
			i += size
			continue
		}
		i++
	}
	return b.String()
}
