package gateway_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"strings"
	"testing"

	"github.com/urlderef/deref/fetch/gateway"
	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
)

// TestRanges: every form of a single range, of an object whose length
// the protocol gives and that it can resume (FTP), and of one whose
// length it does not give and that it cannot resume (a Gopher binary):
// 206 with the range's bytes and a Content-Range naming the whole length;
// 416 for a range past the end; 200 with the whole object for several
// ranges or a malformed one.
func TestRanges(t *testing.T) {
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	obj := string(data)
	gopher := gopherServer(t, map[string]string{"/bin": obj})
	fs := &ftpscript.Server{Files: map[string]string{"pub/bin": obj}}
	if err := fs.Start(); err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	s := start(t, gateway.Options{AllowPrivate: true})
	// A suffix of an FTP file is asked for from its first byte, its size
	// known from SIZE first: one RETR, after a REST.
	before := len(fs.Commands())
	if resp, body := get(t, s.URL+"/ftp/"+fs.Addr()+"/pub/bin", "Range", "bytes=-10"); resp.StatusCode != 206 || body != obj[4990:] {
		t.Errorf("a suffix over FTP: %d %q", resp.StatusCode, body)
	}
	var retrs, rests []string
	for _, c := range fs.Commands()[before:] {
		if strings.HasPrefix(c, "RETR") {
			retrs = append(retrs, c)
		}
		if strings.HasPrefix(c, "REST") {
			rests = append(rests, c)
		}
	}
	if len(retrs) != 1 || len(rests) != 1 || rests[0] != "REST 4990" {
		t.Errorf("a suffix over FTP sent %q and %q", rests, retrs)
	}
	for _, path := range []string{"/gopher/" + gopher + "/9/bin", "/ftp/" + fs.Addr() + "/pub/bin"} {
		for _, tc := range []struct {
			rng         string
			status      int
			first, last int
		}{
			{"bytes=0-9999", 206, 0, 4999},
			{"bytes=0-99", 206, 0, 99},
			{"bytes=100-199", 206, 100, 199},
			{"bytes=1000-1999", 206, 1000, 1999},
			{"bytes=4990-", 206, 4990, 4999},
			{"bytes=-10", 206, 4990, 4999},
			{"bytes=-9000", 206, 0, 4999},
			{"bytes=0-", 200, 0, 4999}, // the whole object is the range: it streams as it comes
			{"bytes=5000-", 416, 0, -1},
			{"bytes=0-1,5-6", 200, 0, 4999},
			{"bytes=9-1", 200, 0, 4999},
		} {
			resp, body := get(t, s.URL+path, "Range", tc.rng)
			if tc.rng == "bytes=0-" && resp.StatusCode == 206 {
				tc.status = 206 // as good an answer, where the length is known
			}
			if resp.StatusCode != tc.status {
				t.Errorf("%s %s: %d, want %d (%.80q)", path, tc.rng, resp.StatusCode, tc.status, body)
				continue
			}
			switch tc.status {
			case 206:
				// The whole length, or "*" where the protocol gives none
				// and the range ends before the object does (RFC 9110
				// §14.4): the gateway reads no further than the range.
				want := fmt.Sprintf("bytes %d-%d/5000", tc.first, tc.last)
				if strings.HasPrefix(path, "/gopher/") && tc.last < 4999 {
					want = fmt.Sprintf("bytes %d-%d/*", tc.first, tc.last)
				}
				if cr := resp.Header.Get("Content-Range"); cr != want || body != obj[tc.first:tc.last+1] {
					t.Errorf("%s %s: Content-Range %q (want %q), %d bytes", path, tc.rng, cr, want, len(body))
				}
			case 200:
				if body != obj {
					t.Errorf("%s %s: 200 with %d bytes", path, tc.rng, len(body))
				}
			case 416:
				if cr := resp.Header.Get("Content-Range"); cr != "bytes */5000" {
					t.Errorf("%s %s: 416 with Content-Range %q", path, tc.rng, cr)
				}
			}
		}
	}
}

