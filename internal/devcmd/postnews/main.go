// Command postnews posts generated articles to a news server with POST
// (RFC 3977 §6.3.1), so that the interoperability suite reads articles the
// server itself accepted, then writes a manifest of what it posted:
//
//	go run ./internal/devcmd/postnews ADDR GROUP DIR
//
// DIR/manifest holds one line per article, "number TAB message-id TAB
// file", the file (in DIR) holding the body as posted, LF line ends. The
// message-ids carry the time of the run, so that a server that keeps its
// spool between runs does not refuse them as duplicates.
package main

import (
	"fmt"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: postnews ADDR GROUP DIR")
		os.Exit(2)
	}
	addr, group, dir := os.Args[1], os.Args[2], os.Args[3]
	if err := run(addr, group, dir); err != nil {
		fmt.Fprintln(os.Stderr, "postnews:", err)
		os.Exit(1)
	}
}

type article struct {
	subject, body string
}

func articles() []article {
	var big strings.Builder
	for i := 1; big.Len() < 300<<10; i++ {
		fmt.Fprintf(&big, "line %06d of a long article, long enough to need many reads\n", i)
	}
	return []article{
		{"first article", "Hello from the interoperability suite.\nSecond line.\n"},
		{"dots and spaces", ".a line that starts with a dot\n..two dots\n.\nthe line above is a lone dot\n  indented line\n"},
		{"a long article", big.String()},
		{"utf-8 body", "Grüße aus dem Testlauf: ☃ ✓\n"},
	}
}

func run(addr, group, dir string) error {
	c, err := textproto.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, _, err := c.ReadCodeLine(200); err != nil {
		return err
	}
	run := time.Now().UTC().Format("20060102150405.000000000")
	var manifest strings.Builder
	for i, a := range articles() {
		id := fmt.Sprintf("<deref-%s-%d@harness.test>", run, i+1)
		if err := post(c, group, id, a); err != nil {
			return fmt.Errorf("posting %s: %w", id, err)
		}
		file := fmt.Sprintf("article-%d.txt", i+1)
		if err := os.WriteFile(filepath.Join(dir, file), []byte(a.body), 0o644); err != nil {
			return err
		}
		n, err := number(c, group, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(&manifest, "%d\t%s\t%s\n", n, id, file)
	}
	return os.WriteFile(filepath.Join(dir, "manifest"), []byte(manifest.String()), 0o644)
}

func post(c *textproto.Conn, group, id string, a article) error {
	if err := c.PrintfLine("POST"); err != nil {
		return err
	}
	if _, _, err := c.ReadCodeLine(340); err != nil {
		return err
	}
	w := c.DotWriter()
	fmt.Fprintf(w, "From: Interop Suite <interop@harness.test>\nNewsgroups: %s\nSubject: %s\nMessage-ID: %s\n", group, a.subject, id)
	fmt.Fprintf(w, "MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\n%s", a.body)
	if err := w.Close(); err != nil {
		return err
	}
	_, _, err := c.ReadCodeLine(240)
	return err
}

// number finds the article number the server gave id, from the overview
// of the group's newest articles (the server may take a moment to file it).
func number(c *textproto.Conn, group, id string) (int64, error) {
	for try := 0; try < 50; try++ {
		if err := c.PrintfLine("GROUP %s", group); err != nil {
			return 0, err
		}
		_, msg, err := c.ReadCodeLine(211)
		if err != nil {
			return 0, err
		}
		var count, low, high int64
		fmt.Sscan(msg, &count, &low, &high)
		if count > 0 {
			if err := c.PrintfLine("OVER %d-%d", max(low, high-20), high); err != nil {
				return 0, err
			}
			if _, _, err := c.ReadCodeLine(224); err != nil {
				return 0, err
			}
			lines, err := c.ReadDotLines()
			if err != nil {
				return 0, err
			}
			for _, l := range lines {
				f := strings.Split(l, "\t")
				if len(f) > 4 && f[4] == id {
					var n int64
					fmt.Sscan(f[0], &n)
					return n, nil
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return 0, fmt.Errorf("%s does not appear in %s", id, group)
}
