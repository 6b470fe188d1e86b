package prospero

import (
	"bytes"
	"io"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Schemes describes prospero: for the engine, fetched by f.
func Schemes(f *Fetcher) []protocols.Scheme {
	return []protocols.Scheme{{Name: "prospero", Fetcher: f, Ports: []int{DefaultPort}, Redirect: true, Tree: protocols.TreeListing,
		Opaque: true, Conversation: true, ConversationType: "text/x-prospero-conversation"}}
}

// ArchiveAs says how a retrieval is archived (protocols.Archiver): a
// folder's record is the server's reply as it came, of ListingType.
func (f *Fetcher) ArchiveAs(u *url.URL, resp *protocols.Response) protocols.Archived {
	if resp.Kind == protocols.KindDirectory {
		return protocols.Archived{MediaType: ListingType}
	}
	return protocols.Archived{}
}

// Replay is the Response the live retrieval of u gave, made of its
// archived payload (protocols.Replayer): a folder's reply read back
// into its entries, a file as it is.
func (f *Fetcher) Replay(u *url.URL, mediaType string, at time.Time, payload io.ReadCloser, max int64) (*protocols.Response, error) {
	if mediaType != ListingType {
		return &protocols.Response{Kind: protocols.KindFile, Size: -1, MediaType: mediaType, Name: SuggestedName(u), Body: payload}, nil
	}
	b, err := io.ReadAll(io.LimitReader(payload, max))
	payload.Close()
	if err != nil {
		return nil, err
	}
	r, err := ParseReply(string(b))
	if err != nil {
		return nil, err
	}
	resp := &protocols.Response{Kind: protocols.KindDirectory, Size: int64(len(b)), ModTime: ModTime(r.Attributes), MediaType: ListingType,
		Body: io.NopCloser(bytes.NewReader(b))}
	for _, l := range r.Links {
		if e, ok := EntryOf(l); ok {
			resp.Entries = append(resp.Entries, e)
		}
	}
	return resp, nil
}

// ReplayFrom says where else u's answer is archived (protocols.Replayer):
// nowhere, it is its own capture.
func (f *Fetcher) ReplayFrom(*url.URL) protocols.ReplaySource { return protocols.ReplaySource{} }
