package fetch_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/internal/testserver/nntpd"
)

// news: URLs name no server, so the netrc entry is the configured news
// server's; it answers the server's 480.
func TestNewsNetrc(t *testing.T) {
	s := nntpd.New()
	s.User, s.Pass = "alice", "s3cret"
	s.AddGroup("local.test", "")
	s.Post("local.test", "<a1@test>", []string{"Subject: hello"}, "Hello.\n")
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rc := filepath.Join(t.TempDir(), "netrc")
	os.WriteFile(rc, []byte("machine 127.0.0.1 login alice password s3cret\n"), 0o600)
	c := newClient()
	c.NetrcFile = rc
	c.NNTP.Server = s.Addr()
	resp, err := c.Get(context.Background(), "news:a1@test")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasSuffix(string(b), "\r\n\r\nHello.\r\n") {
		t.Errorf("%q", b)
	}
	if log := strings.Join(s.Log(), "|"); !strings.Contains(log, "AUTHINFO USER alice|AUTHINFO PASS s3cret") {
		t.Errorf("commands %s", log)
	}
}
