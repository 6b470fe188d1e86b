package gemini

import (
	"bytes"
	"io"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Schemes describes gemini: for the engine, fetched by f.
func Schemes(f *Fetcher) []protocols.Scheme {
	return []protocols.Scheme{{Name: "gemini", Fetcher: f, Ports: []int{1965}, Secure: true, Redirect: true, MaxRedirects: 5,
		Tree: protocols.TreeIndexPage, Robots: "/robots.txt", RobotsAgents: []string{"archiver", "indexer", "researcher"}}}
}

// Replay is the Response the live retrieval of u gave, made of its
// archived payload (protocols.Replayer): a gemtext page read back into
// its links, anything else as it is.
func (f *Fetcher) Replay(u *url.URL, mediaType string, at time.Time, payload io.ReadCloser, max int64) (*protocols.Response, error) {
	if mediaType != "text/gemini" {
		return &protocols.Response{Kind: protocols.KindFile, Size: -1, MediaType: mediaType, Name: SuggestedName(u), Body: payload}, nil
	}
	b, err := io.ReadAll(io.LimitReader(payload, max))
	payload.Close()
	if err != nil {
		return nil, err
	}
	return &protocols.Response{Kind: protocols.KindDirectory, Size: int64(len(b)), MediaType: mediaType, Body: io.NopCloser(bytes.NewReader(b)), Entries: Links(u, string(b))}, nil
}

// ReplayFrom says where else u's answer is archived: nowhere.
func (f *Fetcher) ReplayFrom(*url.URL) protocols.ReplaySource { return protocols.ReplaySource{} }
