package fetch

import "testing"

func TestUnhash(t *testing.T) {
	for in, want := range map[string]string{
		"with#040space.txt":   "with space.txt",
		"percent#045sign.txt": "percent%sign.txt",
		"#043b#040c":          "#b c",
		"a#057b":              "a/b",
		"plain.txt":           "plain.txt",
		"short#04":            "short#04",
		"not#089octal":        "not#089octal",
		"too#400big":          "too#400big",
		"#":                   "#",
	} {
		if got := unhash(in); got != want {
			t.Errorf("unhash(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestShownAs(t *testing.T) {
	for _, tc := range []struct {
		display, name string
		want          bool
	}{
		{"with space.txt", "with space.txt", true},
		{"with space.txt                        2020-Jan-02 03:04     0.0 KB", "with space.txt", true},
		{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa#b c.   2026-Nov-23 01:21     0.0 KB", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa#b c.txt", true},
		{"with space.txt and more", "with space.txt", false},
		{"x y z", "x y", false},
		{"About this server", "about.txt", false},
		{"short  2020", "short name", false}, // a cut column confirms only a long prefix
	} {
		if got := shownAs(tc.display, tc.name); got != tc.want {
			t.Errorf("shownAs(%q, %q) = %v, want %v", tc.display, tc.name, got, tc.want)
		}
	}
}
