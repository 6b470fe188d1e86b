// Command archive crawls what is reachable below a URL into a WARC file
// with its CDXJ index, as deref crawl --scope prefix --warc-file NAME
// --warc-cdx does: a Gopher hole, an FTP archive, a site. Run again with
// the same NAME, it records only what the first run did not reach,
// continuing from NAME.state.
//
//	go run ./examples/archive gopher://gopher.example.org/1/ hole
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/fetch/warc"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: archive URL NAME")
		os.Exit(2)
	}
	start, name := os.Args[1], os.Args[2]
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	// Numbered: a resumed run writes NAME-00001.warc.gz beside the first
	// run's NAME-00000.warc.gz instead of over it.
	w, err := warc.Create(name, warc.Options{Software: "archive-example/1.0", CDX: true, Numbered: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "archive:", err)
		os.Exit(8)
	}
	rec := &warc.Recorder{W: w}
	c := fetch.NewClient()
	c.Recorder = rec
	rep, err := crawl.Run(ctx, c, []string{start}, crawl.Options{
		Prefix: true,
		// Each URL's records and its line in the state are written
		// together: killed at any point, the run goes on where it was.
		State: name + ".state",
		Events: func(ev crawl.Event) {
			if ev.Err != nil {
				fmt.Fprintln(os.Stderr, ev.URL+":", ev.Err)
			}
		},
	})
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = rec.Err()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "archive:", err)
		os.Exit(fetch.ExitCode(err))
	}
	fmt.Printf("%d fetched (%d by an earlier run), %d failed, %d bytes in %.1f s\n", rep.Fetched, rep.Resumed, rep.Failed, rep.Bytes, rep.Seconds)
	if rep.Failed > 0 {
		os.Exit(1)
	}
}
