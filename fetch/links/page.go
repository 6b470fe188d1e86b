package links

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"golang.org/x/net/html"
)

// maxLinks bounds the links All and CSS return: a page
// that holds more (a hostile one) gives its first 131,072.
const maxLinks = 1 << 17

// pageLinkAttrs are the attributes holding what a crawler follows from
// an HTML page, by element: its links, and what it is shown with (images,
// style sheets, scripts, frames, media), as wget's recursive retrieval
// takes them.
var pageLinkAttrs = map[string][]string{
	"a": {"href"}, "area": {"href"}, "link": {"href"},
	"img": {"src", "srcset", "lowsrc"}, "source": {"src", "srcset"}, "input": {"src"},
	"script": {"src"}, "iframe": {"src"}, "frame": {"src"}, "embed": {"src"},
	"video": {"src", "poster"}, "audio": {"src"}, "track": {"src"}, "object": {"data"},
	"body": {"background"}, "table": {"background"}, "td": {"background"}, "th": {"background"},
}

// Attrs returns the attributes of an HTML element (its name in
// lower case) whose links All follows, or nil.
func Attrs(element string) []string {
	return pageLinkAttrs[element]
}

// All returns what a crawler follows from an HTML page, read as a
// stream of tokens (golang.org/x/net/html), never whole: the links of
// <a>, <area> and <link> (but those that only name a server to connect to
// early: rel preconnect and dns-prefetch), the sources of images (srcset's
// each), frames, scripts, media and objects, body and table backgrounds,
// a <meta http-equiv="refresh">'s URL, and what its <style> elements load
// (CSS). Base is the href of the page's first <base> element, if
// any: the links are relative to it. It returns 131,072 links at most,
// and stops reading there, or at a token past 1 MiB (an inline script, a
// data: URL), returning the links before it.
func All(r io.Reader) (links []string, base string, err error) {
	kinds, base, err := Kinds(r)
	if err != nil {
		return nil, "", err
	}
	links = make([]string, len(kinds))
	for i, l := range kinds {
		links[i] = l.URL
	}
	return links, base, nil
}

// Link is a link of an HTML page (Kinds).
type Link struct {
	URL string
	// Inline says the page is shown with what the link names, as wget's
	// --page-requisites takes it: an image, a style sheet (<link
	// rel=stylesheet>) or an icon, a script, a frame, media, an object,
	// a background, what a <style> element loads; not where an <a> or
	// <area> leads, nor another <link> or a refresh.
	Inline bool
}

// Kinds is All with each link's kind.
func Kinds(r io.Reader) (links []Link, base string, err error) {
	p, err := Read(r)
	if err != nil {
		return nil, "", err
	}
	return p.Links, p.Base, nil
}

// A Page is what Read finds in an HTML page.
type Page struct {
	Links []Link // as Kinds returns them
	Base  string // the href of the first <base>, if any
	// NoFollow says a <meta name="robots"> asks robots not to follow
	// the page's links (its content names nofollow or none), as wget
	// honours it unless told to ignore robots.
	NoFollow bool
}

