package gopher

import (
	"os"
	"testing"
)

// FuzzParseAttributes parses Gopher+ attribute blocks ("!" and "$"
// replies), seeded with pygopherd's, and the forms (+ASK) made of them:
// no panic, and every attribute has a name.
func FuzzParseAttributes(f *testing.F) {
	if b, err := os.ReadFile("../../testdata/gopher/pygopherd-pub.attrs"); err == nil {
		f.Add(string(b))
	}
	f.Add("+INFO: 0a\t/a\th\t70\t+\r\n+ASK:\r\n Ask: Name?\tdefault\r\n Choose: Pick\ta\tb\r\n AskP: Password\r\n")
	f.Add("+ADMIN:\r\n Mod-Date: <20200102030405>\r\n+VIEWS:\r\n text/plain: <1k>\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		attrs := ParseAttributes(s)
		for _, a := range attrs {
			if a.Name == "" {
				t.Fatalf("attribute without a name: %+v", a)
			}
		}
		ParseAsk(attrs)
		ModDate(attrs)
	})
}
