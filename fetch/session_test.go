package fetch_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver/telnetd"
	"github.com/urlderef/deref/url"
)

// A session's Response has a Body like any other, empty, that may be
// closed as always; downloading it is an error, not a crash.
func TestSessionBody(t *testing.T) {
	s := &telnetd.Server{User: "alice", Pass: "secret"}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u, err := url.Parse("telnet://" + s.Addr() + "/")
	if err != nil {
		t.Fatal(err)
	}
	c := fetch.NewClient()
	c.NetrcFile = ""
	resp, err := c.Fetch(context.Background(), u, 0)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Kind != fetch.KindSession || resp.Session == nil || resp.Body == nil {
		t.Fatalf("kind %v, session %v, body %v", resp.Kind, resp.Session, resp.Body)
	}
	if b, err := io.ReadAll(resp.Body); len(b) != 0 || err != nil || resp.Body.Close() != nil {
		t.Errorf("body %q %v", b, err)
	}
	resp.Session.Close()
	if _, err := c.Download(context.Background(), u.String(), t.TempDir()); !errors.Is(err, fetch.ErrNotRetrievable) {
		t.Errorf("download: %v", err)
	}
}
