package gopher

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// dotReader reads dot-terminated text (RFC 1436): it stops at a line
// holding only ".", removes the extra dot of a stuffed line, turns CRLF
// into LF, and bounds every line.
type dotReader struct {
	r      *bufio.Reader
	limit  int
	strict bool   // a connection closed before the "." line is an error
	buf    []byte // the line next loaded
	cur    []byte // what Read has still to return of it
	peeked bool
	done   bool
	err    error
}

// next loads the next line into buf; it reports false at the end.
func (d *dotReader) next() bool {
	if d.peeked {
		d.peeked = false
		return true
	}
	if d.done {
		return false
	}
	line, err := d.r.ReadSlice('\n')
	d.buf = append(d.buf[:0], line...)
	for err == bufio.ErrBufferFull {
		if len(d.buf) > d.limit {
			d.done, d.err = true, fmt.Errorf("%w: a line longer than %d bytes", protocols.ErrProtocol, d.limit)
			return false
		}
		line, err = d.r.ReadSlice('\n')
		d.buf = append(d.buf, line...)
	}
	if len(d.buf) > d.limit {
		d.done, d.err = true, fmt.Errorf("%w: a line longer than %d bytes", protocols.ErrProtocol, d.limit)
		return false
	}
	if err != nil {
		d.done = true
		if err != io.EOF {
			d.err = protocols.NetError(err)
			return false
		}
		if d.strict {
			d.err = fmt.Errorf("%w: the connection closed before the \".\" line", protocols.ErrShortBody)
			return false
		}
		d.err = io.EOF
		if len(d.buf) == 0 {
			return false
		}
		return true // a last line without its end
	}
	l := strings.TrimRight(string(d.buf), "\r\n")
	if l == "." {
		d.done, d.err = true, io.EOF
		return false
	}
	// Normalise the line end; undo dot-stuffing.
	n := len(d.buf)
	if n >= 2 && d.buf[n-2] == '\r' {
		d.buf = append(d.buf[:n-2], '\n')
	}
	if len(d.buf) >= 2 && d.buf[0] == '.' && d.buf[1] == '.' {
		d.buf = d.buf[1:]
	}
	return true
}

// peekLine returns the first line without consuming it.
func (d *dotReader) peekLine() (string, error) {
	if !d.next() {
		if d.err == io.EOF {
			return "", io.EOF
		}
		return "", d.err
	}
	d.peeked = true
	return strings.TrimRight(string(d.buf), "\r\n"), nil
}

func (d *dotReader) Read(p []byte) (int, error) {
	for len(d.cur) == 0 {
		if !d.next() {
			if d.err == nil {
				return 0, io.EOF
			}
			return 0, d.err
		}
		d.cur = d.buf
	}
	n := copy(p, d.cur)
	d.cur = d.cur[n:]
	return n, nil
}

// ParseMenu parses a Gopher menu into entries. Each item's URL is a gopher
// URL; types 8 and T become telnet and tn3270 URLs; an "h" item whose
// selector starts "URL:" carries its own URL; "i" info lines keep their
// text and no URL; unknown types are kept. The Gopher+ "+" or "?" flag is
// appended to Type.
func ParseMenu(menu string) []protocols.Entry {
	var out []protocols.Entry
	for _, line := range strings.Split(menu, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" || line == "." {
			continue
		}
		t := line[0]
		f := strings.Split(line[1:], "\t")
		e := protocols.Entry{Kind: protocols.KindFile, Name: f[0], Size: -1, Type: string(t)}
		if len(f) >= 5 && (f[4] == "+" || f[4] == "?") {
			e.Type += f[4]
		}
		var sel, host, port string
		if len(f) >= 4 {
			sel, host, port = f[1], f[2], f[3]
			e.Selector, e.Host = sel, host
			e.Port, _ = strconv.Atoi(port)
		}
		switch t {
		case 'i', '3':
			e.Kind = protocols.KindInfo
			out = append(out, e)
			continue
		case '1':
			e.Kind = protocols.KindDirectory
		case '7':
			e.Kind = protocols.KindSearchIndex
		case '8', 'T':
			e.Kind = protocols.KindSession
		}
		if host == "" || !validPort(port) {
			out = append(out, e) // not enough to build a URL: kept as text
			continue
		}
		hp := host
		if port != "70" || t == '8' || t == 'T' {
			hp = host + ":" + port
		}
		switch {
		case t == '8':
			e.URL = "telnet://" + userPart(sel) + hp + "/"
		case t == 'T':
			e.URL = "tn3270://" + userPart(sel) + hp + "/"
		case t == 'h' && strings.HasPrefix(sel, "URL:"):
			e.URL = sel[4:]
		default:
			e.URL = "gopher://" + hp + "/" + url.EscapeGopher(string(t)+sel)
		}
		out = append(out, e)
	}
	return out
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n > 0 && n < 65536
}

// userPart turns a telnet item's selector, a login name, into the user
// part of a telnet URL.
func userPart(sel string) string {
	if sel == "" {
		return ""
	}
	return url.EscapeUserinfo(sel) + "@"
}

// ParseAttributes parses a Gopher+ attribute reply: blocks that start
// "+NAME:" (with text after the colon) and go on with lines indented by a
// space. A "$" reply holds one +INFO block per item; every block records
// the +INFO line of its item. A "+" line without a name starts no block.
func ParseAttributes(text string) []protocols.Attribute {
	var out []protocols.Attribute
	item := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		switch {
		case strings.HasPrefix(line, "+") && len(line) > 1 && line[1] != ':':
			name, value, _ := strings.Cut(line[1:], ":")
			value = strings.TrimSpace(value)
			if name == "INFO" {
				item = value
			}
			out = append(out, protocols.Attribute{Item: item, Name: name, Value: value})
		case strings.HasPrefix(line, " ") && len(out) > 0:
			a := &out[len(out)-1]
			a.Lines = append(a.Lines, line[1:])
		}
	}
	return out
}

// WithPlus returns the URL of the same item with the Gopher+ string plus:
// "+" for its default view with its size, "!" for its attributes.
func WithPlus(u *url.URL, plus string) (*url.URL, error) {
	g, err := u.Gopher()
	if err != nil {
		return nil, err
	}
	v := *u
	v.Path = "/" + url.EscapeGopher(string(g.Type)+g.Selector) + "%09" + url.EscapeGopher(g.Search) + "%09" + url.EscapeGopher(plus)
	return url.Parse(v.String())
}

// ModDate reads the modification time from a +ADMIN block's
// "Mod-Date: ... <YYYYMMDDhhmmss>" line.
func ModDate(attrs []protocols.Attribute) (time.Time, bool) {
	for _, a := range attrs {
		if a.Name != "ADMIN" {
			continue
		}
		for _, l := range a.Lines {
			rest, ok := strings.CutPrefix(l, "Mod-Date:")
			if !ok {
				continue
			}
			i, j := strings.LastIndexByte(rest, '<'), strings.LastIndexByte(rest, '>')
			if i < 0 || j < i {
				continue
			}
			if t, err := time.Parse("20060102150405", rest[i+1:j]); err == nil {
				return t, true
			}
		}
	}
	return time.Time{}, false
}
