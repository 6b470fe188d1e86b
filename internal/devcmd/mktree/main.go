// Command mktree writes the tree of files the interoperability suite
// serves from real daemons: text, binary, nested, spaced and otherwise
// awkward names, all with a fixed modification time. The content is
// deterministic, so the tests can compare checksums with the files here.
//
//	go run ./internal/devcmd/mktree DIR
package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// png1x1 is a PNG image of one black pixel.
var png1x1 = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x00\x00\x00\x00:~\x9bU\x00\x00\x00\nIDATx\x9cc`\x00\x00\x00\x02\x00\x01H\xaf\xa4q\x00\x00\x00\x00IEND\xaeB`\x82")

// ModTime is the modification time of every file and folder of the tree.
var ModTime = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: mktree DIR")
		os.Exit(2)
	}
	if err := write(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "mktree:", err)
		os.Exit(1)
	}
}

func write(root string) error {
	rnd := rand.New(rand.NewPCG(1738, 1630))
	random := make([]byte, 3<<20+17)
	for i := range random {
		random[i] = byte(rnd.Uint32())
	}
	files := map[string][]byte{
		"hello.txt":                        []byte("Hello from the interoperability tree.\n"),
		"pub/README.txt":                   []byte(strings.Repeat("The pub folder, served by a real daemon.\n", 9)),
		"pub/with space.txt":               []byte("a name with a space\n"),
		"pub/semi;colon.txt":               []byte("a name with a semicolon\n"),
		"pub/percent%sign.txt":             []byte("a name with a percent sign\n"),
		"pub/random.bin":                   random,
		"pub/empty.txt":                    {},
		"pub/crlf.txt":                     []byte("line one\r\nline two\r\n"),
		"pub/nested/deeper/deepest.txt":    []byte("three levels down\n"),
		"pub/nested/sibling.txt":           []byte("beside deeper\n"),
		"home/alice/alice.txt":             []byte("alice's own file\n"),
		"pub/nested/deeper/with space/x y": []byte("spaces in folder and file\n"),
		// A small site whose links deref crawl -k rewrites as wget -k does.
		"conv/index.html": []byte(`<!doctype html>
<html><head><title>conv</title><link rel="stylesheet" href="/conv/style.css"></head>
<body>
<a href="sub/">a folder</a>
<a href="/conv/sub/page.html#part">root-relative, with a fragment</a>
<a href='../outside.html'>above the start: not fetched, made absolute</a>
<a href="https://example.invalid/x">another site</a>
<a href="mailto:someone@example.invalid">mail</a>
<img src="img/a.png" srcset="img/a.png 1x, /conv/img/b.png 2x" alt="a &amp; b">
</body></html>
`),
		"conv/sub/index.html": []byte("<!doctype html><title>sub</title><a href=\"page.html\">page</a>\n"),
		"conv/sub/page.html":  []byte("<!doctype html><title>page</title>\n<a href=\"../\">up</a> <a href=\"../index.html\">index</a>\n<img src=\"../img/a.png\">\n"),
		"conv/style.css":      []byte("body { margin: 0 }\n"),
		"conv/img/a.png":      []byte("not a PNG: a\n"),
		"conv/img/b.png":      []byte("not a PNG: b\n"),
		"outside.html":        []byte("<!doctype html><title>outside</title>\n"),
		// A site that deref crawl archives and deref serve --archive
		// replays in a browser: a style sheet with a background, an
		// image, a script, a second page.
		"replay/index.html": []byte(`<!doctype html>
<html><head><title>replay</title><link rel="stylesheet" href="style.css"><script src="app.js"></script></head>
<body><p>The replayed page.</p><img id="dot" src="img/dot.png" alt="dot"> <a href="page2.html">the second page</a></body></html>
`),
		"replay/page2.html":  []byte("<!doctype html><title>page 2</title><p>The second page.</p><a href=\"index.html\">back</a>\n"),
		"replay/style.css":   []byte("body { background: url(img/bg.png) }\n"),
		"replay/app.js":      []byte("document.title = 'the script ran';\n"),
		"replay/img/dot.png": png1x1,
		"replay/img/bg.png":  png1x1,
		// A site whose pages are shown with files outside their folder,
		// which deref crawl -p fetches as wget -p does.
		"req/docs/index.html": []byte(`<!doctype html>
<html><head><title>docs</title><link rel="stylesheet" href="../static/style.css"><link rel="icon" href="/req/static/icon.png">
<style>p { background: url(/req/static/pic.png) }</style></head>
<body>
<img src="../static/logo.png" alt="logo">
<a href="page.html">a page</a>
<a href="../other.html">above the start</a>
<iframe src="../static/frame.html"></iframe>
</body></html>
`),
		"req/docs/page.html":    []byte("<!doctype html><title>page</title>\n<img src=\"../static/pic.png\">\n<a href=\"deep.html\">deeper</a>\n"),
		"req/docs/deep.html":    []byte("<!doctype html><title>deep</title>\n<img src=\"../static/deep.png\">\n"),
		"req/static/style.css":  []byte("@import \"more.css\";\nbody { background: url(/req/static/bg.png) }\nh1 { background: url( '../static/logo.png' ) }\n"),
		"req/static/more.css":   []byte("p { color: red }\n"),
		"req/static/frame.html": []byte("<!doctype html><title>frame</title>\n<img src=\"fimg.png\"> <a href=\"nav.html\">nav</a>\n"),
		"req/static/nav.html":   []byte("<!doctype html><title>nav</title>\n"),
		"req/other.html":        []byte("<!doctype html><title>other</title>\n"),
	}
	// A site of files to pick with deref crawl -A and -R, as with wget's:
	// x.pdf twice, in two folders, for -nd.
	files["acc/index.html"] = []byte("<!doctype html><title>acc</title>\n<a href=\"x.pdf\">x</a> <a href=\"y.txt\">y</a> <a href=\"sub/\">sub</a> <a href=\"p.html\">p</a> <a href=\"N.PDF\">n</a>\n")
	files["acc/sub/index.html"] = []byte("<!doctype html><title>sub</title>\n<a href=\"x.pdf\">another x</a> <a href=\"z.pdf\">z</a> <a href=\"../y.txt\">y</a>\n")
	files["acc/p.html"] = []byte("<!doctype html><title>p</title>\n<a href=\"w.pdf\">w</a>\n")
	for _, name := range []string{"x.pdf", "y.txt", "w.pdf", "N.PDF", "sub/x.pdf", "sub/z.pdf"} {
		files["acc/"+name] = []byte("file acc/" + name + "\n")
	}
	// A site whose URLs make odd file names, for deref crawl
	// --restrict-file-names as against wget's: queries, escaped
	// characters, a name not in ASCII, case.
	files["names/index.html"] = []byte("<!doctype html><title>names</title>\n" +
		`<a href="a.html?x=1">1</a> <a href="a.html?x=2&amp;y=%2F">2</a> <a href="b.html?">3</a> <a href="./?page=2">4</a> ` +
		`<a href="c%3Ad.html">5</a> <a href="e%20f.html">6</a> <a href="g%C3%A9.html">7</a> <a href="b%5Cc.html">8</a> ` +
		`<a href="h%25i.html">9</a> <a href="a.html?c=%01%7F">10</a> <a href="A.HTML?Y=1">11</a> <a href="j%23k.html">12</a> ` +
		`<a href="a.html?k=%3A%26%2B%41%25x">13</a> <a href="b.html?` + strings.Repeat("q", 300) + `">14</a>` + "\n")
	for _, name := range []string{"a.html", "b.html", "c:d.html", "e f.html", "gé.html", `b\c.html`, "h%i.html", "A.HTML", "j#k.html"} {
		files["names/"+name] = []byte("file names/" + name + "\n")
	}
	// Links to folders without their slash, which nginx sends on to the
	// folder's URL with it: their pages' links are relative to that.
	files["redir/index.html"] = []byte("<!doctype html><title>redir</title>\n<a href=\"sub\">sub</a> <a href=\"sub/deeper\">deeper</a>\n")
	files["redir/sub/index.html"] = []byte("<!doctype html><title>sub</title>\n<a href=\"leaf.txt\">leaf</a> <a href=\"deeper\">deeper</a>\n")
	files["redir/sub/leaf.txt"] = []byte("leaf\n")
	files["redir/sub/deeper/index.html"] = []byte("<!doctype html><title>deeper</title>\n<a href=\"end.txt\">end</a>\n")
	files["redir/sub/deeper/end.txt"] = []byte("end\n")
	// A page whose robots <meta> asks not to follow its links, and one
	// whose link has rel=nofollow (which wget, as deref, does not heed).
	files["nofollow/index.html"] = []byte("<!doctype html><meta name=\"robots\" content=\"noindex, nofollow\"><title>nofollow</title>\n<a href=\"a.html\">a</a> <img src=\"i.png\"> <a href=\"rel.html\">rel</a>\n")
	files["nofollow/rel.html"] = []byte("<!doctype html><title>rel</title>\n<a href=\"b.html\" rel=\"nofollow\">b</a>\n")
	files["nofollow/a.html"] = []byte("a\n")
	files["nofollow/b.html"] = []byte("b\n")
	files["nofollow/i.png"] = []byte("not a PNG\n")
	for _, name := range []string{"logo", "pic", "deep", "bg", "fimg", "icon"} {
		files["req/static/"+name+".png"] = []byte("not a PNG: " + name + "\n")
	}
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			return err
		}
	}
	// A search engine (type 7): both Gopher servers run it with the query
	// in $SEARCHREQUEST or $QUERY_STRING and send its output as the reply.
	script := "#!/bin/sh\n" +
		"q=\"${SEARCHREQUEST:-$QUERY_STRING}\"\n" +
		"printf 'iresults for %s\\tfake\\t(NULL)\\t0\\r\\n' \"$q\"\n" +
		"printf '0hello.txt\\t/hello.txt\\t127.0.0.1\\t70\\r\\n'\n"
	if err := os.MkdirAll(filepath.Join(root, "cgi-bin"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, "cgi-bin", "search"), []byte(script), 0o755); err != nil {
		return err
	}
	return filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, ModTime, ModTime)
	})
}
