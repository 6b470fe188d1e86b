package url_test

import (
	"testing"

	"github.com/urlderef/deref/url"
)

// BenchmarkParseFTP parses an ftp: URL of a list of small files and reads
// its FTP view, as each fetch of one does: the check made when parsing
// allocates nothing of its own, and the view a slice and a struct.
func BenchmarkParseFTP(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		u, err := url.Parse("ftp://127.0.0.1:2121/pub/many/f1234.txt;type=i")
		if err != nil {
			b.Fatal(err)
		}
		p, err := u.FTP()
		if err != nil || p.Name != "f1234.txt" || len(p.Dirs) != 2 {
			b.Fatal(p, err)
		}
	}
}
