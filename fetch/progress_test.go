package fetch_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"testing"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/url"
)

// TestGopherPlusProgressTotal: a Gopher+ item whose reply states its
// length ("+5") has that length as its progress's Total.
func TestGopherPlusProgressTotal(t *testing.T) {
	ln, err := testserver.Listen(func(c net.Conn) {
		defer c.Close()
		bufio.NewReader(c).ReadString('\n')
		io.WriteString(c, "+5\r\nhello")
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c := fetch.NewClient()
	c.NetrcFile = ""
	var last fetch.Progress
	resp, err := c.FetchWith(context.Background(), url.MustParse("gopher://"+ln.Addr().String()+"/9/f%09%09+"), fetch.FetchOptions{Progress: func(p fetch.Progress) { last = p }})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "hello" || !last.Done || last.Total != 5 || last.Bytes != 5 {
		t.Errorf("%q, last progress %+v", b, last)
	}
}
