package links

import (
	"io"

	"golang.org/x/net/html"
)

// Anchors returns the href of every <a> element of an HTML page, read
// as a stream of tokens (golang.org/x/net/html), never whole.
func Anchors(r io.Reader) ([]string, error) {
	z := html.NewTokenizer(r)
	z.SetMaxBuf(1 << 20)
	var out []string
	for {
		switch z.Next() {
		case html.ErrorToken:
			if z.Err() == io.EOF {
				return out, nil
			}
			return nil, z.Err()
		case html.StartTagToken, html.SelfClosingTagToken:
			name, attr := z.TagName()
			if string(name) != "a" || !attr {
				continue
			}
			for {
				k, v, more := z.TagAttr()
				if string(k) == "href" {
					out = append(out, string(v))
				}
				if !more {
					break
				}
			}
		}
	}
}
