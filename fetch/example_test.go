package fetch_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urlderef/deref/fetch"
)

func ExampleClient_Get() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "note.txt"), []byte("dereferenced\n"), 0o644)

	c := fetch.NewClient()
	resp, err := c.Get(context.Background(), "file://"+dir+"/note.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Printf("%s %d %s", resp.MediaType, resp.Size, b)
	// Output: text/plain 13 dereferenced
}
