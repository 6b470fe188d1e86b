// Package links finds the links of web documents, streaming, never
// holding a page whole: what a crawler follows from an HTML page and
// what the page is shown with (Read, All, Kinds; Attrs names the
// attributes by element), what a style sheet loads (CSS, and CSSSpans
// with the offsets a link converter rewrites), and the <a> links of an
// index page (Anchors). It is link extraction only: fetching is package
// fetch's, following and rewriting package crawl's.
package links
