package ftp

import (
	"io"
	"strings"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Replay is the Response the live retrieval of u gave, made of its
// archived payload (protocols.Replayer): a folder's listing (MLSD's, or
// LIST's read at the capture's time) parsed into its entries as the live
// fetch parses it; a file as it is.
func (f *Fetcher) Replay(u *url.URL, mediaType string, at time.Time, payload io.ReadCloser, max int64) (*protocols.Response, error) {
	if fp, err := u.FTP(); err != nil || fp.Name != "" && fp.Type != 'd' {
		return &protocols.Response{Kind: protocols.KindFile, Size: -1, MediaType: mediaType, Name: suggestedName(u), Body: payload}, nil
	}
	b, err := io.ReadAll(io.LimitReader(payload, max))
	payload.Close()
	if err != nil {
		return nil, err
	}
	raw := string(b)
	first, _, _ := strings.Cut(raw, "\n")
	mlsd := strings.Contains(first, "=") && strings.Contains(first, "; ")
	return listingResponse(&protocols.Request{URL: u}, raw, ParseListing(raw, mlsd, at)), nil
}

// ReplayFrom says where else u's answer is archived: nowhere
// (protocols.Replayer).
func (f *Fetcher) ReplayFrom(*url.URL) protocols.ReplaySource { return protocols.ReplaySource{} }
