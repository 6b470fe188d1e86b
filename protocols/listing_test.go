package protocols_test

import (
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

func TestNameFromURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://h/a/b.txt":          "b.txt",
		"http://h/pub/":             "pub",
		"http://h/":                 "index",
		"http://h":                  "index",
		"http://h/..%2F..%2Fetc":    ".._.._etc",
		"http://h/a/..":             "a",
		"http://h/%2E%2E":           "index",
		"file:///tmp/with%20space":  "with space",
		"http://h/a%5Cb":            "a_b",
		"http://h/x%0Ay":            "x_y",
		"gopher://h/0/docs/rfc.txt": "rfc.txt",
	} {
		if got := protocols.NameFromURL(url.MustParse(in), "index"); got != want {
			t.Errorf("NameFromURL(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestFormatEntry(t *testing.T) {
	e := protocols.Entry{Kind: protocols.KindDirectory, Name: "a\tb\nc", Size: -1, URL: "ftp://h/a/"}
	if got := protocols.FormatEntry(e); got != "directory\t-\t-\ta b c\tftp://h/a/" {
		t.Errorf("FormatEntry = %q", got)
	}
	e = protocols.Entry{Kind: protocols.KindFile, Name: "f", Size: 12, ModTime: time.Date(2020, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)), URL: "u"}
	if got := protocols.FormatEntry(e); got != "file\t12\t2020-01-02T02:04:05Z\tf\tu" {
		t.Errorf("FormatEntry = %q", got)
	}
	if fields := strings.Split(protocols.FormatEntry(e), "\t"); len(fields) != 5 {
		t.Errorf("want 5 fields, got %d", len(fields))
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"PASS hunter2":                  "PASS xxxxx",
		"pass hunter2":                  "pass xxxxx",
		"AUTHINFO PASS hunter2":         "AUTHINFO PASS xxxxx",
		"Authorization: Basic am9lOnB3": "Authorization: xxxxx",
		"USER joe":                      "USER joe",
		"230 welcome hunter2":           "230 welcome xxxxx",
		"Pass secret":                   "Pass xxxxx",
		"proxy-authorization: Bearer x": "proxy-authorization: xxxxx",
		"PAS":                           "PAS",
		"PASSWORD x":                    "PASSWORD x",
		"Pässe x":                       "Pässe x",
	} {
		if got := protocols.Redact(in, "hunter2"); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, é and 漢字\tTAB": "plain text, é and 漢字\tTAB",
		"a\x1b[31mred":              `a\x1b[31mred`,
		"bell\x07 del\x7f":          `bell\x07 del\x7f`,
		"line\r\nbreak":             `line\r\nbreak`,
		"c1 \u009b6n":               `c1 \u009b6n`,
		"bad \xff\x9b utf-8":        `bad \xff\x9b utf-8`,
	} {
		if got := protocols.Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
	e := protocols.Entry{Kind: protocols.KindLink, Name: "n\x1b]0;t\x07", Target: "t\tx\x1b", Size: -1}
	if got := protocols.FormatEntry(e); got != "link\t-\t-\t"+`n\x1b]0;t\x07`+"\t\t"+`t x\x1b` {
		t.Errorf("FormatEntry = %q", got)
	}
}
