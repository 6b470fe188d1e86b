package warc_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/nlnwa/gowarc"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/warc"
)

// A Client with a Recorder writes each retrieval into the archive as its
// body is read: here a file: object, the same for every scheme. The
// record is written once the body is read to its end and closed, and
// the file is whole once the Writer is closed.
func ExampleRecorder() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "note.txt"), []byte("kept\n"), 0o644)

	w, err := warc.Create(filepath.Join(dir, "notes"), warc.Options{Software: "example/1.0", CDX: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	rec := &warc.Recorder{W: w}
	c := fetch.NewClient()
	c.Recorder = rec
	resp, err := c.Get(context.Background(), "file://"+filepath.ToSlash(dir)+"/note.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err := w.Close(); err != nil || rec.Err() != nil {
		fmt.Println(err, rec.Err())
		return
	}

	r, err := gowarc.NewWarcFileReader(filepath.Join(dir, "notes.warc.gz"), 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	for {
		record, _, _, err := r.Next()
		if err != nil {
			break
		}
		h := record.WarcHeader()
		if record.Type() == gowarc.Warcinfo {
			fmt.Println(record.Type(), h.Get(gowarc.ContentType))
		} else {
			block, _ := record.Block().RawBytes()
			b, _ := io.ReadAll(block)
			fmt.Printf("%s %s %s %s %q\n", record.Type(), filepath.Base(h.Get(gowarc.WarcTargetURI)), h.Get(gowarc.ContentType), h.Get("WARC-Protocol"), b)
		}
		record.Close()
	}
	_, err = os.Stat(filepath.Join(dir, "notes.cdxj"))
	fmt.Println("index:", err == nil)
	// Output:
	// warcinfo application/warc-fields
	// resource note.txt text/plain file "kept\n"
	// index: true
}
