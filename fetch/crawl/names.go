package crawl

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/urlderef/deref/fetch"
)

// FileNames is how the parts of a URL become local names below
// OutputDir, as wget's --restrict-file-names has it. Each part (the host,
// each element of the path, the query) is decoded, and the bytes the rules
// exclude are written as %XX, in capitals; a part ".." is written %2E%2E.
// A query is kept, after the name it belongs to: NAME?QUERY, so that
// URLs differing only in their queries are files of their own.
//
// The zero value is wget's default on this system: Unix's rules (only "/"
// and control characters escaped) or, on Windows, Windows's.
type FileNames struct {
	// System is "unix" or "windows", whose rules apply on any system
	// (wget's "unix" and "windows"); "" is this system's. Under Windows's,
	// \ | : ? " * < > are escaped too, a port comes after the host as
	// HOST+PORT (HOST:PORT under Unix's) and a query after its name as
	// NAME@QUERY (NAME?QUERY).
	System string
	// KeepControls leaves control characters (0x01-0x1F, 0x7F) as they
	// are (wget's "nocontrol"); they are escaped on Windows all the same,
	// whose file names cannot hold them.
	KeepControls bool
	// ASCII escapes the bytes above 0x7F too (wget's "ascii").
	ASCII bool
	// Case is "lower" or "upper" to write every name in lower or upper
	// case (ASCII letters; wget's "lowercase" and "uppercase"), escapes
	// included; "" leaves it.
	Case string
}

// ParseFileNames reads the value of wget's --restrict-file-names: a
// comma-separated list of unix, windows, nocontrol, ascii, lowercase and
// uppercase.
func ParseFileNames(s string) (FileNames, error) {
	var fn FileNames
	for _, w := range strings.Split(s, ",") {
		switch w = strings.ToLower(strings.TrimSpace(w)); w {
		case "unix", "windows":
			if fn.System != "" && fn.System != w {
				return fn, fmt.Errorf("%q names two systems", s)
			}
			fn.System = w
		case "nocontrol":
			fn.KeepControls = true
		case "ascii":
			fn.ASCII = true
		case "lowercase", "uppercase":
			c := strings.TrimSuffix(w, "case")
			if fn.Case != "" && fn.Case != c {
				return fn, fmt.Errorf("%q asks for lower and upper case", s)
			}
			fn.Case = c
		default:
			return fn, fmt.Errorf("%q is not unix, windows, nocontrol, ascii, lowercase or uppercase", w)
		}
	}
	return fn, nil
}

// windows says whether Windows's rules apply.
func (fn FileNames) windows() bool {
	return fn.System == "windows" || fn.System == "" && runtime.GOOS == "windows"
}

// portSep and querySep are what comes between a host and its port, and
// between a name and its query.
func (fn FileNames) portSep() string {
	if fn.windows() {
		return "+"
	}
	return ":"
}

func (fn FileNames) querySep() string {
	if fn.windows() {
		return "@"
	}
	return "?"
}

// escaped says whether byte c of a name is written %XX.
func (fn FileNames) escaped(c byte) bool {
	switch {
	case c == 0 || c == '/':
		return true
	case c < 0x20 || c == 0x7f:
		return !fn.KeepControls || runtime.GOOS == "windows"
	case c > 0x7f:
		return fn.ASCII
	case runtime.GOOS == "windows" && c == '\\':
		return true // a separator there, whatever the rules
	}
	return fn.windows() && strings.IndexByte(`\|:?"*<>`, c) >= 0
}

// name is the local name of a decoded part of a URL.
func (fn FileNames) name(part string) string {
	var s string
	if part == ".." || part == "." {
		s = strings.Repeat("%2E", len(part))
	} else {
		const hex = "0123456789ABCDEF"
		var b strings.Builder
		for i := 0; i < len(part); i++ {
			c := part[i]
			if fn.escaped(c) {
				b.WriteByte('%')
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&15])
			} else {
				b.WriteByte(c)
			}
		}
		s = b.String()
	}
	switch fn.Case {
	case "lower":
		s = asciiCase(s, 'A', 'Z', 'a'-'A')
	case "upper":
		s = asciiCase(s, 'a', 'z', 'A'-'a')
	}
	return s
}

// asciiCase moves the letters from lo to hi of s by d.
func asciiCase(s string, lo, hi byte, d int) string {
	b := []byte(s)
	for i, c := range b {
		if c >= lo && c <= hi {
			b[i] = byte(int(c) + d)
		}
	}
	return string(b)
}

// localName says whether n, made by FileNames.name, may be a file's name
// in OutputDir: one element, neither "." nor ".." (never made), local on
// this system (filepath.IsLocal: no reserved device name on Windows), and
// not the name of a part file.
func localName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, "/\x00") &&
		filepath.IsLocal(n) && !strings.HasSuffix(n, fetch.PartSuffix)
}
