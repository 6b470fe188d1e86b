package crawl

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/url"
)

// TestFolders: folders in use are never closed; once given back, those
// past maxFolders are, and a folder closed is opened again when wanted.
func TestFolders(t *testing.T) {
	root, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fs := folders{root: root, open: map[string]*folder{}}
	defer fs.closeAll()
	const n = maxFolders + 6
	dirs := make([]*os.Root, n)
	releases := make([]func(), n)
	for i := range n {
		if dirs[i], releases[i], err = fs.acquire(fmt.Sprintf("h/d%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	// The last ones given back are the only idle ones: they are closed,
	// the older ones, still in use, are not.
	for i := n - 1; i >= maxFolders; i-- {
		releases[i]()
	}
	if len(fs.open) != maxFolders {
		t.Errorf("%d folders open, want %d", len(fs.open), maxFolders)
	}
	for i := range maxFolders {
		f, err := dirs[i].Create("x")
		if err != nil {
			t.Fatalf("folder %d, in use, was closed: %v", i, err)
		}
		f.Close()
	}
	for i := range maxFolders {
		releases[i]()
	}
	d, release, err := fs.acquire(fmt.Sprintf("h/d%d", n-1))
	if err != nil {
		t.Fatal(err)
	}
	if f, err := d.Create("y"); err != nil {
		t.Errorf("a folder opened again: %v", err)
	} else {
		f.Close()
	}
	release()
}

// TestRelativeLink: the link from one written file to another, escaped
// as a URL path, a first name with a colon kept from reading as a scheme.
func TestRelativeLink(t *testing.T) {
	for _, tt := range [][3]string{
		{"h/a/b.html", "h/a/c.html", "c.html"},
		{"h/a/b.html", "h/index.html", "../index.html"},
		{"h/a/b.html", "h/c d/e#f.html", "../c%20d/e%23f.html"},
		{"h/x.html", "h/a:b.html", "./a:b.html"},
		{"h/a/b/c.html", "g/d.html", "../../../g/d.html"},
		{"index.html", "c/p.html", "c/p.html"}, // -nH: pages at the top
		{"c/p.html", "index.html", "../index.html"},
	} {
		if got := relativeLink(tt[0], tt[1]); got != tt[2] {
			t.Errorf("relativeLink(%q, %q) = %q, want %q", tt[0], tt[1], got, tt[2])
		}
	}
}

// TestTagAttrs: attributes found in a raw start tag as the HTML
// tokenizer reads them: spaces around "=", both quotes, bare values and
// names, a slash before ">".
func TestTagAttrs(t *testing.T) {
	raw := []byte(`<a  href = "x y" data-q='1"2' checked src=bare/>`)
	var got []string
	for _, a := range tagAttrs(raw) {
		v := "-"
		if a.value[0] >= 0 {
			v = string(raw[a.value[0]:a.value[1]])
		}
		got = append(got, string(raw[a.name[0]:a.name[1]])+"="+v)
	}
	if want := `href=x y|data-q=1"2|checked=-|src=bare/`; strings.Join(got, "|") != want {
		t.Errorf("got %q, want %q", strings.Join(got, "|"), want)
	}
}

// referer: the page's URL without user, password and fragment; none
// from https to http, nor from or to another scheme than HTTP's.
func TestReferer(t *testing.T) {
	for _, tt := range []struct{ from, to, want string }{
		{"http://u:p@h/a/b?q#f", "http://h/c", "http://h/a/b?q"},
		{"https://h/a", "https://i/b", "https://h/a"},
		{"http://h/a", "https://h/b", "http://h/a"},
		{"https://h/a", "http://h/b", ""},
		{"gopher://h/1/", "http://h/b", ""},
		{"http://h/a", "ftp://h/b", ""},
	} {
		from, _ := url.Parse(tt.from)
		to, _ := url.Parse(tt.to)
		if got := referer(fetch.NewClient(), from, to); got != tt.want {
			t.Errorf("%s to %s: %q, want %q", tt.from, tt.to, got, tt.want)
		}
	}
	if referer(fetch.NewClient(), nil, &url.URL{Scheme: "http"}) != "" {
		t.Error("a start URL has a Referer")
	}
}
