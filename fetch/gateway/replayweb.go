package gateway

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"mime"
	"net/http"
	"strings"

	xhtml "golang.org/x/net/html"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/links"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/url"
)

// webPage replays an HTTP capture: its status and type, a redirect to
// the memento of where it led, an HTML page or a style sheet with every
// link rewritten to its memento at the capture's time (and a banner
// naming the capture), anything else as it was.
func (p *replayer) webPage(w *logWriter, r *http.Request, u *url.URL, c warc.Capture) {
	v := replayOf(r)
	pl, err := v.a.Open(c)
	if err != nil {
		p.g.fail(w, r, http.StatusBadGateway, err.Error())
		return
	}
	defer pl.Close()
	if pl.Head == nil {
		p.payload(w, r, c)
		return
	}
	rw := &rewriter{v: v, base: u, table: p.g.c}
	status := pl.Head.StatusCode
	if loc := pl.Head.Header.Get("Location"); loc != "" && status >= 300 && status < 400 {
		w.Header().Set("Location", rw.link(loc))
		w.WriteHeader(status)
		return
	}
	ctype := pl.Head.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ctype)
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	defer bw.Flush()
	switch mt {
	case "text/html", "application/xhtml+xml":
		rw.html(bw, io.LimitReader(pl, p.g.o.MaxPage))
	case "text/css":
		b, _ := io.ReadAll(io.LimitReader(pl, p.g.o.MaxPage))
		bw.WriteString(rw.css(string(b)))
	default:
		io.Copy(bw, pl)
	}
}

// rewriter rewrites a replayed page's links to mementos.
type rewriter struct {
	v     *replayView
	base  *url.URL
	table *fetch.Client // its schemes: what a link may lead to
}

// link is where a link of the page leads in the archive: its memento at
// the page's time (which says "not archived" where there is none); a
// fragment stays; a URL of a scheme that designates no object (mailto:,
// a telnet: session) is kept as it is, and one of a scheme deref does
// not know (javascript:, data:) or of this machine's files leads nowhere.
func (rw *rewriter) link(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" || strings.HasPrefix(raw, "#") {
		return raw
	}
	ref, err := url.ParseReference(raw)
	if err != nil {
		return "#"
	}
	abs := rw.base.ResolveReference(ref)
	frag := ""
	if abs.HasFragment {
		frag = "#" + abs.Fragment
		abs.HasFragment, abs.Fragment = false, ""
	}
	sc, known := rw.table.Scheme(abs.Scheme)
	switch {
	case !known || sc.Local:
		return "#"
	case sc.Session || sc.Fetcher == nil:
		return abs.String()
	}
	return rw.v.path(abs) + frag
}

// srcset rewrites each candidate of a srcset value.
func (rw *rewriter) srcset(v string) string {
	parts := strings.Split(v, ",")
	for i, p := range parts {
		f := strings.Fields(p)
		if len(f) == 0 {
			continue
		}
		f[0] = rw.link(f[0])
		parts[i] = strings.Join(f, " ")
	}
	return strings.Join(parts, ", ")
}

// css rewrites what a style sheet loads (url(), @import).
func (rw *rewriter) css(s string) string {
	spans, err := links.CSSSpans(strings.NewReader(s))
	if err != nil && len(spans) == 0 {
		return s
	}
	var b strings.Builder
	at := int64(0)
	for _, sp := range spans {
		if sp.Start < at || sp.End > int64(len(s)) {
			continue
		}
		b.WriteString(s[at:sp.Start])
		b.WriteString(cssEscape(rw.link(sp.URL), sp.Quote))
		at = sp.End
	}
	b.WriteString(s[at:])
	return b.String()
}

