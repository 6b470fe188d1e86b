package links_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/urlderef/deref/fetch/links"
)

// A page's links and what it is shown with, in the order they come; the
// first <base>; nothing from attributes that hold no link.
func TestPageLinks(t *testing.T) {
	page := `<!doctype html><html><head>
<base href="https://h.example/docs/"><base href="/ignored/">
<meta http-equiv="Refresh" content="30; URL='next.html'">
<meta name="description" content="0; url=not-a-link.html">
<link rel="stylesheet" href="style.css"><link rel="preconnect dns-prefetch" href="//cdn.example">
<link rel="icon preconnect" href="favicon.ico">
<script src="app.js"></script>
</head><body background="bg.png">
<a href="a.html" title="b.html">a</a><a name="anchor">no href</a>
<img src="i.png" srcset="i-2x.png 2x, https://h.example/i,3x.png 3x,i-640.png" alt="x.png">
<picture><source srcset=" s1.webp 1x ,s2.webp 2x "></picture>
<map><area href="area.html"></map>
<iframe src="frame.html"></iframe><video src="v.mp4" poster="poster.jpg"><track src="t.vtt"></video>
<object data="o.svg"></object><table background="t.png"><tr><td background="td.png">x</td></tr></table>
<input type="image" src="button.png"><form action="post.cgi"></form>
<a href="  spaced.html  ">s</a><a href="">empty</a>
</body></html>`
	found, base, err := links.All(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"next.html", "style.css", "favicon.ico", "app.js", "bg.png", "a.html",
		"i.png", "i-2x.png", "https://h.example/i,3x.png", "i-640.png", "s1.webp", "s2.webp", "area.html",
		"frame.html", "v.mp4", "poster.jpg", "t.vtt", "o.svg", "t.png", "td.png", "button.png", "spaced.html"}
	if !slices.Equal(found, want) {
		t.Errorf("found\n got %q\nwant %q", found, want)
	}
	if base != "https://h.example/docs/" {
		t.Errorf("base %q", base)
	}
}

// Any page, however broken, gives links without a crash, none empty.
func FuzzPageLinks(f *testing.F) {
	f.Add(`<img srcset=",, a 1x,,b,c 2x , "><meta http-equiv=refresh content="0;url='x"><base href=" ">`)
	f.Add(`<link rel="preconnect" href="//x"><a href="y">`)
	f.Fuzz(func(t *testing.T, page string) {
		found, _, _ := links.All(strings.NewReader(page))
		for _, l := range found {
			if l == "" || strings.TrimSpace(l) != l {
				t.Fatalf("link %q", l)
			}
		}
	})
}

// A style sheet's url()s, quoted or not, escaped or not, and its
// @imports; nothing in comments or other strings.
func TestCSSLinks(t *testing.T) {
	css := `@charset "utf-8";
@import "base.css";
@import url(print.css) print;
@IMPORT'theme.css';
/* url(commented.png) @import "commented.css"; */
body { background: URL( "bg.png" ) no-repeat; font-family: "url(not-a-link)"; }
.a { background-image: url(  spaced.png  ), url('single.png'); }
.b::before { content: 'url(also-not)'; background: url(es\28 caped\29.png); }
.c { mask: myurl(no.png); src: url(data:font/woff2;base64,AAAA) format("woff2"); }
.d { background: url("bad
newline.png"); cursor: url(lost-in-a-string.cur); }
.e { cursor: url(cursor.cur), auto; background: url(unclosed.png`
	found, err := links.CSS(strings.NewReader(css))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"base.css", "print.css", "theme.css", "bg.png", "spaced.png", "single.png", "es(caped).png",
		"data:font/woff2;base64,AAAA", "cursor.cur"}
	if !slices.Equal(found, want) {
		t.Errorf("found\n got %q\nwant %q", found, want)
	}
	page := `<style>@import "s.css"; p { background: url(p.png) }</style><style media=print>/* url(x) */ q { background: url(q.png) }</style><p style="x">`
	found, _, err = links.All(strings.NewReader(page))
	if err != nil || !slices.Equal(found, []string{"s.css", "p.png", "q.png"}) {
		t.Errorf("a page's style elements: %q %v", found, err)
	}
}

// Any style sheet gives links without a crash, none empty.
func FuzzCSSLinks(f *testing.F) {
	f.Add(`@import"x";a{b:url(\41 \
)}/*`)
	f.Fuzz(func(t *testing.T, css string) {
		found, _ := links.CSS(strings.NewReader(css))
		for _, l := range found {
			if l == "" {
				t.Fatal("an empty link")
			}
		}
	})
}

