package url

import (
	"strconv"
	"strings"
)

// Error is the error Parse and its relatives return: the operation, the URL
// with any password redacted, and the cause (a *PartError or *EscapeError
// naming the component at fault).
type Error struct {
	Op  string // "parse"
	URL string // the input, password redacted
	Err error
}

// Error gives the operation, the URL quoted and why it failed.
func (e *Error) Error() string { return e.Op + " " + strconv.Quote(e.URL) + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// PartError names the component of a URL that is at fault and why.
type PartError struct {
	Part   string // "scheme", "host", "port", "user", "url-path", "ftp typecode", ...
	Msg    string
	Offset int // byte offset in the URL, or -1 when not known
}

// Error names the part at fault and what is wrong with it.
func (e *PartError) Error() string {
	s := e.Part + ": " + e.Msg
	if e.Offset >= 0 {
		s += " at offset " + strconv.Itoa(e.Offset)
	}
	return s
}

func partErr(part, msg string) error { return &PartError{Part: part, Msg: msg, Offset: -1} }

// wrapEscape turns an *EscapeError found inside a component into a
// *PartError naming that component.
func wrapEscape(part string, err error) error {
	if ee, ok := err.(*EscapeError); ok {
		return &PartError{Part: part, Msg: "malformed escape " + strconv.Quote(ee.Text), Offset: ee.Offset}
	}
	return err
}

// RedactString hides the password of a URL given as text, even one that
// does not parse: in "scheme://user:password@host..." the password becomes
// "xxxxx". Error messages and traces print URLs through it.
func RedactString(raw string) string {
	i := strings.Index(raw, "://")
	if i < 0 {
		return raw
	}
	start := i + 3
	end := len(raw)
	if j := strings.IndexAny(raw[start:], "/#"); j >= 0 {
		end = start + j
	}
	auth := raw[start:end]
	at := strings.LastIndexByte(auth, '@')
	if at < 0 {
		return raw
	}
	colon := strings.IndexByte(auth[:at], ':')
	if colon < 0 {
		return raw
	}
	return raw[:start+colon+1] + "xxxxx" + raw[start+at:]
}
