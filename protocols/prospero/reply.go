package prospero

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urlderef/deref/protocols"
)

// Attribute is one ATTRIBUTE line: one value of one attribute.
type Attribute struct {
	AppliesTo string // OBJECT, LINK, CACHED, REPLACEMENT, ADDITIONAL
	Namespace string // INTRINSIC, APPLICATION, FIELD
	Name      string // SIZE, LAST-MODIFIED, ACCESS-METHOD, ...
	ValueType string // SEQUENCE, LINK, FILTER
	Values    []string
}

// Link is one LINK line and the ATTRIBUTE lines that follow it in a
// listing.
type Link struct {
	Type       string // L (normal), U (union), I (a name beginning with "."), ...
	Target     string // FILE, DIRECTORY, DIRECTORY+FILE, OBJECT, SYMBOLIC, EXTERNAL, NULL
	Name       string
	HostType   string // INTERNET-D
	Host       string // as written: NAME or NAME(PORT)
	NameType   string // ASCII
	HSOName    string
	Version    string
	Attributes []Attribute
}

// Forward is a FORWARDED line: the object has moved.
type Forward struct {
	HostType, Host, NameType, HSOName, Version string
}

// Reply is a reply message read into its lines' fields.
type Reply struct {
	// Attributes are the ATTRIBUTE lines before any LINK: the object's own
	// (GET-OBJECT-INFO's answer).
	Attributes []Attribute
	Links      []Link
	// NoneFound counts NONE-FOUND lines: nothing matched a command.
	NoneFound int
	// Failure is the FAILURE or ERROR line that ended the request, if
	// one did.
	Failure    *Error
	Forwarded  *Forward
	Unresolved []string
	Warnings   []string
	// Version is the server's answer to a bare VERSION.
	Version string
}

// Error is a FAILURE, ERROR or VERSION-NOT-SUPPORTED line, or a reply that
// could not be read; Kind is the protocols sentinel it maps to.
type Error struct {
	Line string // the line as the server sent it, or what was wrong
	Code string // FAILURE's code (NOT-FOUND, NOT-AUTHORIZED, ...), else ""
	Kind error
}

// Error says what the server answered, on one line.
func (e *Error) Error() string {
	return "prospero: " + e.Kind.Error() + ": " + printable(e.Line)
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Kind }

// printable is s fit for one line of an error: quoted where it holds
// control characters.
func printable(s string) string {
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return strconv.Quote(s)
		}
	}
	return s
}

func protoErr(format string, args ...any) *Error {
	return &Error{Line: fmt.Sprintf(format, args...), Kind: protocols.ErrProtocol}
}

// failureKind maps a FAILURE code to the engine's errors (the notes'
// section 5).
func failureKind(code string) error {
	switch code {
	case "NOT-FOUND":
		return protocols.ErrNotFound
	case "NOT-AUTHORIZED", "AUTHENTICATION-REQUIRED", "AUTHENTICATION-DATA":
		return protocols.ErrPermission
	}
	return protocols.ErrProtocol
}

