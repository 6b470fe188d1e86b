package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/urlderef/deref/internal/testserver/nntpd"
)

func TestNews(t *testing.T) {
	s := nntpd.New()
	s.AddGroup("local.test", "Local test group")
	s.Post("local.test", "<a1@test>", []string{"From: A <a@test>", "Subject: first", "Date: Sun, 22 Nov 2026 10:00:00 +0000"}, "Hello.\n")
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t.Setenv("NNTPSERVER", "")
	r := runDeref(t, "", "--news-server", s.Addr(), "news:local.test")
	if r.code != 0 || r.stdout != "file\t"+strings.Split(r.stdout, "\t")[1]+"\t2026-11-22T10:00:00Z\tfirst\tnews:a1@test\n" {
		t.Errorf("group: %d %q %q", r.code, r.stdout, r.stderr)
	}
	listed := strings.Split(r.stdout, "\t")[1]
	t.Setenv("NNTPSERVER", s.Addr())
	r = runDeref(t, "", "news:a1@test")
	if r.code != 0 || !strings.HasSuffix(r.stdout, "Subject: first\r\nDate: Sun, 22 Nov 2026 10:00:00 +0000\r\n\r\nHello.\r\n") {
		t.Errorf("article: %d %q %q", r.code, r.stdout, r.stderr)
	}
	// The size the group's listing gives is what the article is.
	if listed != fmt.Sprint(len(r.stdout)) {
		t.Errorf("listed as %s bytes, %d written", listed, len(r.stdout))
	}
	r = runDeref(t, "", "--descriptions", "news:*")
	if r.code != 0 || !strings.Contains(r.stdout, "\tnews:local.test\tLocal test group\n") {
		t.Errorf("groups, TAB form: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = runDeref(t, "", "news:*")
	if r.code != 0 || strings.Contains(r.stdout, "Local test group") {
		t.Errorf("groups without --descriptions: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = runDeref(t, "", "--json", "--descriptions", "news:*")
	if r.code != 0 || !strings.Contains(r.stdout, `"description":"Local test group"`) {
		t.Errorf("groups: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := runDeref(t, "", "news:nothere@test"); r.code != 4 || !strings.Contains(r.stderr, "430") {
		t.Errorf("missing article: %d %q", r.code, r.stderr)
	}
	if r := runDeref(t, "", "news:a%0D%0AQUIT@test"); r.code != 2 {
		t.Errorf("CR LF in a message-id: %d %q", r.code, r.stderr)
	}
	if r := runDeref(t, "", "nntp://"+s.Addr()+"/local.test/1"); r.code != 0 || !strings.HasSuffix(r.stdout, "Hello.\r\n") {
		t.Errorf("nntp: %d %q", r.code, r.stderr)
	}
}
