package gemini

import (
	"path"
	"strings"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// LineKind is the kind of a gemtext line.
type LineKind int

// Line kinds (the specification's section on text/gemini).
const (
	LineText     LineKind = iota // an ordinary line
	LineLink                     // "=>" URL [label]
	LineHeading                  // "#", "##" or "###" (Level 1 to 3)
	LineItem                     // "* " an item of a list
	LineQuote                    // ">"
	LinePre                      // a line inside a preformatted block, as it is
	LinePreOpen                  // "```" opening a block (Alt its alt text)
	LinePreClose                 // "```" closing it
	LinePrompt                   // "=:" URL [label]: Spartan's input link
)

// Line is one line of a gemtext page.
type Line struct {
	Kind  LineKind
	Text  string // the text (a link's label; "" when it has none)
	URL   string // a link's URL as written
	Level int    // a heading's level
}

// ParseGemtext reads a page's lines. Lines end at LF, a CR before it
// dropped; a preformatted block's lines are kept as they are.
func ParseGemtext(text string) []Line {
	var out []Line
	pre := false
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		l = strings.TrimSuffix(l, "\r")
		if strings.HasPrefix(l, "```") {
			if pre {
				out = append(out, Line{Kind: LinePreClose})
			} else {
				out = append(out, Line{Kind: LinePreOpen, Text: strings.TrimSpace(l[3:])})
			}
			pre = !pre
			continue
		}
		if pre {
			out = append(out, Line{Kind: LinePre, Text: l})
			continue
		}
		switch {
		case strings.HasPrefix(l, "=>") || strings.HasPrefix(l, "=:"):
			k := LineLink
			if l[1] == ':' {
				k = LinePrompt
			}
			rest := strings.TrimLeft(l[2:], " \t")
			u, label, _ := strings.Cut(rest, " ")
			if i := strings.IndexByte(u, '\t'); i >= 0 {
				u, label = u[:i], u[i+1:]+" "+label
			}
			if u == "" {
				out = append(out, Line{Kind: LineText, Text: l})
				continue
			}
			out = append(out, Line{Kind: k, URL: u, Text: strings.TrimSpace(label)})
		case strings.HasPrefix(l, "###"):
			out = append(out, Line{Kind: LineHeading, Level: 3, Text: strings.TrimSpace(l[3:])})
		case strings.HasPrefix(l, "##"):
			out = append(out, Line{Kind: LineHeading, Level: 2, Text: strings.TrimSpace(l[2:])})
		case strings.HasPrefix(l, "#"):
			out = append(out, Line{Kind: LineHeading, Level: 1, Text: strings.TrimSpace(l[1:])})
		case strings.HasPrefix(l, "* "):
			out = append(out, Line{Kind: LineItem, Text: l[2:]})
		case strings.HasPrefix(l, ">"):
			out = append(out, Line{Kind: LineQuote, Text: strings.TrimSpace(l[1:])})
		default:
			out = append(out, Line{Kind: LineText, Text: l})
		}
	}
	return out
}

// Links are a page's link lines as listing entries: each URL resolved
// against the page's, the label as the name (the URL where there is
// none), the kind from the URL: a page of the same scheme (a path ending
// in "/", ".gmi" or ".gemini") is a folder, as a Gopher menu is; a prompt
// line is a search; anything else a file.
func Links(base *url.URL, text string) []protocols.Entry {
	var out []protocols.Entry
	for _, l := range ParseGemtext(text) {
		if l.Kind != LineLink && l.Kind != LinePrompt {
			continue
		}
		e := protocols.Entry{Name: l.Text, Size: -1, Kind: protocols.KindFile}
		if e.Name == "" {
			e.Name = l.URL
		}
		ref, err := url.ParseReference(url.Canonicalize(l.URL))
		if err != nil {
			e.Type = "unparsed"
			out = append(out, e)
			continue
		}
		u := base.ResolveReference(ref)
		e.URL, e.Host, e.Port = u.String(), u.Hostname(), u.PortNumber()
		switch {
		case l.Kind == LinePrompt:
			e.Kind = protocols.KindSearchIndex
		case u.Scheme == base.Scheme && isPage(u.Path):
			e.Kind = protocols.KindDirectory
		}
		out = append(out, e)
	}
	return out
}

// isPage says whether a path names a gemtext page by the conventions
// of capsules: a folder (its index page) or a .gmi file.
func isPage(p string) bool {
	if p == "" || strings.HasSuffix(p, "/") {
		return true
	}
	switch path.Ext(p) {
	case ".gmi", ".gemini":
		return true
	}
	return false
}
