package wais

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/urlderef/deref/url"
)

// EncodeWPath turns a docid into the wpath of a document URL, in the
// encoding of the libwww WAIS gateway (notes §12.3): for each tagged field
// of the docid, the tag in decimal, "=", the value with every byte other
// than letters, digits and ". / - _ $" written as %XX, and ";". A docid
// that is not a sequence of tagged fields is percent-encoded whole.
func EncodeWPath(docid []byte) string {
	fs, err := ParseFields(docid)
	if err != nil || len(fs) == 0 {
		return escapeValue(docid)
	}
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(strconv.Itoa(f.Tag))
		b.WriteByte('=')
		b.WriteString(escapeValue(f.Value))
		b.WriteByte(';')
	}
	return b.String()
}

func escapeValue(v []byte) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for _, c := range v {
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("./-_$", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// DecodeWPath turns a wpath back into docid bytes, decoding its escapes
// exactly once. A wpath of the form "tag=value;..." becomes the fields
// CI(tag) CI(length) value; one that does not start with "digits=" is
// percent-decoded whole, as RFC 1738 leaves the encoding to the server.
func DecodeWPath(s string) ([]byte, error) {
	if s == "" {
		return nil, errors.New("empty wpath")
	}
	if !tagged(s) {
		return unescape(s)
	}
	var docid []byte
	for s != "" {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 {
			return nil, fmt.Errorf("field without a tag at %q", clip(s))
		}
		if i == len(s) || s[i] != '=' {
			return nil, fmt.Errorf("tag %s without '='", s[:i])
		}
		tag, err := strconv.Atoi(s[:i])
		if err != nil || tag >= 1<<28 { // a CI of at most 4 bytes
			return nil, fmt.Errorf("tag %s out of range", s[:i])
		}
		end := strings.IndexByte(s[i+1:], ';')
		if end < 0 {
			return nil, fmt.Errorf("field %d without ';'", tag)
		}
		v, err := unescape(s[i+1 : i+1+end])
		if err != nil {
			return nil, fmt.Errorf("field %d: %w", tag, err)
		}
		docid = AppendField(docid, tag, v)
		s = s[i+1+end+1:]
	}
	return docid, nil
}

// tagged reports whether s starts with digits and "=".
func tagged(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i > 0 && i < len(s) && s[i] == '='
}

// unescape decodes every %XX escape of s, as bytes (a docid holds NULs).
func unescape(s string) ([]byte, error) {
	d, err := url.Unescape(s)
	return []byte(d), err
}

func clip(s string) string {
	if len(s) > 12 {
		return s[:12] + "..."
	}
	return s
}
