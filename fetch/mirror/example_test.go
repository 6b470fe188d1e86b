package mirror_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/mirror"
)

// A tree is mirrored, then mirrored again where nothing changed: the
// second run transfers nothing.
func ExampleRun() {
	src, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(src)
	os.MkdirAll(filepath.Join(src, "docs"), 0o755)
	os.WriteFile(filepath.Join(src, "README"), []byte("read me\n"), 0o644)
	os.WriteFile(filepath.Join(src, "docs", "guide.txt"), []byte("a guide\n"), 0o644)
	dst, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dst)

	c := fetch.NewClient()
	for range 2 {
		rep, err := mirror.Run(context.Background(), c, "file://"+filepath.ToSlash(src)+"/", dst, mirror.Options{OnlyNewer: true})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("new %d, unchanged %d, %d bytes\n", rep.New, rep.Unchanged, rep.Bytes)
	}
	// Output:
	// new 2, unchanged 0, 16 bytes
	// new 0, unchanged 2, 0 bytes
}
