//go:build interop

package interop

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/protocols/nntp"
	"github.com/urlderef/deref/url"
)

type posted struct {
	number, id string
	body       []byte
}

// manifest reads what postnews posted: number, message-id and body.
func manifest(t *testing.T) []posted {
	dir := env(t, "DEREF_INTEROP_NEWS_DIR")
	b, err := os.ReadFile(filepath.Join(dir, "manifest"))
	if err != nil {
		t.Fatal(err)
	}
	var out []posted
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(l, "\t")
		body, err := os.ReadFile(filepath.Join(dir, f[2]))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, posted{f[0], f[1], body})
	}
	if len(out) < 4 {
		t.Fatalf("manifest of %d articles", len(out))
	}
	return out
}

// bodyOf returns what follows the header block of an article, which
// comes as the server holds it (CRLF line ends), with LF line ends: as
// the body was posted.
func bodyOf(t *testing.T, article []byte) []byte {
	_, body, ok := bytes.Cut(article, []byte("\r\n\r\n"))
	if !ok {
		t.Fatalf("no header block end in %q", article)
	}
	return bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n"))
}

func newsClient(t *testing.T) *fetch.Client {
	c := client()
	c.NNTP.Server = strings.TrimPrefix(env(t, "DEREF_INTEROP_NEWS"), "nntp://")
	return c
}

// TestNewsArticles fetches every posted article from INN by message-id
// (news:) and by number (nntp:), and compares the bodies with what was
// posted; the headers the poster wrote are there.
func TestNewsArticles(t *testing.T) {
	base := env(t, "DEREF_INTEROP_NEWS")
	c := newsClient(t)
	for _, p := range manifest(t) {
		id := strings.Trim(p.id, "<>")
		for _, u := range []string{"news:" + id, base + "/local.test/" + p.number} {
			b, resp, err := read(t, c, u)
			if err != nil {
				t.Fatalf("%s: %v", u, err)
			}
			if got := bodyOf(t, b); !bytes.Equal(got, p.body) {
				t.Errorf("%s: body of %d bytes differs from the %d posted", u, len(got), len(p.body))
			}
			if !bytes.Contains(b, []byte("\nMessage-ID: "+p.id+"\r\n")) || !bytes.Contains(b, []byte("\nNewsgroups: local.test\r\n")) {
				t.Errorf("%s: headers\n%s", u, b[:min(len(b), 600)])
			}
			if resp.ModTime.IsZero() || resp.MediaType != "message/rfc822" {
				t.Errorf("%s: metadata %v %q", u, resp.ModTime, resp.MediaType)
			}
		}
	}
}

// TestNewsListings lists the group (news: and nntp:, and a range) and the
// groups (news:* and a wildmat) from INN.
func TestNewsListings(t *testing.T) {
	base := env(t, "DEREF_INTEROP_NEWS")
	c := newsClient(t)
	posts := manifest(t)
	_, resp, err := read(t, c, "news:local.test")
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]fetch.Entry{}
	for _, e := range resp.Entries {
		byID[e.MessageID] = e
	}
	for _, p := range posts {
		e, ok := byID[p.id]
		if !ok {
			t.Errorf("%s not in the group listing", p.id)
			continue
		}
		if e.URL != "news:"+strings.Trim(p.id, "<>") || e.Author != "Interop Suite <interop@harness.test>" || e.Size <= int64(len(p.body)) || e.ModTime.IsZero() {
			t.Errorf("entry %+v", e)
		}
		// The URL listed fetches the article, of the size listed: INN's
		// :bytes counts the article as it holds it, CRLF line ends, and
		// for lines beginning with "." some of their dot-stuffing (a
		// byte for three such lines in 2.7), which is transport and
		// undone in what comes.
		if b, _, err := read(t, c, e.URL); err != nil || !bytes.Equal(bodyOf(t, b), p.body) {
			t.Errorf("%s: %v", e.URL, err)
		} else if stuffed := int64(bytes.Count(b, []byte("\r\n.")) + bytes.Count(b[:min(len(b), 1)], []byte("."))); e.Size < int64(len(b)) || e.Size > int64(len(b))+stuffed {
			t.Errorf("%s: listed as %d bytes, %d came (%d lines dot-stuffed)", e.URL, e.Size, len(b), stuffed)
		}
	}
	first, last := posts[0].number, posts[len(posts)-1].number
	_, resp, err = read(t, c, base+"/local.test/"+first+"-"+last)
	if err != nil || len(resp.Entries) != len(posts) || resp.Entries[0].URL != base+"/local.test/"+first {
		t.Fatalf("range: %v %+v", err, resp)
	}
	for _, u := range []string{"news:*", "news:local.*"} {
		_, resp, err := read(t, c, u)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, e := range resp.Entries {
			names[e.Name] = true
		}
		if !names["local.test"] || !names["local.empty"] || (u == "news:local.*") == names["junk"] {
			t.Errorf("%s: %v", u, names)
		}
	}
	c.NNTP.Descriptions = true
	_, resp, err = read(t, c, "news:local.test*")
	if err != nil || len(resp.Entries) != 1 || resp.Entries[0].Description != "Local test group" {
		t.Errorf("descriptions: %v %+v", err, resp.Entries)
	}
}

func TestNewsErrors(t *testing.T) {
	base := env(t, "DEREF_INTEROP_NEWS")
	c := newsClient(t)
	for _, u := range []string{"news:no-such-article@harness.test", "news:no.such.group", base + "/local.test/999999"} {
		if _, _, err := read(t, c, u); !errors.Is(err, fetch.ErrNotFound) {
			t.Errorf("%s: %v", u, err)
		}
	}
}

// TestNewsSession reads the posted articles over one connection with
// pipelined commands.
func TestNewsSession(t *testing.T) {
	ctx := context.Background()
	f := &nntp.Fetcher{}
	sess, err := f.Open(ctx, &fetch.Request{URL: url.MustParse(env(t, "DEREF_INTEROP_NEWS") + "/local.test")})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, _, _, err := sess.Group(ctx, "local.test"); err != nil {
		t.Fatal(err)
	}
	posts := manifest(t)
	var specs []string
	want := map[string][]byte{}
	for _, p := range posts {
		specs = append(specs, p.number, p.id)
		want[p.number], want[p.id] = p.body, p.body
	}
	n := 0
	err = sess.Articles(ctx, specs, 4, func(spec string, r io.Reader, err error) error {
		if err != nil {
			return err
		}
		b, err := io.ReadAll(r)
		if !bytes.Equal(bodyOf(t, b), want[spec]) {
			t.Errorf("%s: body differs", spec)
		}
		n++
		return err
	})
	if err != nil || n != len(specs) {
		t.Errorf("%d of %d articles: %v", n, len(specs), err)
	}
}
