package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQueryData: -G puts -d's and --data-urlencode's data into the query
// as curl 7.88 puts them (the expected URLs are those nginx logged for curl's),
// and --url-query adds to it with or without -G; without -G, -d is
// refused (no request body).
func TestQueryData(t *testing.T) {
	file := filepath.Join(t.TempDir(), "q")
	os.WriteFile(file, []byte("a b\r\nc"), 0o644)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-G", "-d", "a=1", "-d", "b=2"}, "/p?a=1&b=2"},
		{[]string{"-G", "--data-urlencode", "q=a b&c", "--data-urlencode", "=x/y", "--data-urlencode", "plain é"}, "/p?q=a+b%26c&x%2fy&plain+%c3%a9"},
		{[]string{"-G", "--data-urlencode", "f@" + file}, "/p?f=a+b%0d%0ac"},
		{[]string{"--url-query", "k=v w", "--url-query", "+raw=1"}, "/p?k=v+w&raw=1"},
		{[]string{"-G", "--data-urlencode", "a@b=c"}, "/p?a@b=c"},
		{[]string{"-G", "-d", "@" + file}, "/p?a bc"}, // CR and LF taken out (the space: see below)
	} {
		var o options
		if _, err := parseFlags(cmdGet, append(tt.args, "u"), &o); err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		q, err := queryString(o.query, strings.NewReader(""))
		if got := withQuery("http://h/p", q); err != nil || got != "http://h"+tt.want {
			t.Errorf("%q: %q, %v; want %q", tt.args, got, err, "http://h"+tt.want)
		}
	}
	for raw, want := range map[string]string{"http://h/p?x=1#f": "http://h/p?x=1&q=1#f", "http://h/p?": "http://h/p?q=1"} {
		if got := withQuery(raw, "q=1"); got != want {
			t.Errorf("%s: %s, want %s", raw, got, want)
		}
	}
	if r := runDeref(t, "", "-d", "a=1", "http://127.0.0.1:1/"); r.code == 0 || !strings.Contains(r.stderr, "with -G") {
		t.Errorf("-d without -G: exit %d, %s", r.code, r.stderr)
	}
	// A space in -d's data is encoded as deref encodes one in any URL
	// given (curl refuses the URL).
	if r := runDeref(t, "", "-G", "-d", "b=2 3", "http://127.0.0.1:1/p"); r.code == 0 || !strings.Contains(r.stderr, "/p?b=2%203:") {
		t.Errorf("a space in -d's data: exit %d, %s", r.code, r.stderr)
	}
}