// ParseReply reads a reply message: its lines by the quoting rules, each
// line's tokens into fields. A line that is none of the protocol's, a
// LINK or ATTRIBUTE line short of its fields, or a quote left open is a
// protocol error.
func ParseReply(msg string) (*Reply, error) {
	lines, err := Lines(msg)
	if err != nil {
		return nil, protoErr("%v in the reply", err)
	}
	r := &Reply{}
	for _, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		tok, err := Tokens(line)
		if err != nil {
			return nil, protoErr("%v: %s", err, line)
		}
		switch kw := tok[0]; {
		case kw == "LINK":
			if len(tok) < 9 {
				return nil, protoErr("a LINK line short of its fields: %s", line)
			}
			r.Links = append(r.Links, Link{Type: tok[1], Target: tok[2], Name: tok[3], HostType: tok[4], Host: tok[5], NameType: tok[6], HSOName: tok[7], Version: tok[8]})
		case kw == "ATTRIBUTE":
			if len(tok) < 5 {
				return nil, protoErr("an ATTRIBUTE line short of its fields: %s", line)
			}
			a := Attribute{AppliesTo: tok[1], Namespace: tok[2], Name: tok[3], ValueType: tok[4], Values: tok[5:]}
			if n := len(r.Links); n > 0 {
				r.Links[n-1].Attributes = append(r.Links[n-1].Attributes, a)
			} else {
				r.Attributes = append(r.Attributes, a)
			}
		case strings.HasPrefix(kw, "ATTRIBUTE>"):
			// A value nested under a LINK-valued attribute: not one of the
			// object's own.
		case kw == "NONE-FOUND":
			r.NoneFound++
		case kw == "SUCCESS", kw == "AUTHENTICATED", kw == "ID":
		case kw == "UNRESOLVED":
			r.Unresolved = append(r.Unresolved, tok[1:]...)
		case kw == "FORWARDED":
			if len(tok) < 5 {
				return nil, protoErr("a FORWARDED line short of its fields: %s", line)
			}
			f := &Forward{HostType: tok[1], Host: tok[2], NameType: tok[3], HSOName: tok[4]}
			if len(tok) > 5 {
				f.Version = tok[5]
			}
			r.Forwarded = f
		case kw == "WARNING":
			r.Warnings = append(r.Warnings, line)
		case kw == "VERSION":
			r.Version = strings.Join(tok[1:], " ")
		case kw == "FAILURE":
			code := ""
			if len(tok) > 1 {
				code = tok[1]
			}
			r.Failure = &Error{Line: line, Code: code, Kind: failureKind(code)}
			return r, nil // the first FAILURE ends the request
		case kw == "ERROR", kw == "VERSION-NOT-SUPPORTED":
			r.Failure = &Error{Line: line, Kind: protocols.ErrProtocol}
			return r, nil
		default:
			return nil, protoErr("a line that is none of the protocol's: %s", line)
		}
	}
	return r, nil
}

// Get returns the first value of the attribute name among as, and
// whether there is one.
func Get(as []Attribute, name string) ([]string, bool) {
	for _, a := range as {
		if a.Name == name {
			return a.Values, true
		}
	}
	return nil, false
}

// Size reads SIZE ("<n> bytes"); -1 when absent or not a number.
func Size(as []Attribute) int64 {
	v, ok := Get(as, "SIZE")
	if !ok || len(v) == 0 {
		return -1
	}
	n, _, _ := strings.Cut(v[0], " ")
	if s, err := strconv.ParseInt(n, 10, 64); err == nil && s >= 0 {
		return s
	}
	return -1
}

// ModTime reads LAST-MODIFIED (YYYYMMDDHHMMSSZ, UTC); zero when absent
// or not such a time.
func ModTime(as []Attribute) time.Time {
	v, ok := Get(as, "LAST-MODIFIED")
	if !ok || len(v) == 0 {
		return time.Time{}
	}
	t, err := time.Parse("20060102150405Z", v[0])
	if err != nil {
		return time.Time{}
	}
	return t
}

// IsFolder says whether an object's attributes describe a folder: no
// access method, and UNIX-MODES beginning with "d" where it is given.
func IsFolder(as []Attribute) bool {
	if _, ok := Get(as, "ACCESS-METHOD"); ok {
		return false
	}
	m, ok := Get(as, "UNIX-MODES")
	return !ok || len(m) > 0 && strings.HasPrefix(m[0], "d")
}

// Methods returns the values of every ACCESS-METHOD attribute, in the
// server's order.
func Methods(as []Attribute) [][]string {
	var out [][]string
	for _, a := range as {
		if a.Name == "ACCESS-METHOD" && len(a.Values) > 0 {
			out = append(out, a.Values)
		}
	}
	return out
}
