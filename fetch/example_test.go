package fetch_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

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

// A download keeps its name only when its digest is the one expected:
// here the digest comes from a sums file, as sha256sum writes them.
func ExampleFindChecksum() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "release.tar"), []byte("the release\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "other.tar"), []byte("changed since\n"), 0o644)
	sums := "f406618d666ff07cf9d4495e096098b9c095ee1f15420609a1da227d69b10958  release.tar\n" +
		"0000000000000000000000000000000000000000000000000000000000000000  other.tar\n"

	c := fetch.NewClient()
	out, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(out)
	for _, name := range []string{"release.tar", "other.tar"} {
		sum, ok, err := fetch.FindChecksum(strings.NewReader(sums), name)
		if err != nil || !ok {
			fmt.Println(name, ok, err)
			continue
		}
		_, err = c.DownloadWith(context.Background(), "file://"+filepath.ToSlash(dir)+"/"+name, out, fetch.DownloadOptions{Checksum: &sum})
		fmt.Println(name, sum.Algorithm, errors.Is(err, fetch.ErrChecksum))
	}
	entries, _ := os.ReadDir(out)
	fmt.Println(len(entries), "file kept:", entries[0].Name())
	// Output:
	// release.tar sha256 false
	// other.tar sha256 true
	// 1 file kept: release.tar
}

// A large file over several connections, each fetching its own range,
// for servers that cap each connection's rate.
func ExampleDownloadOptions_segments() {
	data := bytes.Repeat([]byte("segment "), 1<<19) // 4 MiB
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "big.bin", time.Time{}, bytes.NewReader(data))
	}))
	defer srv.Close()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)

	p, err := fetch.NewClient().DownloadWith(context.Background(), srv.URL+"/big.bin", dir,
		fetch.DownloadOptions{Segments: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := os.ReadFile(p)
	fmt.Println(filepath.Base(p), len(b), bytes.Equal(b, data))
	// Output: big.bin 4194304 true
}