// cssEscape writes a URL where a style sheet had one: in quotes, or bare
// in url( ).
func cssEscape(u string, quote byte) string {
	r := strings.NewReplacer(`\`, `\\`, "\n", `\a `, `"`, `\"`, `'`, `\'`, "(", `\(`, ")", `\)`, " ", `\ `)
	if quote != 0 {
		r = strings.NewReplacer(`\`, `\\`, "\n", `\a `, string(quote), `\`+string(quote))
	}
	return r.Replace(u)
}

// html streams an HTML page with its links rewritten: every attribute
// links.Attrs names, a form's action, srcset, a refresh's URL, style
// attributes and <style> elements; <base> is dropped, every link being
// absolute once rewritten; the banner follows <body>.
func (rw *rewriter) html(w *bufio.Writer, r io.Reader) {
	z := xhtml.NewTokenizer(r)
	z.SetMaxBuf(1 << 20)
	inStyle, banner := false, false
	for {
		tt := z.Next()
		switch tt {
		case xhtml.ErrorToken:
			if !banner {
				rw.banner(w)
			}
			return
		case xhtml.TextToken:
			if inStyle {
				w.WriteString(rw.css(string(z.Raw())))
				continue
			}
			w.Write(z.Raw())
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			if tag == "base" {
				continue
			}
			inStyle = tag == "style" && tt == xhtml.StartTagToken
			follows := links.Attrs(tag)
			var b strings.Builder
			b.WriteString("<" + tag)
			refresh := false
			var attrs [][2]string
			for hasAttr {
				k, val, more := z.TagAttr()
				attrs = append(attrs, [2]string{string(k), string(val)})
				if string(k) == "http-equiv" && strings.EqualFold(string(val), "refresh") {
					refresh = true
				}
				hasAttr = more
			}
			for _, a := range attrs {
				k, val := a[0], a[1]
				switch {
				case k == "srcset":
					val = rw.srcset(val)
				case k == "style":
					val = rw.css(val)
				case k == "action" && tag == "form", contains(follows, k), k == "xlink:href", k == "href" && inSVG(tag):
					val = rw.link(val)
				case refresh && k == "content":
					if i := strings.Index(strings.ToLower(val), "url="); i >= 0 {
						val = val[:i+4] + rw.link(strings.Trim(val[i+4:], `'" `))
					}
				}
				b.WriteString(" " + k + `="` + html.EscapeString(val) + `"`)
			}
			if tt == xhtml.SelfClosingTagToken {
				b.WriteString("/")
			}
			b.WriteString(">")
			w.WriteString(b.String())
			if tag == "body" && !banner {
				banner = true
				rw.banner(w)
			}
		case xhtml.EndTagToken:
			inStyle = false
			w.Write(z.Raw())
		default:
			w.Write(z.Raw())
		}
	}
}

// banner names the capture shown, its original URL and the live page.
// It is written in ASCII, every other character a numeric reference, so
// that it reads right in whatever character set the page is (an nginx
// index page declaring none is read as windows-1252), and names the
// captures just before and after.
func (rw *rewriter) banner(w *bufio.Writer) {
	n := rw.v.neighbours(rw.base)
	b := `<div class="deref-replay">Archived ` + asciiHTML(rw.v.at.UTC().Format("2006-01-02 15:04:05 UTC")) +
		`: <a class="live" href="` + asciiHTML(rw.v.liveLink(rw.base)) + `">` + asciiHTML(rw.base.Redacted()) + `</a> (live) &#183; `
	for _, l := range []struct{ rel, href, text string }{{"first", n.first, "first capture"}, {"prev", n.prev, "previous capture"}, {"next", n.next, "next capture"}, {"last", n.last, "last capture"}} {
		if l.href != "" {
			b += `<a rel="` + l.rel + `" href="` + asciiHTML(l.href) + `">` + l.text + `</a> &#183; `
		}
	}
	w.WriteString(b + `<a href="` + asciiHTML(rw.v.base) + `/` + asciiHTML(rw.v.coll) + `/*/` + asciiHTML(rw.base.String()) + `">every capture</a></div>`)
}

// asciiHTML escapes s for HTML text or a quoted attribute, every
// character past ASCII as a numeric character reference.
func asciiHTML(s string) string {
	s = html.EscapeString(s)
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "&#%d;", r)
		}
	}
	return b.String()
}

// inSVG says whether tag is one of SVG's that link (a, image, use,
// feImage, textPath, pattern, linearGradient, radialGradient, filter,
// script, animate and set), whose href (and xlink:href) lead
// somewhere as an HTML link does.
func inSVG(tag string) bool {
	switch tag {
	case "a", "image", "use", "feimage", "textpath", "pattern", "lineargradient", "radialgradient", "filter", "script", "animate", "set", "mpath":
		return true
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
