// Command get is the smallest program that embeds deref: it dereferences
// the URL given as its argument and copies the object to standard output.
//
//	go run ./examples/get file:///etc/hostname
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urlderef/deref/fetch"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: get URL")
		os.Exit(1)
	}
	resp, err := fetch.Get(context.Background(), os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(fetch.ExitCode(err))
	}
	defer resp.Body.Close()
	if _, err := io.Copy(os.Stdout, resp.Body); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(fetch.ExitCode(err))
	}
	if err := resp.Body.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(fetch.ExitCode(err))
	}
}
