// Package finger dereferences finger: URLs (RFC 1288, and the finger URL
// draft's finger://host[:port][/[/W ]user]): the query line sent, the
// answer streamed as text. A query that asks the server to finger
// another host (user@host) is refused unless Fetcher.Forward allows it.
package finger

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Fetcher dereferences finger: URLs. The zero value is ready to use.
type Fetcher struct {
	// Forward sends queries that name another host (user@host, @host),
	// which ask the server to connect there on the client's behalf;
	// they are refused otherwise.
	Forward bool
	// ReplyTimeout bounds the wait for the answer's first byte; 0 means
	// one minute.
	ReplyTimeout time.Duration
}

// Query is the query line of u (without CRLF): the path after its first
// "/", decoded: "user", "/W user", or "" for the users logged on.
func Query(u *url.URL) (string, error) {
	if u.User != nil {
		return "", fmt.Errorf("%w: finger URLs carry no user name or password before the host (the user to finger comes after it: finger://host/user)", protocols.ErrBadURL)
	}
	q, err := url.Unescape(strings.TrimPrefix(u.Path, "/"))
	if err != nil {
		return "", fmt.Errorf("%w: finger query: %w", protocols.ErrBadURL, err)
	}
	if err := url.CheckArg("finger query", q); err != nil {
		return "", fmt.Errorf("%w: %w", protocols.ErrBadURL, err)
	}
	return q, nil
}

// Schemes describes finger: for the engine.
func Schemes(f *Fetcher) []protocols.Scheme {
	return []protocols.Scheme{{Name: "finger", Fetcher: f, Ports: []int{79}, Paged: true}}
}

// Fetch sends the query and gives the answer.
func (f *Fetcher) Fetch(ctx context.Context, req *protocols.Request) (*protocols.Response, error) {
	q, err := Query(req.URL)
	if err != nil {
		return nil, err
	}
	if strings.Contains(q, "@") && !f.Forward {
		return nil, fmt.Errorf("%w: finger: %q asks the server to finger another host for deref, which is refused (Client.Finger.Forward allows it)", protocols.ErrPermission, q)
	}
	conn, err := protocols.Send(ctx, req, q, nil)
	if err != nil {
		return nil, err
	}
	req.Exchange.Set(q+"\r\n", conn, "application/finger", "text/plain", "finger")
	timeout := f.ReplyTimeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	return protocols.StreamResponse(ctx, conn, timeout, "text/plain", "finger"), nil
}

// SuggestedName is the local file name of u: the user fingered, or
// "finger".
func (f *Fetcher) SuggestedName(u *url.URL) string {
	q, err := Query(u)
	q = strings.TrimSpace(strings.TrimPrefix(q, "/W"))
	if err != nil || q == "" || strings.ContainsAny(q, "/\\") {
		return "finger"
	}
	return q
}
