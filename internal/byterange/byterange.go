// Package byterange reads the Range and If-Range fields of an HTTP
// request as RFC 9110 §14 and §13.1.5 define them, for the places that
// answer HTTP with objects of any scheme: the gateway and fetch's
// Transport.
package byterange

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Range is one byte range a request asks for: First to Last (-1: to the
// end), or the last Suffix bytes when Suffix > 0.
type Range struct {
	First, Last int64
	Suffix      int64
}

// Parse reads a Range field of one range in bytes: "bytes=N-M",
// "bytes=N-" or "bytes=-N". It reports false for a field that is absent,
// malformed, of another unit, or of several ranges: the whole object is
// then the answer, as RFC 9110 §14.2 lets a server choose.
func Parse(h string) (Range, bool) {
	h = strings.TrimSpace(h)
	if len(h) < 6 || !strings.EqualFold(h[:6], "bytes=") || strings.Contains(h, ",") {
		return Range{}, false
	}
	a, b, ok := strings.Cut(strings.TrimSpace(h[6:]), "-")
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if !ok || !digits(a) || !digits(b) {
		return Range{}, false
	}
	if a == "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n == 0 {
			return Range{}, false // "-0" asks for nothing: no range is read
		}
		return Range{Last: -1, Suffix: n}, true
	}
	first, err := strconv.ParseInt(a, 10, 64)
	if err != nil {
		return Range{}, false
	}
	r := Range{First: first, Last: -1}
	if b != "" {
		if r.Last, err = strconv.ParseInt(b, 10, 64); err != nil || r.Last < first {
			return Range{}, false
		}
	}
	return r, true
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Start is the first byte to ask a server for: First, or 0 for a suffix,
// whose start is known only with the object's length.
func (r Range) Start() int64 {
	if r.Suffix > 0 {
		return 0
	}
	return r.First
}

// Bounds gives the first and last byte of the range in an object of
// total bytes; false when none of it is there (416).
func (r Range) Bounds(total int64) (first, last int64, ok bool) {
	if r.Suffix > 0 {
		if total == 0 {
			return 0, -1, false
		}
		return max(0, total-r.Suffix), total - 1, true
	}
	if r.First >= total {
		return 0, -1, false
	}
	last = total - 1
	if r.Last >= 0 && r.Last < last {
		last = r.Last
	}
	return r.First, last, true
}

// IfRange reports whether a range is to be sent given the If-Range field
// h and the object's modification time and entity tag (zero and empty
// when unknown): with no field, yes; with an entity tag, when it matches
// the object's strongly; with a date, when it is the object's
// Last-Modified exactly (RFC 9110 §13.1.5). Otherwise the whole object
// is the answer, so that a client resuming a changed object never joins
// old bytes to new.
func IfRange(h string, mod time.Time, etag string) bool {
	h = strings.TrimSpace(h)
	switch {
	case h == "":
		return true
	case strings.HasPrefix(h, `"`) || strings.HasPrefix(h, "W/"):
		return etag != "" && !strings.HasPrefix(etag, "W/") && h == etag
	}
	t, err := http.ParseTime(h)
	return err == nil && !mod.IsZero() && t.Equal(mod.Truncate(time.Second))
}
