package mirror_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/mirror"
)

// BenchmarkMirrorFTP mirrors a folder of 200 small files from the
// in-process FTP server, the shape of an archive of many small files.
func BenchmarkMirrorFTP(b *testing.B) {
	root := b.TempDir()
	for i := range 200 {
		os.WriteFile(filepath.Join(root, fmt.Sprintf("f%03d.txt", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644)
	}
	src := serveFTP(b, root)
	c := fetch.NewClient()
	b.ReportAllocs()
	for b.Loop() {
		dst := b.TempDir()
		rep, err := mirror.Run(context.Background(), c, src, dst, mirror.Options{})
		if err != nil || rep.New != 200 {
			b.Fatalf("%v %+v", err, rep)
		}
	}
}

// BenchmarkMirrorFileSize mirrors one file of growing size over FTP:
// bytes and allocations per run stay flat, the file is streamed.
func BenchmarkMirrorFileSize(b *testing.B) {
	for _, size := range []int64{1 << 20, 16 << 20, 128 << 20} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			root := b.TempDir()
			f, _ := os.Create(filepath.Join(root, "big.bin"))
			f.Truncate(size)
			f.Close()
			src := serveFTP(b, root)
			c := fetch.NewClient()
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				rep, err := mirror.Run(context.Background(), c, src, b.TempDir(), mirror.Options{})
				if err != nil || rep.Bytes != size {
					b.Fatalf("%v %+v", err, rep)
				}
			}
		})
	}
}
