// Package nex dereferences nex: URLs (the Nex protocol of
// nightfall.city): the path and CRLF sent, the answer as it comes, the
// connection's end its end. A folder (an empty path, or one ending in
// "/") is a listing: its "=> URL" lines are entries.
package nex

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/gemini"
	"github.com/urlderef/deref/url"
)

// DirectoryType is the media type of a folder's answer, its Body and
// its archived record.
const DirectoryType = "text/x-nex-directory"

// Fetcher dereferences nex: URLs. The zero value is ready to use.
type Fetcher struct {
	// ReplyTimeout bounds the wait for the answer's first byte; 0 means
	// one minute.
	ReplyTimeout time.Duration
}

// Schemes describes nex: for the engine.
func Schemes(f *Fetcher) []protocols.Scheme {
	return []protocols.Scheme{{Name: "nex", Fetcher: f, Ports: []int{1900}, Tree: protocols.TreeIndexPage}}
}

// Selector is what u asks for: its path without the first "/", decoded.
func Selector(u *url.URL) (string, error) {
	p, err := url.Unescape(strings.TrimPrefix(u.Path, "/"))
	if err == nil {
		err = url.CheckArg("nex path", p)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %w", protocols.ErrBadURL, err)
	}
	return p, nil
}

func isFolder(sel string) bool { return sel == "" || strings.HasSuffix(sel, "/") }

// Fetch sends the path and gives the answer: a folder's as a listing.
func (f *Fetcher) Fetch(ctx context.Context, req *protocols.Request) (*protocols.Response, error) {
	sel, err := Selector(req.URL)
	if err != nil {
		return nil, err
	}
	conn, err := protocols.Send(ctx, req, sel, nil)
	if err != nil {
		return nil, err
	}
	req.Exchange.Set(sel+"\r\n", conn, "application/nex", mediaType(sel), "nex")
	timeout := f.ReplyTimeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	resp := protocols.StreamResponse(ctx, conn, timeout, mediaType(sel), SuggestedName(req.URL))
	if !isFolder(sel) || req.HeadOnly {
		return resp, nil
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, req.ListingLimit()+1))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > req.ListingLimit() {
		return nil, fmt.Errorf("%w: nex: a folder over %d bytes", protocols.ErrTooLarge, req.ListingLimit())
	}
	return listing(req.URL, b), nil
}

func listing(u *url.URL, b []byte) *protocols.Response {
	return &protocols.Response{Kind: protocols.KindDirectory, Size: int64(len(b)), MediaType: DirectoryType, Body: io.NopCloser(bytes.NewReader(b)), Entries: Links(u, string(b))}
}

// Links are a folder's "=> URL" lines as entries, their kind from the
// URL: a nex: one ending in "/" is a folder.
func Links(u *url.URL, text string) []protocols.Entry {
	es := gemini.Links(u, text)
	for i, e := range es {
		if e.Kind == protocols.KindDirectory && !strings.HasSuffix(e.URL, "/") {
			es[i].Kind = protocols.KindFile // a .gmi file is Gemini's page, not Nex's folder
		}
	}
	return es
}

// mediaType is a document's type from its name's suffix (the
// specification's rule), text/plain where it has none.
func mediaType(sel string) string {
	if isFolder(sel) {
		return DirectoryType
	}
	if ext := path.Ext(sel); ext != "" {
		if t := mime.TypeByExtension(ext); t != "" {
			if mt, _, err := mime.ParseMediaType(t); err == nil {
				return mt
			}
		}
		return "application/octet-stream"
	}
	return "text/plain"
}

// SuggestedName is the local file name of u: its path's last element.
func SuggestedName(u *url.URL) string {
	sel, err := Selector(u)
	if err != nil || isFolder(sel) {
		return ""
	}
	return path.Base(sel)
}

// SuggestedName is the package function (protocols.Namer).
func (f *Fetcher) SuggestedName(u *url.URL) string { return SuggestedName(u) }

// Replay reads an archived folder back into its entries
// (protocols.Replayer); a document is as it is.
func (f *Fetcher) Replay(u *url.URL, mt string, at time.Time, payload io.ReadCloser, max int64) (*protocols.Response, error) {
	if mt != DirectoryType {
		return &protocols.Response{Kind: protocols.KindFile, Size: -1, MediaType: mt, Name: SuggestedName(u), Body: payload}, nil
	}
	b, err := io.ReadAll(io.LimitReader(payload, max))
	payload.Close()
	if err != nil {
		return nil, err
	}
	return listing(u, b), nil
}

// ReplayFrom says where else u's answer is archived: nowhere.
func (f *Fetcher) ReplayFrom(*url.URL) protocols.ReplaySource { return protocols.ReplaySource{} }
