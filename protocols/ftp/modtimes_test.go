package ftp_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver/ftpscript"
	"github.com/urlderef/deref/url"
)

// TestModTimesPipelined checks that MDTM commands for a folder's files go
// out before their replies are read: the server answers none until it has
// them all, so a client waiting for each reply would never finish. A 550
// and a 450 leave their names out; a name holding LF is never sent; the
// connection is used again afterwards.
func TestModTimesPipelined(t *testing.T) {
	files := map[string]string{}
	var names []string
	for i := range 40 {
		n := fmt.Sprintf("f%02d.txt", i)
		names = append(names, n)
		files["pub/"+n] = "x"
	}
	names = append(names, "gone.txt", "busy.txt", "bad\nname")
	files["pub/busy.txt"] = "x"
	var held []string
	answered := false
	s := scriptServer(t, files, func(c *ftpscript.Conn, verb, arg string) bool {
		if verb != "MDTM" || answered {
			return false
		}
		held = append(held, arg)
		if len(held) < len(names)-1 {
			return true // not yet: every MDTM must come first
		}
		for _, n := range held {
			switch {
			case n == "busy.txt":
				c.Reply("450 Try again later.")
			case files[c.Path(n)] == "":
				c.Reply("550 Could not get file modification time.")
			default:
				var i int
				fmt.Sscanf(n, "f%02d.txt", &i)
				c.Reply("213 202001020304%02d.5", i)
			}
		}
		answered = true
		return true
	})
	c := newTraced()
	u, err := url.Parse("ftp://" + s.Addr() + "/pub/")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := c.ModTimes(ctx, u, names)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 40 {
		t.Errorf("%d times, want 40: %v", len(got), got)
	}
	for i := range 40 {
		want := time.Date(2020, 1, 2, 3, 4, i, 5e8, time.UTC)
		if tm := got[names[i]]; !tm.Equal(want) {
			t.Errorf("%s: %v, want %v", names[i], tm, want)
		}
	}
	for _, cmd := range s.Commands() {
		if strings.Contains(cmd, "bad") {
			t.Errorf("a name holding LF was sent: %q", cmd)
		}
	}

	// The same connection serves the next request, in step.
	body, _ := c.get(t, "ftp://"+s.Addr()+"/pub/f01.txt")
	if body != "x" {
		t.Errorf("after the pipeline: %q", body)
	}
	if n := logins(s.Commands()); n != 1 {
		t.Errorf("%d logins, want 1 (the connection reused)", n)
	}
}

// TestModTimesUnsupported: a server without MDTM in FEAT is not asked.
func TestModTimesUnsupported(t *testing.T) {
	s := scriptServer(t, map[string]string{"a": "x"}, func(c *ftpscript.Conn, verb, arg string) bool {
		if verb == "FEAT" {
			c.Reply("211-Features:\r\n EPSV\r\n SIZE\r\n211 End")
			return true
		}
		return false
	})
	u, _ := url.Parse("ftp://" + s.Addr() + "/")
	_, err := newTraced().ModTimes(context.Background(), u, []string{"a"})
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("err = %v, want ErrUnsupported", err)
	}
	for _, cmd := range s.Commands() {
		if strings.HasPrefix(cmd, "MDTM") {
			t.Errorf("MDTM sent to a server without it: %q", s.Commands())
		}
	}
}