// A page or style sheet of more links than anyone writes gives the first
// 131,072 of them.
func TestLinksBounded(t *testing.T) {
	page := strings.Repeat(`<img src="a" srcset="b 1x, c 2x">`, 50000)
	found, _, err := links.All(strings.NewReader(page))
	if err != nil || len(found) != 1<<17 {
		t.Errorf("%d found, %v", len(found), err)
	}
	css, err := links.CSS(strings.NewReader(strings.Repeat("a{b:url(c)}", 140000)))
	if err != nil || len(css) != 1<<17 {
		t.Errorf("%d style sheet found, %v", len(css), err)
	}
}

// A token past the tokenizer's 1 MiB (an inline script) ends the reading
// with the links before it, not an error.
func TestPageLinksLongToken(t *testing.T) {
	page := `<a href="before.html">b</a><script>` + strings.Repeat("x", 2<<20) + `</script><a href="after.html">a</a>`
	found, _, err := links.All(strings.NewReader(page))
	if err != nil || !slices.Equal(found, []string{"before.html"}) {
		t.Errorf("%q %v", found, err)
	}
}

// Each link's kind: what the page is shown with (Inline), as wget -p
// takes it, or where it leads.
func TestPageLinkKinds(t *testing.T) {
	page := `<link rel="stylesheet" href="s.css"><link rel="Alternate Stylesheet" href="alt.css"><link rel="shortcut icon" href="i.ico">
<link rel="next" href="next.html"><meta http-equiv="refresh" content="0; url=r.html">
<style>@import "imp.css"; p { background: url(bg.png) }</style>
<a href="a.html"><img src="img.png" srcset="x1.png 1x, x2.png 2x"></a><area href="area.html">
<script src="s.js"></script><iframe src="f.html"></iframe><video src="v.mp4" poster="p.jpg"></video>
<object data="o.svg"></object><body background="b.gif"><input type="image" src="in.png">`
	got, _, err := links.Kinds(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var inline, leads []string
	for _, l := range got {
		if l.Inline {
			inline = append(inline, l.URL)
		} else {
			leads = append(leads, l.URL)
		}
	}
	wantInline := []string{"s.css", "alt.css", "i.ico", "imp.css", "bg.png", "img.png", "x1.png", "x2.png", "s.js", "f.html", "v.mp4", "p.jpg", "o.svg", "b.gif", "in.png"}
	wantLeads := []string{"next.html", "r.html", "a.html", "area.html"}
	if !slices.Equal(inline, wantInline) || !slices.Equal(leads, wantLeads) {
		t.Errorf("inline %q\nwant   %q\nleads %q\nwant  %q", inline, wantInline, leads, wantLeads)
	}
	plain, _, _ := links.All(strings.NewReader(page))
	if len(plain) != len(got) {
		t.Errorf("PageLinks gives %d found, PageLinkKinds %d", len(plain), len(got))
	}
}

// Where each URL of a style sheet is written: between the quotes, or in
// url( ) without the white space around it, escapes as written.
func TestCSSLinkSpans(t *testing.T) {
	css := `@import "a.css"; @import url( 'b.css' ); p { background: url(  c\28 1\29.png  ) } /* url(no.png) */ q { x: url(d.png) }` +
		"\nr { y: url(\"e f.png\") }"
	got, err := links.CSSSpans(strings.NewReader(css))
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"a.css", "a.css"}, {"b.css", "b.css"}, {"c(1).png", `c\28 1\29.png`}, {"d.png", "d.png"}, {"e f.png", "e f.png"}}
	if len(got) != len(want) {
		t.Fatalf("%d found: %+v", len(got), got)
	}
	for i, l := range got {
		if l.URL != want[i][0] || css[l.Start:l.End] != want[i][1] {
			t.Errorf("link %d: %q at %q, want %q at %q", i, l.URL, css[l.Start:l.End], want[i][0], want[i][1])
		}
	}
}

// TestReadPageNoFollow: a robots <meta> whose content names nofollow or
// none (any case, among other words) asks not to follow the page's
// links; another robot's name, or other words, do not.
func TestReadPageNoFollow(t *testing.T) {
	for _, tt := range []struct {
		page string
		want bool
	}{
		{`<meta name="robots" content="noindex, nofollow"><a href="x">`, true},
		{`<META NAME=Robots CONTENT=NONE><a href="x">`, true},
		{`<meta name="robots" content="index,follow"><a href="x">`, false},
		{`<meta name="googlebot" content="nofollow"><a href="x">`, false},
		{`<a href="x" rel="nofollow">`, false},
		{`<meta http-equiv="refresh" content="0; url=nofollow">`, false},
	} {
		p, err := links.Read(strings.NewReader(tt.page))
		if err != nil || p.NoFollow != tt.want || len(p.Links) != 1 && !strings.Contains(tt.page, "refresh") {
			t.Errorf("%s: %+v %v, want NoFollow %v", tt.page, p, err, tt.want)
		}
	}
}
