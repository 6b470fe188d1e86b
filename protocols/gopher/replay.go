package gopher

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// menuMediaType is the media type an archive gives a menu's record (ArchiveAs).
const menuMediaType = "application/gopher-menu"

// Replay is the Response the live retrieval of u gave, made of its
// archived payload, the server's bytes (protocols.Replayer): a text item
// or a menu decoded as the live fetch decodes them (the "." line and the
// dot-stuffing taken off, lines ending in LF), a menu read whole into its
// entries unless asked for as text (type 0, as the gateway streams one);
// anything else as it is.
func (f *Fetcher) Replay(u *url.URL, mediaType string, _ time.Time, payload io.ReadCloser, max int64) (*protocols.Response, error) {
	resp := &protocols.Response{Kind: protocols.KindFile, Size: -1, MediaType: mediaType, Name: suggestedName(u), Body: payload}
	g, err := u.Gopher()
	menu := mediaType == menuMediaType
	if err != nil || !menu && !textType(g.Type) {
		return resp, nil
	}
	text := &dotReader{r: bufio.NewReaderSize(payload, 4096), limit: 64 << 10}
	resp.MediaType = "text/plain"
	resp.Body = struct {
		io.Reader
		io.Closer
	}{text, payload}
	if !menu || g.Type == '0' {
		return resp, nil
	}
	b, err := io.ReadAll(io.LimitReader(text, max))
	payload.Close()
	if err != nil {
		return nil, err
	}
	resp.Kind, resp.Entries = protocols.KindDirectory, ParseMenu(string(b))
	resp.Body, resp.Size = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	return resp, nil
}

// ReplayFrom says where else u's answer is archived
// (protocols.Replayer): a menu or search asked for as text (type 0, as
// the gateway reads one) by its own type; an item's attributes ("!") in
// the attribute block archived with the item; a search with no words is
// its form.
func (f *Fetcher) ReplayFrom(u *url.URL) protocols.ReplaySource {
	var src protocols.ReplaySource
	g, err := u.Gopher()
	if err != nil {
		return src
	}
	switch {
	case g.Type == '7' && !g.HasSearch:
		src.Wordless = true
	case g.HasPlus && strings.HasPrefix(g.Plus, "!"):
		item := *u
		item.Path = "/" + url.EscapeGopher(string(g.Type)+g.Selector)
		src.MetadataOf, src.MetadataType = &item, "application/gopher+-attributes"
	case g.Type == '0':
		for _, typ := range "17" {
			v := *u
			v.Path = "/" + url.EscapeGopher(string(typ)+g.Selector)
			if g.HasSearch {
				v.Path += "%09" + url.EscapeGopher(g.Search)
			}
			src.Alternatives = append(src.Alternatives, &v)
		}
	}
	return src
}
