// Command prosperod serves a Prospero tree over ARDP on 127.0.0.1 with
// the project's test server (internal/testserver/prosperod): the tree of
// the protocol notes' captures, or a folder's files as the anonymous-FTP
// area (hsonames AFTP/...), for trying deref's prospero: client by hand
// and for the benchmarks. No installable Prospero server exists.
//
//	go run ./internal/devcmd/prosperod [-port N] [-dir DIR] [-aftp HOST(PORT)]
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/urlderef/deref/internal/testserver/prosperod"
)

func main() {
	port := flag.Int("port", 0, "the UDP port (0: any free one)")
	dir := flag.String("dir", "", "serve this folder's files as the anonymous-FTP area (default: the notes' fixture tree)")
	aftp := flag.String("aftp", "", "the host AFTP access methods name, HOST or HOST(PORT) (default: the server's own name)")
	flag.Parse()
	s := &prosperod.Server{Port: *port, AFTPHost: *aftp}
	if *dir != "" {
		s.Files = map[string]string{}
		err := filepath.WalkDir(*dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(*dir, p)
			s.Files["ftp/"+filepath.ToSlash(rel)] = string(b)
			return err
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "prosperod:", err)
			os.Exit(1)
		}
	}
	if err := s.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "prosperod:", err)
		os.Exit(1)
	}
	fmt.Printf("prospero://%s/AFTP\n", s.Addr())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	<-sig
	s.Close()
}
