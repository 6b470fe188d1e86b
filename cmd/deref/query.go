package main

import (
	"fmt"
	"io"
	"strings"
)

// A piece of query data from curl's -d, --data-urlencode and the like,
// and --url-query: with -G (and always for --url-query) it goes into the
// URL's query, joined to the others by "&", as curl puts it; deref sends
// no request body.
type queryPiece struct {
	flag  string // the flag it came with
	value string
}

// queryFlag is the setter of a flag giving query data.
func queryFlag(name string) func(*options, string) error {
	return func(o *options, v string) error {
		o.query = append(o.query, queryPiece{name, v})
		return nil
	}
}

// queryString is the query the pieces make, as curl makes it: -d's and
// --data-ascii's as they are (@FILE read, its CR and LF taken out),
// --data-raw's as they are, --data-binary's as they are (@FILE read
// whole), --data-urlencode's encoded ("content", "=content",
// "name=content", "@file", "name@file"), --url-query's as
// --data-urlencode's, or as they are after a "+". stdin is "@-".
func queryString(pieces []queryPiece, stdin io.Reader) (string, error) {
	var parts []string
	for _, p := range pieces {
		v := p.value
		var part string
		switch p.flag {
		case "data", "data-ascii":
			if name, ok := strings.CutPrefix(v, "@"); ok {
				b, err := readData(name, stdin)
				if err != nil {
					return "", fmt.Errorf("--%s: %w", p.flag, err)
				}
				v = strings.NewReplacer("\r", "", "\n", "").Replace(string(b))
			}
			part = v
		case "data-raw":
			part = v
		case "data-binary":
			if name, ok := strings.CutPrefix(v, "@"); ok {
				b, err := readData(name, stdin)
				if err != nil {
					return "", fmt.Errorf("--%s: %w", p.flag, err)
				}
				v = string(b)
			}
			part = v
		case "url-query":
			if raw, ok := strings.CutPrefix(v, "+"); ok {
				part = raw
				break
			}
			fallthrough
		case "data-urlencode":
			enc, err := urlencodeData(v, stdin)
			if err != nil {
				return "", fmt.Errorf("--%s: %w", p.flag, err)
			}
			part = enc
		}
		if part != "" {
			parts = append(parts, part)
		}
	}
	return strings.Join(parts, "&"), nil
}

// urlencodeData is a --data-urlencode value as curl sends it.
func urlencodeData(v string, stdin io.Reader) (string, error) {
	name, content, hasEq := strings.Cut(v, "=")
	at := strings.IndexByte(v, '@')
	switch {
	case hasEq: // an "=" comes first whatever follows, as curl reads it
		if name == "" {
			return escapeQuery(content), nil
		}
		return name + "=" + escapeQuery(content), nil
	case at >= 0:
		b, err := readData(v[at+1:], stdin)
		if err != nil {
			return "", err
		}
		if at == 0 {
			return escapeQuery(string(b)), nil
		}
		return v[:at] + "=" + escapeQuery(string(b)), nil
	}
	return escapeQuery(v), nil
}

// escapeQuery encodes as curl 7.88's --data-urlencode does: ALPHA,
// DIGIT and "-._~" as they are, a space as "+", every other byte as
// "%xx" in lower case.
func escapeQuery(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			fmt.Fprintf(&b, "%%%02x", c)
		}
	}
	return b.String()
}

// readData reads a data file ("-": stdin), at most a mebibyte: it goes
// into a URL.
func readData(name string, stdin io.Reader) ([]byte, error) {
	r, done, err := openInput(name, stdin)
	if err != nil {
		return nil, err
	}
	defer done()
	b, err := io.ReadAll(io.LimitReader(r, 1<<20+1))
	if err == nil && len(b) > 1<<20 {
		err = fmt.Errorf("%s holds more than 1 MiB: too much for a URL", name)
	}
	return b, err
}

// withQuery adds query to raw's query ("?" or "&"), before a fragment.
func withQuery(raw, query string) string {
	if query == "" {
		return raw
	}
	frag := ""
	if i := strings.IndexByte(raw, '#'); i >= 0 {
		raw, frag = raw[:i], raw[i:]
	}
	sep := "?"
	if strings.Contains(raw, "?") {
		sep = "&"
		if strings.HasSuffix(raw, "?") || strings.HasSuffix(raw, "&") {
			sep = ""
		}
	}
	return raw + sep + query + frag
}
