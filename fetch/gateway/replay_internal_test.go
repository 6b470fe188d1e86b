package gateway

import "testing"

// A replay path's parts: its time, and a URL whose "//" a client folded.
func TestReplayPathParts(t *testing.T) {
	for _, tt := range []struct {
		in      string
		ts      string
		raw, ok bool
	}{
		{"20261128015438", "20261128015438", false, true},
		{"2026id_", "2026", true, true},
		{"id_", "", false, false},
		{"202611280154381", "", false, false},
		{"2026x", "", false, false},
		{"*", "", false, false},
	} {
		if ts, raw, ok := timestamp(tt.in); ts != tt.ts || raw != tt.raw || ok != tt.ok {
			t.Errorf("timestamp(%q) = %q %v %v", tt.in, ts, raw, ok)
		}
	}
	for in, want := range map[string]string{
		"gopher:/h:70/1/": "gopher://h:70/1/",
		"gopher://h/1/":   "gopher://h/1/",
		"news:comp.lang":  "news:comp.lang",
		"http:/h/a?x=/y":  "http://h/a?x=/y",
		"file:///srv/x":   "file:///srv/x",
		"/just/a/path":    "/just/a/path",
	} {
		if got := schemeSlashes(in); got != want {
			t.Errorf("schemeSlashes(%q) = %q, want %q", in, got, want)
		}
	}
}
