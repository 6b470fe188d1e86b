package gateway_test

import (
	"testing"
	"time"

	"github.com/urlderef/deref/fetch/gateway"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
)

// TestKeptAfterPause: the first visitor after a pause long enough for
// the FTP server to close the gateway's kept connection ("421 Timeout.")
// gets the file, not a 504 or a 503: the dead connection is replaced.
func TestKeptAfterPause(t *testing.T) {
	fs := &ftpscript.Server{Files: map[string]string{"pub/a.txt": "a\n", "b.txt": "b\n"}, IdleTimeout: 200 * time.Millisecond}
	if err := fs.Start(); err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	s := start(t, gateway.Options{AllowPrivate: true})
	for i, p := range []string{"/pub/a.txt", "/b.txt", "/pub/a.txt"} {
		if i > 0 {
			time.Sleep(400 * time.Millisecond)
		}
		resp, body := get(t, s.URL+"/ftp/"+fs.Addr()+p)
		if resp.StatusCode != 200 || body != p[len(p)-5:len(p)-4]+"\n" {
			t.Errorf("%s after a pause: %d %q", p, resp.StatusCode, body)
		}
	}
}
