package mail_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/mail"
	"github.com/urlderef/deref/url"
)

// mailboxes writes the sample as an mbox and as a Maildir.
func mailboxes(t *testing.T) map[string]string {
	dir := t.TempDir()
	mbox := filepath.Join(dir, "mbox")
	os.WriteFile(mbox, []byte(mail.Sample), 0o600)
	md := filepath.Join(dir, "Maildir")
	for _, sub := range []string{"cur", "new", "tmp"} {
		os.MkdirAll(filepath.Join(md, sub), 0o700)
	}
	msgs := strings.Split(mail.Sample, "\n\nFrom bob")
	first := strings.SplitN(msgs[0], "\n", 2)[1] + "\n"
	second := strings.SplitN("From bob"+msgs[1], "\n", 2)[1]
	os.WriteFile(filepath.Join(md, "cur", "1.host:2,S"), []byte(strings.Replace(first, ">From", ">From", 1)), 0o600)
	os.WriteFile(filepath.Join(md, "new", "2.host"), []byte(second), 0o600)
	return map[string]string{"mbox": mbox, "maildir": md}
}

func get(t *testing.T, dir, raw string) (string, *protocols.Response, error) {
	t.Helper()
	r, err := (&mail.Fetcher{Dir: dir}).Fetch(context.Background(), &protocols.Request{URL: url.MustParse(raw)})
	if err != nil {
		return "", nil, err
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	return string(b), r, err
}

func TestMidCid(t *testing.T) {
	for kind, dir := range mailboxes(t) {
		body, r, err := get(t, dir, "mid:lunch.1@example.org")
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if !strings.HasPrefix(body, "From: Alice <alice@example.org>\n") || !strings.Contains(body, "\n\nNoon at the usual place?\n") || r.MediaType != "message/rfc822" || r.ModTime.IsZero() {
			t.Errorf("%s: mid: %q %q", kind, body, r.MediaType)
		}
		if kind == "mbox" && !strings.Contains(body, "\nFrom the kitchen") {
			t.Errorf("mbox quoting not undone: %q", body)
		}
		for _, u := range []string{"cid:map@example.org", "mid:reply.2@example.org/map@example.org", "cid:map%40example.org"} {
			body, r, err = get(t, dir, u)
			if err != nil || body != "The usual place is on the corner.\n" || r.MediaType != "text/plain" || r.Name != "map.txt" {
				t.Errorf("%s %s: %q %v", kind, u, body, err)
			}
		}
		for _, u := range []string{"mid:nothere@example.org", "cid:nothere@example.org", "mid:lunch.1@example.org/map@example.org"} {
			if _, _, err := get(t, dir, u); !errors.Is(err, protocols.ErrNotFound) {
				t.Errorf("%s %s: %v", kind, u, err)
			}
		}
	}
	_, err := (&mail.Fetcher{}).Fetch(context.Background(), &protocols.Request{URL: url.MustParse("mid:a@b")})
	if !errors.Is(err, protocols.ErrUnsupportedScheme) || !strings.Contains(err.Error(), "--mail-dir") {
		t.Errorf("without a mailbox: %v", err)
	}
}

// TestFolderOfMailboxes: a mail folder laid out as ~/Mail usually is (mbox
// files and Maildirs side by side, nested folders, a Maildir++ subfolder,
// files that are not mailboxes) is searched whole.
func TestFolderOfMailboxes(t *testing.T) {
	boxes := mailboxes(t)
	home := t.TempDir()
	mkmsg := func(id, body string) string {
		return "From: x@example.org\nMessage-ID: <" + id + ">\nSubject: s\n\n" + body
	}
	// An mbox at the top, another two folders down, a Maildir with a
	// Maildir++ folder inside, and noise.
	os.WriteFile(filepath.Join(home, "inbox"), []byte(mail.Sample), 0o600)
	os.MkdirAll(filepath.Join(home, "lists", "2026"), 0o700)
	os.WriteFile(filepath.Join(home, "lists", "2026", "golang"), []byte("From x@example.org Mon Nov 23 10:00:00 2026\n"+mkmsg("deep@example.org", "deep in a folder\n")), 0o600)
	md := filepath.Join(home, "work")
	for _, sub := range []string{"cur", "new", "tmp", ".Sent/cur", ".Sent/new", ".Sent/tmp"} {
		os.MkdirAll(filepath.Join(md, sub), 0o700)
	}
	os.WriteFile(filepath.Join(md, "new", "1.host"), []byte(mkmsg("work@example.org", "in a Maildir\n")), 0o600)
	os.WriteFile(filepath.Join(md, ".Sent", "cur", "2.host:2,S"), []byte(mkmsg("sent@example.org", "sent, Maildir++\n")), 0o600)
	os.WriteFile(filepath.Join(home, ".mutt_cache"), []byte("not a mailbox\n"), 0o600)
	os.WriteFile(filepath.Join(home, "empty"), nil, 0o600)
	os.Symlink(home, filepath.Join(home, "loop")) // never followed

	for id, want := range map[string]string{
		"lunch.1@example.org": "Noon at the usual place?",
		"deep@example.org":    "deep in a folder",
		"work@example.org":    "in a Maildir",
		"sent@example.org":    "sent, Maildir++",
	} {
		body, _, err := get(t, home, "mid:"+id)
		if err != nil || !strings.Contains(body, want) {
			t.Errorf("mid:%s: %q %v", id, body, err)
		}
	}
	if _, _, err := get(t, home, "mid:nowhere@example.org"); !errors.Is(err, protocols.ErrNotFound) {
		t.Errorf("missing message: %v", err)
	}
	// A single mbox and a single Maildir still work as before.
	for kind, dir := range boxes {
		if _, _, err := get(t, dir, "mid:lunch.1@example.org"); err != nil {
			t.Errorf("%s alone: %v", kind, err)
		}
	}
}
