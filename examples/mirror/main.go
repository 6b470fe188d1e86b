// Command mirror keeps a folder a copy of a remote tree, as a cron job
// would: only what changed is fetched, files gone from the server are
// removed, and the exit status says whether anything failed.
//
//	go run ./examples/mirror ftp://ftp.example.org/pub/ pub
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/mirror"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mirror URL DIR")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := mirror.Run(ctx, fetch.NewClient(), os.Args[1], os.Args[2], mirror.Options{
		OnlyNewer: true,
		Delete:    true,
		Retries:   3,
		Events: func(ev mirror.Event) {
			if ev.Type == mirror.EventDone && ev.Action != mirror.ActionUnchanged {
				fmt.Println(ev.Action, ev.Path)
			}
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "mirror:", err)
		os.Exit(fetch.ExitCode(err))
	}
	fmt.Printf("%d new, %d updated, %d deleted, %d failed, %d bytes in %.1f s\n",
		rep.New, rep.Updated, rep.Deleted, rep.Failed, rep.Bytes, rep.Seconds)
	if rep.Failed > 0 {
		os.Exit(1)
	}
}
