package fetch_test

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
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

// An unchanged http.Client fetches deref's schemes once the transport is
// registered for them.
func ExampleNewTransport() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "note.txt"), []byte("dereferenced\n"), 0o644)

	t := &http.Transport{}
	rt := fetch.NewTransport(fetch.NewClient())
	for _, scheme := range []string{"ftp", "gopher", "news", "nntp", "wais", "file"} {
		t.RegisterProtocol(scheme, rt)
	}
	client := &http.Client{Transport: t}

	resp, err := client.Get("file://" + filepath.ToSlash(dir) + "/note.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Printf("%s %s %s", resp.Status, resp.Header.Get("Content-Type"), b)
	// Output: 200 OK text/plain dereferenced
}

// Any tree of listings is a file system: here a file: folder, the same
// for an FTP folder, a Gopher menu, an HTTP index page or a newsgroup.
func ExampleNewFS() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.MkdirAll(filepath.Join(dir, "pub", "docs"), 0o755)
	os.WriteFile(filepath.Join(dir, "pub", "README"), []byte("read me\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "pub", "docs", "guide.txt"), []byte("a guide\n"), 0o644)

	fsys, err := fetch.NewFS(context.Background(), fetch.NewClient(), "file://"+filepath.ToSlash(dir)+"/pub/")
	if err != nil {
		fmt.Println(err)
		return
	}
	fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			info, _ := d.Info()
			fmt.Println(p, info.Size())
		}
		return err
	})
	b, _ := fs.ReadFile(fsys, "docs/guide.txt")
	fmt.Print(string(b))
	// Output:
	// README 8
	// docs/guide.txt 8
	// a guide
}
