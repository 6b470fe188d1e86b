package crawl

import (
	"runtime"
	"testing"
)

// The modes of wget's --restrict-file-names, and the names they make of
// decoded parts of URLs (wget 1.21's, as the interop suite checks them
// against wget itself).
func TestFileNames(t *testing.T) {
	for _, tt := range []struct {
		modes, part, want string
	}{
		{"unix", "a b:c\\d?e#f%g", "a b:c\\d?e#f%g"},
		{"unix", "x/y\x01z\x7f", "x%2Fy%01z%7F"},
		{"unix", "..", "%2E%2E"},
		{"unix", "gé", "gé"},
		{"unix,ascii", "gé", "g%C3%A9"},
		{"unix,nocontrol", "a\x01b", "a\x01b"},
		{"windows", `a\b|c:d?e"f*g<h>i`, "a%5Cb%7Cc%3Ad%3Fe%22f%2Ag%3Ch%3Ei"},
		{"unix,lowercase", "A/B..C", "a%2fb..c"},
		{"lowercase", "..", "%2e%2e"},
		{"windows,uppercase", "x:y", "X%3AY"},
	} {
		fn, err := ParseFileNames(tt.modes)
		if err != nil {
			t.Fatalf("%s: %v", tt.modes, err)
		}
		if runtime.GOOS == "windows" && fn.KeepControls {
			continue // escaped there all the same
		}
		if got := fn.name(tt.part); got != tt.want {
			t.Errorf("%s: %q made %q, want %q", tt.modes, tt.part, got, tt.want)
		}
	}
	for _, bad := range []string{"vms", "unix,windows", "lowercase,uppercase", ""} {
		if _, err := ParseFileNames(bad); err == nil {
			t.Errorf("%q taken", bad)
		}
	}
	if fn, _ := ParseFileNames("Windows"); fn.portSep() != "+" || fn.querySep() != "@" {
		t.Errorf("windows: %q %q", fn.portSep(), fn.querySep())
	}
	if fn, _ := ParseFileNames("unix"); fn.portSep() != ":" || fn.querySep() != "?" {
		t.Errorf("unix: %q %q", fn.portSep(), fn.querySep())
	}
}
