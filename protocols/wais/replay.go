package wais

import (
	"io"
	"strings"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Replay is the Response the live retrieval of u gave, made of its
// archived payload (protocols.Replayer): a search's result list, as
// Render wrote it, read back into its hits; a document as it is.
func (f *Fetcher) Replay(u *url.URL, mediaType string, _ time.Time, payload io.ReadCloser, max int64) (*protocols.Response, error) {
	if mediaType != protocols.ResultListType {
		return &protocols.Response{Kind: protocols.KindFile, Size: -1, MediaType: mediaType, Name: SuggestedName(u), Body: payload}, nil
	}
	b, err := io.ReadAll(io.LimitReader(payload, max))
	payload.Close()
	if err != nil {
		return nil, err
	}
	return &protocols.Response{Kind: protocols.KindDirectory, Size: int64(len(b)), MediaType: "text/plain", Body: io.NopCloser(strings.NewReader(string(b))),
		Entries: ParseResults(string(b))}, nil
}

// ReplayFrom says where else u's answer is archived (protocols.Replayer):
// a database asked no words is its search's form.
func (f *Fetcher) ReplayFrom(u *url.URL) protocols.ReplaySource {
	w, err := u.WAIS()
	return protocols.ReplaySource{Wordless: err == nil && !w.IsDocument() && !w.HasSearch}
}
