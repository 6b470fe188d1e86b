package ftp_test

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/urlderef/deref/internal/testserver/ftpscript"
	"github.com/urlderef/deref/url"
)

// hashServer answers FEAT with feats and HASH and the X commands as
// draft-bryan-ftpext-hash-02 and proftpd's mod_digest do; the current
// HASH algorithm starts as SHA-1.
func hashServer(t *testing.T, files map[string]string, feats string) *ftpscript.Server {
	current := "SHA-1"
	return scriptServer(t, files, func(c *ftpscript.Conn, verb, arg string) bool {
		content, ok := files[c.Path(arg)]
		switch verb {
		case "FEAT":
			c.Reply("211-Features:\r\n EPSV\r\n MDTM\r\n%s211 End", feats)
		case "OPTS":
			alg, found := strings.CutPrefix(arg, "HASH ")
			if !found || !strings.Contains(feats, alg) {
				c.Reply("501 Unknown algorithm.")
			} else {
				current = alg
				c.Reply("200 %s", alg)
			}
		case "HASH":
			if !ok {
				c.Reply("550 %s: No such file or directory", arg)
			} else if current != "SHA-256" {
				c.Reply("213 %s 0-%d %x %s", current, len(content), [20]byte{}, arg)
			} else {
				c.Reply("213-Computing SHA-256 digest\r\n213 SHA-256 0-%d %x %s", len(content), sha256.Sum256([]byte(content)), arg)
			}
		case "XMD5":
			if !ok {
				c.Reply("550 %s: No such file or directory", arg)
			} else {
				c.Reply("250 %X", md5.Sum([]byte(content)))
			}
		default:
			return false
		}
		return true
	})
}

// Digests selects SHA-256 for HASH (OPTS HASH) where the server offers
// it, pipelines one command per name, and leaves out names the server
// refuses and names no command line may hold.
func TestDigestsHASH(t *testing.T) {
	files := map[string]string{"pub/a.txt": "alpha\n", "pub/with space.txt": "spaced\n", "pub/empty": ""}
	s := hashServer(t, files, " HASH SHA-1*;SHA-256;MD5\r\n XMD5\r\n")
	c := newTraced()
	u := url.MustParse("ftp://" + s.Addr() + "/pub/")
	sums, err := c.Checksums(context.Background(), u, []string{"a.txt", "with space.txt", "empty", "gone.txt", "bad\nname"})
	if err != nil {
		t.Fatal(err)
	}
	for n, content := range files {
		n = strings.TrimPrefix(n, "pub/")
		want := fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(content)))
		if got := sums[n].String(); got != want {
			t.Errorf("%s: %s, want %s", n, got, want)
		}
	}
	if len(sums) != len(files) {
		t.Errorf("%d digests: %v", len(sums), sums)
	}
	cmds := strings.Join(s.Commands(), "|")
	if !strings.Contains(cmds, "OPTS HASH SHA-256|HASH a.txt|HASH with space.txt|HASH empty|HASH gone.txt") || strings.Contains(cmds, "bad") {
		t.Errorf("commands %s", cmds)
	}
}

// Without HASH, the X commands: here XMD5, whose reply is the digest in
// capitals.
func TestDigestsX(t *testing.T) {
	files := map[string]string{"pub/a.txt": "alpha\n"}
	s := hashServer(t, files, " XMD5\r\n XCRC\r\n")
	c := newTraced()
	sums, err := c.Checksums(context.Background(), url.MustParse("ftp://"+s.Addr()+"/pub/"), []string{"a.txt", "b.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sums["a.txt"].String(), fmt.Sprintf("md5:%x", md5.Sum([]byte("alpha\n"))); got != want || len(sums) != 1 {
		t.Errorf("%v, want %s", sums, want)
	}
}

// A server that offers no digest says so (errors.ErrUnsupported), and
// its connection serves the next retrieval.
func TestDigestsUnsupported(t *testing.T) {
	files := map[string]string{"pub/a.txt": "alpha\n"}
	s := hashServer(t, files, "")
	c := newTraced()
	_, err := c.Checksums(context.Background(), url.MustParse("ftp://"+s.Addr()+"/pub/"), []string{"a.txt"})
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("%v", err)
	}
	if body, _ := c.get(t, "ftp://"+s.Addr()+"/pub/a.txt"); body != "alpha\n" {
		t.Errorf("after: %q", body)
	}
	if n := strings.Count(strings.Join(s.Commands(), "|"), "USER"); n != 1 {
		t.Errorf("%d logins", n)
	}
}
