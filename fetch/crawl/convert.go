package crawl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	neturl "net/url"
	"os"
	"path"
	"strings"

	"golang.org/x/net/html"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/links"
	"github.com/urlderef/deref/url"
)

// A page or style sheet written under OutputDir whose links
// ConvertLinks rewrites once the crawl is over.
type writtenPage struct {
	u    *url.URL
	rel  string // its path below OutputDir
	kind pageKind
}

// pageKind is what ConvertLinks does with an object written.
type pageKind int

const (
	notConverted pageKind = iota
	htmlPage              // its link attributes, and its <style> elements as styleSheet's
	styleSheet            // its url( )s and @imports
)

// noteWritten records that u's object, which redirects found at final
// (u when none), is rel below OutputDir, for ConvertLinks, which rewrites
// it as kind says, its links relative to final.
func (m *run) noteWritten(u, final *url.URL, rel string, kind pageKind) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.written[linkKey(u)] = rel
	if final != u {
		if _, ok := m.written[linkKey(final)]; !ok {
			m.written[linkKey(final)] = rel
		}
	}
	if kind != notConverted && !m.pageFiles[rel] {
		// Once for a file that several URLs led to (/ and /index.html):
		// its links are rewritten once.
		m.pageFiles[rel] = true
		m.pages = append(m.pages, writtenPage{final, rel, kind})
	}
}

// linkKey is how a URL is looked up among those written: as the crawl
// compares them, normalised and without a fragment.
func linkKey(u *url.URL) string {
	c := *u
	c.HasFragment, c.Fragment = false, ""
	return crawlForm(&c).String()
}

// convertLinks rewrites the links of every HTML page and style sheet
// written, as wget's
// --convert-links does: a link to an object written leads to its file,
// relative to the page's; a relative link to what was not written
// becomes absolute, so that it still leads to the server. It returns how
// many pages it rewrote; a page it cannot read as HTML is left as it is.
func (m *run) convertLinks() (int, error) {
	converted := 0
	for _, p := range m.pages {
		changed, err := m.convertPage(p)
		if err != nil {
			return converted, fmt.Errorf("--convert-links: %s: %w", p.rel, err)
		}
		if changed {
			converted++
		}
	}
	return converted, nil
}

// convertPage rewrites one page through NAME.part, renamed over it when
// whole; it reports whether anything changed. The page as rewritten is
// held in memory up to convertHeld, and NAME.part made only past that or
// once something changed: most pages of a site with relative links stay
// as they are, and cost no file.
func (m *run) convertPage(p writtenPage) (bool, error) {
	dir, name := path.Split(p.rel)
	d, release, err := m.dirs.acquire(strings.TrimSuffix(dir, "/"))
	if err != nil {
		return false, err
	}
	defer release()
	in, err := d.Open(name)
	if err != nil {
		return false, err
	}
	defer in.Close()
	part := name + fetch.PartSuffix
	out := &spill{create: func() (*os.File, error) { return d.Create(part) }}
	var changed bool
	m.linksConverted = 0
	if p.kind == styleSheet {
		changed, err = m.rewriteStyleSheet(out, in, func() (io.ReadCloser, error) { return d.Open(name) }, p.u, p)
	} else {
		changed, err = m.rewrite(out, in, p)
	}
	if m.o.BackupConverted && m.linksConverted > 0 {
		// wget's -K keeps the original of every page with a link to
		// convert, even one whose text stays the same.
		changed = true
	}
	if err == nil && changed && out.f == nil {
		err = out.spill()
	}
	if out.f == nil {
		return false, ignoreUnconverted(err)
	}
	if cerr := out.f.Close(); err == nil {
		err = cerr
	}
	if err != nil || !changed {
		d.Remove(part)
		return false, ignoreUnconverted(err)
	}
	in.Close() // before its name is taken: some systems refuse to rename an open file
	if m.o.BackupConverted {
		if err := d.Rename(name, name+origSuffix); err != nil {
			d.Remove(part)
			return false, err
		}
	}
	return true, d.Rename(part, name)
}

// origSuffix ends the name of a page's original, kept by
// BackupConverted.
const origSuffix = ".orig"

func ignoreUnconverted(err error) error {
	if errors.Is(err, errNotConverted) {
		return nil
	}
	return err
}

// convertHeld is how much of a page being rewritten is held in memory
// before it goes to NAME.part.
const convertHeld = 256 << 10

// spill holds what is written in memory up to convertHeld, then writes
// it, and the rest, to the file create makes.
type spill struct {
	buf    bytes.Buffer
	f      *os.File
	create func() (*os.File, error)
}

func (s *spill) Write(p []byte) (int, error) {
	if s.f == nil && s.buf.Len()+len(p) <= convertHeld {
		return s.buf.Write(p)
	}
	if s.f == nil {
		if err := s.spill(); err != nil {
			return 0, err
		}
	}
	return s.f.Write(p)
}

