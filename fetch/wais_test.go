package fetch_test

import (
	"context"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/urlderef/deref/internal/testserver/waisd"
)

const alphaPath = "/test/TEXT/127/1=localhost%3A2110;2=/srv/wais/idx/test;3=0%20127%20/srv/wais/docs/alpha.txt;4=localhost%3A2110;5=/srv/wais/idx/test;6=0%20127%20/srv/wais/docs/alpha.txt;7=%00;"

// A wais: document is downloaded under the file name of its docid.
func TestWAISDownload(t *testing.T) {
	s := waisd.New()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir := t.TempDir()
	p, err := newClient().Download(context.Background(), "wais://"+s.Addr()+alphaPath, dir)
	if err != nil {
		t.Fatal(err)
	}
	if p != filepath.Join(dir, "alpha.txt") {
		t.Errorf("saved as %s", p)
	}
	if b, _ := os.ReadFile(p); string(b) != waisd.Alpha {
		t.Errorf("%q", b)
	}
}

// With a gateway configured for wais (RFC 1738 §4), wais: URLs go to it
// and never to the WAIS server.
func TestWAISGateway(t *testing.T) {
	s := waisd.New()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var asked string
	gw := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		asked = r.RequestURI
		io.WriteString(w, "from the gateway")
	}))
	defer gw.Close()
	c := newClient()
	c.Gateways = map[string]string{"wais": gw.URL + "/"}
	resp, err := c.Get(context.Background(), "wais://"+s.Addr()+"/test?gophers")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "from the gateway" || asked != "wais://"+s.Addr()+"/test?gophers" {
		t.Errorf("gateway got %q, answered %q", asked, b)
	}
	if s.Requests() != 0 {
		t.Errorf("the WAIS server saw %d requests", s.Requests())
	}
}
