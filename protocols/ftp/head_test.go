package ftp_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/url"
)

// TestHeadOnly: metadata only asks SIZE and MDTM and opens no data
// connection; the connection stays usable for the next retrieval.
func TestHeadOnly(t *testing.T) {
	s := scriptServer(t, map[string]string{"pub/f.bin": "0123456789"}, nil)
	c := newTraced()
	u, _ := url.Parse("ftp://" + s.Addr() + "/pub/f.bin")
	resp, err := c.FetchWith(context.Background(), u, fetch.FetchOptions{HeadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil || len(b) != 0 || resp.Body.Close() != nil || resp.Size != 10 || resp.ModTime.IsZero() {
		t.Errorf("head: %q %v, size %d, time %v", b, err, resp.Size, resp.ModTime)
	}
	if got := strings.Join(c.commands(), "|"); got != "TYPE I|CWD pub|SIZE f.bin|MDTM f.bin" {
		t.Errorf("sent %q", got)
	}
	if body, _ := c.get(t, u.String()); body != "0123456789" {
		t.Errorf("then: %q", body)
	}
	oneLogin(t, s)
}

// TestHeadOnlyMissing: metadata of a name SIZE answers with 550 (and MDTM
// does not date) is not found, as curl's -I has it, and the connection
// stays usable.
func TestHeadOnlyMissing(t *testing.T) {
	s := scriptServer(t, map[string]string{"pub/f.bin": "0123456789"}, nil)
	c := newTraced()
	u, _ := url.Parse("ftp://" + s.Addr() + "/pub/missing.bin")
	_, err := c.FetchWith(context.Background(), u, fetch.FetchOptions{HeadOnly: true})
	if !errors.Is(err, fetch.ErrNotFound) || !strings.Contains(err.Error(), "SIZE missing.bin") {
		t.Fatalf("head of a missing file: %v, want not found (SIZE)", err)
	}
	if body, _ := c.get(t, "ftp://"+s.Addr()+"/pub/f.bin"); body != "0123456789" {
		t.Errorf("then: %q", body)
	}
	oneLogin(t, s)
}

// oneLogin checks that the server saw one login: the connection was kept
// for the retrievals after the first.
func oneLogin(t *testing.T, s interface{ Commands() []string }) {
	t.Helper()
	logins := 0
	for _, cmd := range s.Commands() {
		if strings.HasPrefix(cmd, "USER ") {
			logins++
		}
	}
	if logins != 1 {
		t.Errorf("%d logins: the connection was not kept", logins)
	}
}
