package nntp

import (
	"io"
	"strings"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Replay is the Response the live retrieval of u gave, made of its
// archived payload (protocols.Replayer): a group's overview lines parsed
// into its articles, as the live fetch lists them; an article as it is.
func (f *Fetcher) Replay(u *url.URL, mediaType string, _ time.Time, payload io.ReadCloser, max int64) (*protocols.Response, error) {
	base, group := "", false
	if n, err := u.News(); err == nil && (u.Scheme == "news" || u.Scheme == "snews") {
		group = n.MessageID == "" && !n.Wildmat && !n.All
	} else if n, err := u.NNTP(); err == nil {
		group, base = !n.HasArticle, strings.TrimSuffix(u.String(), "/")+"/"
	}
	if !group {
		return &protocols.Response{Kind: protocols.KindFile, Size: -1, MediaType: "message/rfc822", Body: payload}, nil
	}
	b, err := io.ReadAll(io.LimitReader(payload, max))
	payload.Close()
	if err != nil {
		return nil, err
	}
	return &protocols.Response{Kind: protocols.KindArticleList, Size: int64(len(b)), MediaType: "text/plain", Body: io.NopCloser(strings.NewReader(string(b))),
		Entries: ParseOverview(strings.Split(strings.TrimRight(string(b), "\n"), "\n"), base)}, nil
}

// ReplayFrom says where else u's answer is archived: nowhere
// (protocols.Replayer).
func (f *Fetcher) ReplayFrom(*url.URL) protocols.ReplaySource { return protocols.ReplaySource{} }
