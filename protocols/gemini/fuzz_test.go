package gemini

import (
	"strings"
	"testing"

	"github.com/urlderef/deref/url"
)

// Any header line reads or fails with an error: a status of two digits,
// a META within its bound.
func FuzzHeader(f *testing.F) {
	for _, s := range []string{"20 text/gemini", "20", "31 gemini://h/x/", "44 30", "10 What is your name?", "51 Not found!", "2", "20text", "99 x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		code, meta, err := ParseHeader(line)
		if err != nil {
			return
		}
		if code < 10 || code > 69 || len(meta) > MaxMeta {
			t.Fatalf("%q read as %d %q", line, code, meta)
		}
	})
}

// Any gemtext page reads into lines, never a panic, its preformatted
// lines kept as they are; its links resolve against any page.
func FuzzGemtext(f *testing.F) {
	f.Add("# h\n=> /a A\n* i\n> q\n```alt\n=> x\n```\ntext\n=: /in Ask\n")
	f.Add("=>\t gemini://h/ x\r\n```\r\nunclosed")
	base := url.MustParse("gemini://h.example/dir/page.gmi")
	f.Fuzz(func(t *testing.T, text string) {
		lines := ParseGemtext(text)
		for _, l := range lines {
			if l.Kind == LinePre && strings.Contains(l.Text, "\n") {
				t.Fatalf("a preformatted line with a line end: %q", l.Text)
			}
		}
		Links(base, text)
	})
}