// Read reads an HTML page as Kinds does, and whether it asks
// robots not to follow its links.
func Read(r io.Reader) (*Page, error) {
	var links []Link
	var base string
	noFollow := false
	z := html.NewTokenizer(r)
	z.SetMaxBuf(1 << 20)
	seenBase := false
	inStyle := false   // the text next is a <style> element's
	var found []string // a tag's links
	for len(links) < maxLinks {
		tt := z.Next()
		style := inStyle
		inStyle = false
		switch tt {
		case html.ErrorToken:
			if z.Err() == io.EOF || errors.Is(z.Err(), html.ErrBufferExceeded) {
				return &Page{links, base, noFollow}, nil
			}
			return nil, z.Err()
		case html.TextToken:
			if style {
				css, _ := CSS(bytes.NewReader(z.Text()))
				for _, l := range css {
					links = append(links, Link{l, true})
				}
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if tt == html.StartTagToken && string(name) == "style" {
				inStyle = true
				continue
			}
			if !hasAttr {
				continue
			}
			attrs := pageLinkAttrs[string(name)]
			isBase, isMeta, isLink := string(name) == "base", string(name) == "meta", string(name) == "link"
			if attrs == nil && !isBase && !isMeta {
				continue
			}
			found = found[:0]
			var rel, equiv, content, metaName string
			for more := true; more; {
				var k, v []byte
				k, v, more = z.TagAttr()
				switch {
				case isBase && string(k) == "href" && !seenBase:
					base, seenBase = strings.TrimSpace(string(v)), true
				case isMeta && string(k) == "http-equiv":
					equiv = string(v)
				case isMeta && string(k) == "content":
					content = string(v)
				case isMeta && string(k) == "name":
					metaName = string(v)
				case isLink && string(k) == "rel":
					rel = strings.ToLower(string(v))
				case string(k) == "srcset":
					found = append(found, srcset(string(v))...)
				default:
					for _, a := range attrs {
						if string(k) == a {
							found = append(found, string(v))
						}
					}
				}
			}
			if isLink && onlyConnects(rel) {
				continue
			}
			inline := !navigates[string(name)] && (!isLink || shownWith(rel))
			if isMeta && strings.EqualFold(strings.TrimSpace(metaName), "robots") && robotsNoFollow(content) {
				noFollow = true
			}
			if isMeta && strings.EqualFold(strings.TrimSpace(equiv), "refresh") {
				if u := refreshURL(content); u != "" {
					found = append(found, u)
				}
			}
			for _, l := range found {
				if l = strings.TrimSpace(l); l != "" {
					links = append(links, Link{l, inline})
				}
			}
		}
	}
	return &Page{links[:maxLinks], base, noFollow}, nil
}

// robotsNoFollow says whether a robots <meta>'s content names nofollow
// or none.
func robotsNoFollow(content string) bool {
	for _, w := range strings.Split(content, ",") {
		if w = strings.ToLower(strings.TrimSpace(w)); w == "nofollow" || w == "none" {
			return true
		}
	}
	return false
}

// navigates holds the elements whose links lead elsewhere rather than
// show the page: <a>, <area> and a refresh's <meta>.
var navigates = map[string]bool{"a": true, "area": true, "meta": true}

// shownWith says a <link>'s rel names what the page is shown with: a
// style sheet or an icon, as wget's --page-requisites takes them.
func shownWith(rel string) bool {
	for _, r := range strings.Fields(rel) {
		if r == "stylesheet" || r == "icon" {
			return true
		}
	}
	return false
}

// onlyConnects says a <link>'s rel names only early connections, no
// resource to fetch.
func onlyConnects(rel string) bool {
	f := strings.Fields(rel)
	for _, r := range f {
		if r != "preconnect" && r != "dns-prefetch" {
			return false
		}
	}
	return len(f) > 0
}

// srcset is the URLs of a srcset attribute: candidates separated by
// commas, each a URL and an optional descriptor ("a.png 2x, b.png 640w").
// A URL may hold commas itself; one ends at white space, or at a comma
// that white space or the end follows.
func srcset(v string) []string {
	var out []string
	for {
		v = strings.TrimLeft(v, " \t\n\f\r,")
		if v == "" {
			return out
		}
		end := strings.IndexAny(v, " \t\n\f\r")
		if end < 0 {
			end = len(v)
		}
		u := v[:end]
		v = v[end:]
		if t := strings.TrimRight(u, ","); t != u {
			u = t // the candidate ends here, without a descriptor
		} else if i := strings.IndexByte(v, ','); i >= 0 {
			v = v[i+1:] // past the descriptor
		} else {
			v = ""
		}
		if u != "" {
			out = append(out, u)
		}
	}
}

// refreshURL is the URL of a refresh's content ("5; url=next.html", the
// quotes and "url=" optional), or "" if it names none.
func refreshURL(content string) string {
	_, rest, ok := strings.Cut(content, ";")
	if !ok {
		if _, rest, ok = strings.Cut(content, ","); !ok {
			return ""
		}
	}
	rest = strings.TrimSpace(rest)
	if len(rest) >= 3 && strings.EqualFold(rest[:3], "url") {
		if after := strings.TrimLeft(rest[3:], " \t"); strings.HasPrefix(after, "=") {
			rest = strings.TrimSpace(after[1:])
		}
	}
	if len(rest) > 0 && (rest[0] == '\'' || rest[0] == '"') {
		q := rest[0]
		rest = rest[1:]
		if i := strings.IndexByte(rest, q); i >= 0 {
			rest = rest[:i]
		}
	}
	return strings.TrimSpace(rest)
}
