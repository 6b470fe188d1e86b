package fetch

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// urnFetcher resolves urn: names through the Client's resolver (RFC 2169:
// GET <resolver>/uri-res/N2L?<urn>) and answers with a redirect to the URL
// it names, which the Client then follows under its redirect policy.
type urnFetcher struct{ c *Client }

func (f urnFetcher) Fetch(ctx context.Context, req *protocols.Request) (*protocols.Response, error) {
	res := f.c.URNResolver
	if res == "" {
		return nil, fmt.Errorf("%w: urn: names are resolved by a resolver, and none is configured (--urn-resolver URL, RFC 2169 N2L)", ErrUnsupportedScheme)
	}
	q := strings.TrimRight(res, "/") + "/uri-res/N2L?" + req.URL.String()
	ru, err := url.Parse(q)
	if err != nil {
		return nil, fmt.Errorf("%w: urn resolver: %w", ErrBadURL, err)
	}
	if f.c.fetcher(ru.Scheme) != protocols.Fetcher(f.c.httpF) {
		return nil, fmt.Errorf("%w: urn resolver %s is not an http(s) URL", ErrBadURL, res)
	}
	sub := *req
	sub.URL = ru
	req.Tracef(protocols.TraceInfo, "resolving through "+ru.Redacted())
	resp, err := f.c.httpF.Fetch(ctx, &sub)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", req.URL, err)
	}
	if resp.Kind == protocols.KindRedirect {
		return resp, nil
	}
	defer resp.Body.Close()
	// A text/uri-list: the first line that is not a comment.
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 64<<10))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		loc, err := url.Parse(line)
		if err != nil {
			return nil, fmt.Errorf("%w: the resolver answered %q: %w", ErrProtocol, line, err)
		}
		return &protocols.Response{Kind: protocols.KindRedirect, Location: loc, Status: "resolved", Size: -1, Body: io.NopCloser(strings.NewReader(""))}, nil
	}
	return nil, fmt.Errorf("%w: the resolver named no URL for %s", ErrNotFound, req.URL)
}