// spill makes the file and writes what is held to it.
func (s *spill) spill() error {
	f, err := s.create()
	if err != nil {
		return err
	}
	s.f = f
	_, err = s.buf.WriteTo(f)
	return err
}

// errNotConverted is a page rewrite gives up on: a token past 1 MiB.
var errNotConverted = errors.New("not converted")

// rewrite copies page p from r to w, token by token, its link attributes
// rewritten; everything else goes as it came, byte for byte.
func (m *run) rewrite(w io.Writer, r io.Reader, p writtenPage) (bool, error) {
	z := html.NewTokenizer(r)
	z.SetMaxBuf(1 << 20)
	base := p.u
	changed := false
	var raw []byte
	inStyle := false // the text next is a <style> element's
	for {
		tt := z.Next()
		style := inStyle
		inStyle = false
		switch tt {
		case html.ErrorToken:
			switch {
			case z.Err() == io.EOF:
				return changed, nil
			case errors.Is(z.Err(), html.ErrBufferExceeded):
				return false, errNotConverted
			}
			return false, z.Err()
		case html.TextToken:
			if !style {
				break
			}
			var out bytes.Buffer
			text := z.Raw()
			did, err := m.rewriteStyleSheet(&out, bytes.NewReader(text), func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(text)), nil }, base, p)
			if err != nil {
				return false, err
			}
			if did {
				changed = true
				if _, err := out.WriteTo(w); err != nil {
					return false, err
				}
				continue
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			raw = append(raw[:0], z.Raw()...) // TagName lowers the buffer's name in place
			name, _ := z.TagName()
			inStyle = tt == html.StartTagToken && string(name) == "style"
			attrs, isBase := links.Attrs(string(name)), string(name) == "base"
			out, did := raw, false
			if attrs != nil || isBase {
				out, did = m.rewriteTag(raw, attrs, isBase, &base, p)
			}
			changed = changed || did
			if _, err := w.Write(out); err != nil {
				return false, err
			}
			continue
		}
		if _, err := w.Write(z.Raw()); err != nil {
			return false, err
		}
	}
}

// rewriteTag returns the raw start tag with its link attributes
// rewritten, and whether any was. A <base href> is made "." (the page's
// own folder, which the rewritten links are relative to) after it has
// become the base of the links that follow.
func (m *run) rewriteTag(raw []byte, attrs []string, isBase bool, base **url.URL, p writtenPage) ([]byte, bool) {
	var out []byte
	last := 0
	for _, a := range tagAttrs(raw) {
		name := strings.ToLower(string(raw[a.name[0]:a.name[1]]))
		if a.value[0] < 0 {
			continue // no value
		}
		value := html.UnescapeString(string(raw[a.value[0]:a.value[1]]))
		var repl string
		switch {
		case isBase && name == "href":
			if ref, err := url.ParseReference(url.Canonicalize(strings.TrimSpace(value))); err == nil {
				*base = p.u.ResolveReference(ref)
			}
			repl = "."
		case !isBase && contains(attrs, name) && name == "srcset":
			repl = m.rewriteSrcset(value, *base, p)
		case !isBase && contains(attrs, name):
			repl = m.rewriteLink(value, *base, p)
		default:
			continue
		}
		if repl == value {
			continue
		}
		q := byte('"')
		if a.quoted {
			q = raw[a.value[0]-1] // the page's own quote
		}
		out = append(out, raw[last:a.start]...)
		out = append(out, raw[a.name[0]:a.name[1]]...)
		out = append(out, '=', q)
		out = append(out, html.EscapeString(repl)...)
		out = append(out, q)
		last = a.value[1]
		if a.quoted {
			last++ // past the closing quote
		}
	}
	if out == nil {
		return raw, false
	}
	return append(out, raw[last:]...), true
}

// rewriteStyleSheet copies a style sheet (or a <style> element's text)
// to w with the URLs it loads rewritten as rewriteLink has them, relative
// to base, and says whether any was. It reads the style sheet twice: r
// to find the URLs, and again from open to copy it, never whole. When
// nothing changes, nothing is written.
func (m *run) rewriteStyleSheet(w io.Writer, r io.Reader, open func() (io.ReadCloser, error), base *url.URL, p writtenPage) (bool, error) {
	links, err := links.CSSSpans(r)
	if err != nil {
		return false, err
	}
	type change struct {
		start, end int64
		text       string
	}
	var changes []change
	for _, l := range links {
		if repl := m.rewriteLink(l.URL, base, p); repl != l.URL {
			changes = append(changes, change{l.Start, l.End, cssEscape(repl, l.Quote)})
		}
	}
	if len(changes) == 0 && !(m.o.BackupConverted && m.linksConverted > 0) {
		return false, nil // else copied as it is: -K rewrites it, as wget does
	}
	in, err := open()
	if err != nil {
		return false, err
	}
	defer in.Close()
	at := int64(0)
	for _, c := range changes {
		if _, err := io.CopyN(w, in, c.start-at); err != nil {
			return false, err
		}
		if _, err := io.CopyN(io.Discard, in, c.end-c.start); err != nil {
			return false, err
		}
		if _, err := io.WriteString(w, c.text); err != nil {
			return false, err
		}
		at = c.end
	}
	_, err = io.Copy(w, in)
	return true, err
}

