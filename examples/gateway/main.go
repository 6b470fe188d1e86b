// Command gateway mounts deref's gateway in a Go web server of its own:
// Gopher, FTP, news and WAIS pages at the paths the gateway makes
// (/gopher/HOST/..., /ftp/HOST/..., ...), a page of the program's beside
// them, and the gateway's access log on standard error. The gateway's
// links start at the root of the site, so it is mounted there.
//
//	go run ./examples/gateway 127.0.0.1:8080
//	# then open http://127.0.0.1:8080/gopher/gopher.floodgap.com/1/
package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"os"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/gateway"
)

func main() {
	addr := "127.0.0.1:8080"
	if len(os.Args) > 1 {
		addr = os.Args[1]
	}
	c := fetch.NewClient()
	c.NetrcFile = "" // a gateway answers for others: never with this machine's credentials
	mux := http.NewServeMux()
	mux.Handle("/", gateway.Handler(c, gateway.Options{Log: os.Stderr}))
	mux.HandleFunc("/about", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "This site shows the Internet before the web: start at /.\n")
	})
	fmt.Fprintf(os.Stderr, "gateway: http://%s/\n", addr)
	log.Fatal(http.ListenAndServe(addr, mux))
}
