package warc_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nlnwa/gowarc"

	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/internal/testserver"
)

// A Gopher item and menu are archived as the server sent them: CRLF line
// ends, dot-stuffing and the terminating "." line included, whatever the
// object read from the response is (LF lines, no terminator); a menu
// record names itself one (application/gopher-menu).
func TestRecordGopherAsSent(t *testing.T) {
	replies := map[string]string{
		"/text": "first line\r\n..a stuffed dot\r\nlast\r\n.\r\n",
		"":      "0A text\t/text\t127.0.0.1\t70\r\niAn info line\t\terror.host\t1\r\n.\r\n",
	}
	ln, err := testserver.Listen(func(c net.Conn) {
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadString('\n')
		io.WriteString(c, replies[strings.TrimRight(line, "\r\n")])
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "g"), warc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := recordingClient(w)
	objects := map[string]string{}
	for _, u := range []string{"gopher://" + ln.Addr().String() + "/0/text", "gopher://" + ln.Addr().String() + "/1"} {
		resp, err := c.Get(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		objects[u] = string(b)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := objects["gopher://"+ln.Addr().String()+"/0/text"]; got != "first line\n.a stuffed dot\nlast\n" {
		t.Errorf("the text read: %q", got)
	}
	recs, blocks := readRecords(t, filepath.Join(dir, "g.warc.gz"), true)
	found := 0
	for i, rec := range recs {
		h := rec.WarcHeader()
		switch h.Get(gowarc.WarcTargetURI) {
		case "gopher://" + ln.Addr().String() + "/0/text":
			found++
			if blocks[i] != replies["/text"] || h.Get(gowarc.ContentType) != "text/plain" {
				t.Errorf("text record %q, %s", blocks[i], h.Get(gowarc.ContentType))
			}
		case "gopher://" + ln.Addr().String() + "/1":
			found++
			if blocks[i] != replies[""] || h.Get(gowarc.ContentType) != "application/gopher-menu" || h.Get("WARC-Protocol") != "gopher" {
				t.Errorf("menu record %q, %s, %s", blocks[i], h.Get(gowarc.ContentType), h.Get("WARC-Protocol"))
			}
		}
	}
	if found != 2 {
		t.Errorf("%d of 2 records", found)
	}
}

// Index keys fold case for the web only, as pywb folds them: Gopher
// selectors and FTP paths that differ in case are two captures, two keys.
func TestIndexKeysKeepCase(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "k"), warc.Options{CDX: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"gopher://h/0/README", "gopher://h/0/readme", "ftp://h/Pub/A.txt", "http://H/Page"} {
		w.Write(warc.Record{Type: "resource", URI: u, MediaType: "text/plain", Body: strings.NewReader(u)})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, l := range readCDX(t, filepath.Join(dir, "k.cdxj")) {
		keys = append(keys, l.key)
	}
	want := "ftp://(h,)/Pub/A.txt gopher://(h,)/0/README gopher://(h,)/0/readme h)/page"
	if strings.Join(keys, " ") != want {
		t.Errorf("keys %q, want %q", keys, want)
	}
}
