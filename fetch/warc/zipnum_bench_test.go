package warc

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkZipNumLookup looks captures up in a ZipNum index of 300,000
// generated captures, as deref serve --archive does for each page
// (internal/devcmd/zipnumbench measures 10,000,000).
func BenchmarkZipNumLookup(b *testing.B) {
	const n = 300_000
	dir := b.TempDir()
	var flat bytes.Buffer
	for i := range n {
		u := fmt.Sprintf("http://h%04d.example.com/p/%05d.html", i/100, i%100)
		fmt.Fprintf(&flat, "%s 20260102030405 {\"digest\":\"%032d\",\"filename\":\"crawl.warc.gz\",\"length\":\"%d\",\"mime\":\"text/html\",\"offset\":\"%d\",\"status\":\"200\",\"url\":\"%s\"}\n",
			waczKey(u), i*7919, 500+i%9000, i*1000, u)
	}
	cdx, err := os.Create(filepath.Join(dir, "index.cdx.gz"))
	if err != nil {
		b.Fatal(err)
	}
	idx, err := os.Create(filepath.Join(dir, "index.idx"))
	if err != nil {
		b.Fatal(err)
	}
	if err := writeZipNum(&flat, cdx, idx, "index.cdx.gz"); err != nil {
		b.Fatal(err)
	}
	cdx.Close()
	idx.Close()
	a, err := Open(filepath.Join(dir, "index.idx"))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		k := (i * 104729) % n
		if len(a.Captures(fmt.Sprintf("http://h%04d.example.com/p/%05d.html", k/100, k%100))) != 1 {
			b.Fatal("not found")
		}
	}
}