// cssEscape writes a URL into a style sheet: in a string quoted with
// quote, its quote, backslash and line ends escaped; in url( ) without
// quotes (quote 0), also white space, parentheses and quotes.
func cssEscape(s string, quote byte) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == quote && quote != 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n' || c == '\r' || c == '\f' || quote == 0 && (c == ' ' || c == '\t'):
			fmt.Fprintf(&b, "\\%x ", c)
		case quote == 0 && (c == '(' || c == ')' || c == '"' || c == '\''):
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// rewriteLink is what a link of page p (resolved against base) becomes:
// the relative path of the file written for it, its fragment kept; the
// absolute URL when it was relative and nothing was written for it; or
// the link as it was.
func (m *run) rewriteLink(v string, base *url.URL, p writtenPage) string {
	t := strings.TrimSpace(v)
	if t == "" || strings.HasPrefix(t, "#") {
		return v
	}
	ref, err := url.ParseReference(url.Canonicalize(t))
	if err != nil {
		return v
	}
	abs := base.ResolveReference(ref)
	if rel, ok := m.written[linkKey(abs)]; ok {
		m.linksConverted++
		local := relativeLink(p.rel, rel)
		if abs.HasFragment {
			local += "#" + abs.Fragment
		}
		return local
	}
	if ref.Scheme == "" && m.c.Follows(p.u, abs) {
		m.linksConverted++
		return abs.String()
	}
	return v
}

// rewriteSrcset rewrites each URL of a srcset attribute, keeping its
// width or density descriptor.
func (m *run) rewriteSrcset(v string, base *url.URL, p writtenPage) string {
	parts := strings.Split(v, ",")
	for i, c := range parts {
		f := strings.Fields(c)
		if len(f) == 0 {
			continue
		}
		f[0] = m.rewriteLink(f[0], base, p)
		parts[i] = strings.Join(f, " ")
	}
	return strings.Join(parts, ", ")
}

// relativeLink is the link from the page at from to the file at to, both
// "/" separated paths below OutputDir, escaped as a URL path.
func relativeLink(from, to string) string {
	var fd []string // from's folders
	if d := path.Dir(from); d != "." {
		fd = strings.Split(d, "/")
	}
	td := strings.Split(to, "/")
	i := 0
	for i < len(fd) && i < len(td)-1 && fd[i] == td[i] {
		i++
	}
	rel := strings.Repeat("../", len(fd)-i) + strings.Join(td[i:], "/")
	return (&neturl.URL{Path: rel}).String() // "./" before a first name with a colon
}

// attrSpan is where an attribute is in a raw start tag: from start, its
// name, and its value without quotes (value[0] -1 when it has none).
type attrSpan struct {
	start  int
	name   [2]int
	value  [2]int
	quoted bool
}

// tagAttrs finds the attributes of a raw start tag ("<a href=x ...>") as
// the HTML tokenizer reads them (WHATWG HTML, 13.2.5.32 onwards).
func tagAttrs(raw []byte) []attrSpan {
	space := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }
	i := 1
	for i < len(raw) && !space(raw[i]) && raw[i] != '/' && raw[i] != '>' {
		i++ // the tag's name
	}
	var out []attrSpan
	for i < len(raw) {
		for i < len(raw) && (space(raw[i]) || raw[i] == '/') {
			i++
		}
		if i >= len(raw) || raw[i] == '>' {
			break
		}
		a := attrSpan{start: i, value: [2]int{-1, -1}}
		a.name[0] = i
		i++ // a first '=' belongs to the name
		for i < len(raw) && !space(raw[i]) && raw[i] != '/' && raw[i] != '>' && raw[i] != '=' {
			i++
		}
		a.name[1] = i
		j := i
		for j < len(raw) && space(raw[j]) {
			j++
		}
		if j < len(raw) && raw[j] == '=' {
			j++
			for j < len(raw) && space(raw[j]) {
				j++
			}
			if j < len(raw) && (raw[j] == '"' || raw[j] == '\'') {
				q := raw[j]
				end := bytes.IndexByte(raw[j+1:], q)
				if end < 0 {
					break // unterminated: the tokenizer would not have ended the tag here
				}
				a.value = [2]int{j + 1, j + 1 + end}
				a.quoted = true
				i = j + 1 + end + 1
			} else {
				k := j
				for k < len(raw) && !space(raw[k]) && raw[k] != '>' {
					k++
				}
				a.value = [2]int{j, k}
				i = k
			}
		}
		out = append(out, a)
	}
	return out
}