// TestIfRange: a range goes only to a client whose copy is the server's
// (If-Range naming its Last-Modified exactly); any other date, or an
// object with no date (Gopher), gets the whole object with 200.
func TestIfRange(t *testing.T) {
	obj := strings.Repeat("0123456789", 100)
	fs := &ftpscript.Server{Files: map[string]string{"f.bin": obj}}
	if err := fs.Start(); err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	gopher := gopherServer(t, map[string]string{"/bin": obj})
	s := start(t, gateway.Options{AllowPrivate: true})
	u := s.URL + "/ftp/" + fs.Addr() + "/f.bin"
	resp, _ := get(t, u)
	mod := resp.Header.Get("Last-Modified")
	if mod != "Thu, 02 Jan 2020 03:04:05 GMT" {
		t.Fatalf("Last-Modified %q", mod)
	}
	resp, body := get(t, u, "Range", "bytes=10-19", "If-Range", mod)
	if resp.StatusCode != 206 || body != "0123456789" {
		t.Errorf("If-Range matching: %d %q", resp.StatusCode, body)
	}
	for _, ir := range []string{"Thu, 02 Jan 2020 03:04:06 GMT", "Wed, 01 Jan 2020 03:04:05 GMT", `"an-etag"`, "garbage"} {
		resp, body = get(t, u, "Range", "bytes=10-19", "If-Range", ir)
		if resp.StatusCode != 200 || body != obj || resp.Header.Get("Content-Range") != "" {
			t.Errorf("If-Range %q not matching: %d, %d bytes, Content-Range %q", ir, resp.StatusCode, len(body), resp.Header.Get("Content-Range"))
		}
	}
	resp, body = get(t, s.URL+"/gopher/"+gopher+"/9/bin", "Range", "bytes=10-19", "If-Range", mod)
	if resp.StatusCode != 200 || body != obj {
		t.Errorf("If-Range of an object with no date: %d, %d bytes", resp.StatusCode, len(body))
	}
}

// TestHeadFTP: HEAD of an FTP file through the gateway asks SIZE and
// MDTM only, as deref -I does: no RETR, which aborted would cost the next
// request a new login.
func TestHeadFTP(t *testing.T) {
	fs := &ftpscript.Server{Files: map[string]string{"f.txt": "hello\n", "g.bin": "x"}}
	if err := fs.Start(); err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	s := start(t, gateway.Options{AllowPrivate: true})
	for _, p := range []string{"/f.txt", "/f.txt?raw=1"} {
		req, _ := http.NewRequest("HEAD", s.URL+"/ftp/"+fs.Addr()+p, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.ContentLength != 6 || resp.Header.Get("Last-Modified") == "" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("HEAD %s: %d, length %d, %v", p, resp.StatusCode, resp.ContentLength, resp.Header)
		}
	}
	get(t, s.URL+"/ftp/"+fs.Addr()+"/g.bin")
	logins := 0
	for _, cmd := range fs.Commands() {
		if strings.HasPrefix(cmd, "RETR f.txt") {
			t.Errorf("HEAD sent %q", cmd)
		}
		if strings.HasPrefix(cmd, "USER") {
			logins++
		}
	}
	if logins != 1 {
		t.Errorf("%d logins for two HEADs and a GET: %q", logins, fs.Commands())
	}
}

// TestFolderRedirect: an FTP folder asked for without its closing slash
// (RETR refused, CWD taken, as vsftpd answers) is redirected to it (301),
// as nginx does; a name that is neither is a 404.
func TestFolderRedirect(t *testing.T) {
	fs := &ftpscript.Server{Files: map[string]string{"pub/dir/x.txt": "x\n"}}
	fs.Handle = func(c *ftpscript.Conn, verb, arg string) bool {
		if verb == "CWD" && arg == "nothing" {
			c.Reply("550 Failed to change directory.")
			return true
		}
		return false
	}
	if err := fs.Start(); err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	s := start(t, gateway.Options{AllowPrivate: true})
	resp, page := get(t, s.URL+"/ftp/"+fs.Addr()+"/pub/dir")
	if resp.StatusCode != 301 || resp.Header.Get("Location") != "/ftp/"+fs.Addr()+"/pub/dir/" {
		t.Errorf("a folder without its slash: %d, Location %q %s", resp.StatusCode, resp.Header.Get("Location"), page)
	}
	resp, page = get(t, s.URL+"/ftp/"+fs.Addr()+"/pub/nothing")
	if resp.StatusCode != 404 {
		t.Errorf("a name that is not there: %d %s", resp.StatusCode, page)
	}
}

// TestSchemeSlip: a scheme mistyped in a page path is refused with the
// scheme meant.
func TestSchemeSlip(t *testing.T) {
	s := start(t, gateway.Options{AllowPrivate: true})
	resp, page := get(t, s.URL+"/?url="+"gohper://127.0.0.1:70/1/")
	if resp.StatusCode == http.StatusFound {
		resp, page = get(t, s.URL+resp.Header.Get("Location"))
	}
	if resp.StatusCode < 400 || !strings.Contains(page, "did you mean gopher:?") {
		t.Errorf("gohper: %d %s", resp.StatusCode, page)
	}
}

