package fetch

import "testing"

// A redirect downgrades when it goes from a secure scheme to its plain
// counterpart, not to another protocol.
func TestDowngrade(t *testing.T) {
	c := NewClient()
	for _, tt := range []struct {
		from, to string
		want     bool
	}{
		{"https", "http", true}, {"ftps", "ftp", true}, {"gophers", "gopher", true}, {"nntps", "nntp", true}, {"snews", "news", true},
		{"https", "ftp", false}, {"http", "http", false}, {"https", "https", false}, {"ftp", "http", false},
	} {
		if got := c.downgrade(tt.from, tt.to); got != tt.want {
			t.Errorf("%s to %s: %v", tt.from, tt.to, got)
		}
	}
}
