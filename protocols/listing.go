package protocols

import (
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/urlderef/deref/url"
)

// FormatEntry renders one listing entry in the format every scheme shares,
// one line per entry, fields separated by TAB:
//
//	kind  size  modification-time  name  URL  [target]
//
// kind is Kind's String: "file", "directory", "link", "search",
// "articles", "session" or "info"; size is "-" when unknown; the time is
// RFC 3339 in UTC or "-"; the URL is empty where the entry cannot be
// dereferenced. A link whose target is known has it as a sixth field.
// TABs and line breaks inside the name and the target become spaces.
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
	if e.Kind == KindLink && e.Target != "" {
		line += "\t" + oneField(e.Target)
	}
	return line
}

// oneField turns the TABs and line breaks of s into spaces.
func oneField(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
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
		s := segs[i]
		if j := strings.IndexByte(s, ';'); j >= 0 && (u.Scheme == "ftp" || u.Scheme == "ftps") {
			s = s[:j]
		}
		s = SafeName(s)
		if s != "" {
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