// TestFrontPage: with Allow the front page says which hosts it serves,
// not "any URL"; with Home, "/" opens on that URL's page, and the URL
// form is still at "/?url=".
func TestFrontPage(t *testing.T) {
	addr := gopherServer(t, map[string]string{"/": "iwelcome to the hole\t\tx\t1\r\n.\r\n"})
	s := start(t, gateway.Options{AllowPrivate: true, Allow: []string{addr}, Home: "gopher://" + addr + "/1/"})
	resp, _ := get(t, s.URL+"/")
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/gopher/"+addr+"/1/" {
		t.Errorf("/ with Home: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, page := get(t, s.URL+"/?url=")
	if resp.StatusCode != 200 || strings.Contains(page, "Any URL") || !strings.Contains(page, "URLs of "+addr+" only") {
		t.Errorf("the URL form with Allow: %d %s", resp.StatusCode, page)
	}
	s2 := start(t, gateway.Options{AllowPrivate: true})
	if resp, page := get(t, s2.URL+"/"); resp.StatusCode != 200 || !strings.Contains(page, "Any URL of these schemes") {
		t.Errorf("the front page: %d %s", resp.StatusCode, page)
	}
}

// TestBadURLForm: a URL the parser refuses comes back in the form, to be
// mended, with the parser's words above it.
func TestBadURLForm(t *testing.T) {
	s := start(t, gateway.Options{AllowPrivate: true})
	resp, page := get(t, s.URL+"/?url="+neturl.QueryEscape("gopher//127.0.0.1:70/"))
	if resp.StatusCode != 400 || !strings.Contains(page, `name="url"`) || !strings.Contains(page, `value="gopher//127.0.0.1:70/"`) {
		t.Errorf("a bad URL: %d %s", resp.StatusCode, page)
	}
}

// TestGopherPlusDownload: a Gopher+ item's download carries the
// Content-Length its reply states and the Last-Modified of its +ADMIN
// Mod-Date.
func TestGopherPlusDownload(t *testing.T) {
	plus := gopherPlusServer(t)
	s := start(t, gateway.Options{AllowPrivate: true})
	resp, body := get(t, s.URL+"/gopher/"+plus+"/9/f%09%09+?raw=1")
	if resp.StatusCode != 200 || body != "hello" || resp.Header.Get("Content-Length") != "5" || resp.Header.Get("Last-Modified") != "Sat, 21 Nov 2026 10:30:00 GMT" {
		t.Errorf("a Gopher+ download: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	// The menu's link to a Gopher+ item (flagged "+") fetches its default
	// view, whose length the server states: sent with Content-Length.
	_, menu := get(t, s.URL+"/gopher/"+plus+"/1/")
	link := `href="/gopher/` + plus + `/9f?view=default"`
	if !strings.Contains(menu, link) {
		t.Fatalf("no %s in\n%s", link, menu)
	}
	resp, body = get(t, s.URL+"/gopher/"+plus+"/9f?view=default")
	if resp.StatusCode != 200 || body != "hello" || resp.Header.Get("Content-Length") != "5" {
		t.Errorf("the menu's link: %d %q %v", resp.StatusCode, body, resp.Header)
	}
}

// gopherPlusServer answers the attributes ("!") and the data ("+") of
// its one item, f, as a Gopher+ server does.
func gopherPlusServer(t *testing.T) string {
	t.Helper()
	ln, err := testserver.Listen(func(c net.Conn) {
		defer c.Close()
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return
		}
		f := strings.Split(strings.TrimRight(line, "\r\n"), "\t")
		plus := f[len(f)-1]
		switch {
		case len(f) >= 2 && strings.TrimPrefix(f[0], "/") == "f" && strings.HasPrefix(plus, "!"):
			io.WriteString(c, "+-1\r\n+INFO: 9f\tf\thost\t70\t+\r\n+ADMIN:\r\n Admin: A <a@b>\r\n Mod-Date: Sat Nov 21 10:30:00 2026 <20261121103000>\r\n.\r\n")
		case len(f) >= 2 && strings.TrimPrefix(f[0], "/") == "f" && strings.HasPrefix(plus, "+"):
			io.WriteString(c, "+5\r\nhello")
		case len(f) == 1 && f[0] == "f":
			io.WriteString(c, "hello") // plain Gopher: no length
		case strings.TrimPrefix(f[0], "/") == "" && !strings.HasPrefix(plus, "!"):
			host, port, _ := net.SplitHostPort(c.LocalAddr().String())
			io.WriteString(c, "9The file\tf\t"+host+"\t"+port+"\t+\r\n.\r\n")
		default:
			io.WriteString(c, "--1\r\n1 A <a@b>\r\nno such item\r\n.\r\n")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}
