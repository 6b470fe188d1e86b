package warc_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"io"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/url"
)

// An HTTP retrieval is a response record (the head as received, the body)
// and a request record (the head as sent, Authorization hidden), linked;
// a chunked body is recorded whole with its length in the head; the
// payload digest is the body's. Large bodies (streamed into their record
// when their length is known, spooled when chunked) are recorded as
// small ones are, and one not read to its end not at all.
func TestRecordHTTP(t *testing.T) {
	large := strings.Repeat("a line of a large page\n", 30000) // past the memory a record holds
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Content-Type", "text/plain")
		switch r.URL.Path {
		case "/chunked":
			io.WriteString(w, "first part, ")
			w.(nethttp.Flusher).Flush()
			io.WriteString(w, "second part\n")
		case "/large":
			w.Header().Set("Content-Length", strconv.Itoa(len(large)))
			io.WriteString(w, large)
		case "/medium1", "/medium2", "/medium3": // compressed beside the next ones' building
			io.WriteString(w, strings.Repeat(r.URL.Path+" is a page of 100 KB\n", 4000))
		case "/largechunked": // another payload: not a revisit of /large's
			upper := strings.ToUpper(large)
			for i := 0; i < len(upper); i += 100000 {
				io.WriteString(w, upper[i:min(i+100000, len(upper))])
				w.(nethttp.Flusher).Flush()
			}
		default:
			io.WriteString(w, "fixed length body\n")
		}
	}))
	defer s.Close()
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "http"), warc.Options{Software: "deref/test"})
	if err != nil {
		t.Fatal(err)
	}
	c, rec := recordingClient(w)
	base := "http://alice:s3cret@" + strings.TrimPrefix(s.URL, "http://")
	bodies := map[string]string{}
	for _, p := range []string{"/fixed", "/chunked", "/medium1", "/medium2", "/medium3", "/large", "/largechunked"} {
		resp, err := c.Get(context.Background(), base+p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		if err := resp.Body.Close(); err != nil {
			t.Fatal(err)
		}
		bodies[p] = string(b)
	}
	for _, p := range []string{"/large", "/largechunked"} {
		resp, err := c.Get(context.Background(), base+p+"?partly")
		if err != nil {
			t.Fatal(err)
		}
		io.ReadFull(resp.Body, make([]byte, 300000))
		resp.Body.Close()
	}
	if err := w.Close(); err != nil || rec.Err() != nil || rec.Records() != 14 {
		t.Fatalf("%v %v, %d records", err, rec.Err(), rec.Records())
	}
	recs := readAll(t, filepath.Join(dir, "http.warc.gz"))
	if len(recs) != 15 {
		t.Fatalf("%d records", len(recs))
	}
	ids := map[string]string{}
	for _, r := range recs[1:] {
		h := r.WarcHeader()
		uri := h.Get(gowarc.WarcTargetURI)
		path := uri[strings.LastIndexByte(uri, '/'):]
		block := blockString(t, r)
		if strings.Contains(block+uri, "s3cret") {
			t.Errorf("%s: the password is in the record", uri)
		}
		if h.Get(gowarc.WarcIPAddress) != "127.0.0.1" {
			t.Errorf("%s: WARC-IP-Address %q", uri, h.Get(gowarc.WarcIPAddress))
		}
		switch r.Type() {
		case gowarc.Response:
			ids[h.Get(gowarc.WarcRecordID)] = uri
			head, body, _ := strings.Cut(block, "\r\n\r\n")
			if body != bodies[path] || !strings.HasPrefix(head, "HTTP/1.1 200 OK\r\n") {
				t.Errorf("%s: block %q", uri, block)
			}
			if strings.HasSuffix(path, "chunked") && (strings.Contains(strings.ToLower(head), "transfer-encoding") || !strings.Contains(head+"\r\n", "Content-Length: "+strconv.Itoa(len(bodies[path]))+"\r\n")) {
				t.Errorf("chunked head %q", head)
			}
			sum := sha1.Sum([]byte(bodies[path]))
			if got := h.Get(gowarc.WarcPayloadDigest); got != "sha1:"+base32.StdEncoding.EncodeToString(sum[:]) {
				t.Errorf("%s: payload digest %s", uri, got)
			}
		case gowarc.Request:
			if ids[h.Get(gowarc.WarcConcurrentTo)] != uri {
				t.Errorf("%s: request goes with %s", uri, h.Get(gowarc.WarcConcurrentTo))
			}
			if !strings.HasPrefix(block, "GET "+path+" HTTP/1.1\r\n") || !strings.Contains(block, "Authorization: Basic xxxxx\r\n") {
				t.Errorf("request block %q", block)
			}
		default:
			t.Errorf("record type %v", r.Type())
		}
	}
}

// A body not read to its end is not archived: no record claims a whole
// object it does not hold.
func TestRecordOnlyWhole(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "big.bin")
	os.WriteFile(src, bytes.Repeat([]byte("x"), 1<<20), 0o644)
	w, err := warc.Create(filepath.Join(dir, "out"), warc.Options{Software: "deref/test"})
	if err != nil {
		t.Fatal(err)
	}
	rec := &warc.Recorder{W: w}
	c := fetch.NewClient()
	c.Recorder = rec
	u := "file://" + filepath.ToSlash(src)
	resp, err := c.Get(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadFull(resp.Body, make([]byte, 10))
	resp.Body.Close()
	resp, err = c.Get(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err := w.Close(); err != nil || rec.Err() != nil {
		t.Fatal(err, rec.Err())
	}
	recs := readAll(t, filepath.Join(dir, "out.warc.gz"))
	if len(recs) != 2 || recs[1].WarcHeader().Get(gowarc.ContentLength) != "1048576" {
		t.Errorf("%d records; the second %v", len(recs), recs[len(recs)-1].WarcHeader())
	}
}

// A redirect and a 404 are response records as they came, head and body,
// each with its request, as wget archives them; the page redirected to
// is one too.
func TestRecordRedirectAndError(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		switch r.URL.Path {
		case "/old":
			nethttp.Redirect(w, r, "/new", nethttp.StatusMovedPermanently)
		case "/new":
			io.WriteString(w, "the new page\n")
		default:
			nethttp.Error(w, "no such page", nethttp.StatusNotFound)
		}
	}))
	defer s.Close()
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "r"), warc.Options{CDX: true})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := recordingClient(w)
	resp, err := c.Get(context.Background(), s.URL+"/old")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if _, err := c.Get(context.Background(), s.URL+"/gone"); !errors.Is(err, fetch.ErrNotFound) {
		t.Fatalf("a 404: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	requests := 0
	for _, r := range readAll(t, filepath.Join(dir, "r.warc.gz"))[1:] {
		switch r.Type() {
		case gowarc.Response:
			got[r.WarcHeader().Get(gowarc.WarcTargetURI)] = blockString(t, r)
		case gowarc.Request:
			requests++
		}
	}
	if old := got[s.URL+"/old"]; !strings.HasPrefix(old, "HTTP/1.1 301 Moved Permanently\r\n") || !strings.Contains(old, "Location: /new\r\n") || !strings.HasSuffix(old, "Moved Permanently</a>.\n\n") {
		t.Errorf("the redirect: %q", old)
	}
	if gone := got[s.URL+"/gone"]; !strings.HasPrefix(gone, "HTTP/1.1 404 Not Found\r\n") || !strings.HasSuffix(gone, "\r\n\r\nno such page\n") {
		t.Errorf("the 404: %q", gone)
	}
	if !strings.HasSuffix(got[s.URL+"/new"], "\r\n\r\nthe new page\n") || requests != 3 {
		t.Errorf("the page: %q; %d requests", got[s.URL+"/new"], requests)
	}
	cdx, _ := os.ReadFile(filepath.Join(dir, "r.cdxj"))
	if !strings.Contains(string(cdx), `"status":"301"`) || !strings.Contains(string(cdx), `"status":"404"`) {
		t.Errorf("index:\n%s", cdx)
	}
}

// An exchange through a proxy is archived too: the request as sent to
// the proxy (the absolute URL, Proxy-Authorization hidden) and the
// response with its body.
func TestRecordThroughProxy(t *testing.T) {
	proxy := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if !r.URL.IsAbs() {
			nethttp.Error(w, "not a proxy request", 400)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "proxied "+r.URL.String()+"\n")
	}))
	defer proxy.Close()
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "p"), warc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := fetch.NewClient()
	c.NetrcFile = ""
	pu, _ := url.Parse("http://bob:pr0xy@" + strings.TrimPrefix(proxy.URL, "http://"))
	c.Proxy = func(*url.URL) (*url.URL, error) { return pu, nil }
	c.Recorder = &warc.Recorder{W: w}
	resp, err := c.Get(context.Background(), "http://www.example.invalid/page")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var request, response string
	for _, r := range readAll(t, filepath.Join(dir, "p.warc.gz"))[1:] {
		switch r.Type() {
		case gowarc.Request:
			request = blockString(t, r)
		case gowarc.Response:
			response = blockString(t, r)
		}
	}
	if !strings.HasPrefix(request, "GET http://www.example.invalid/page HTTP/1.1\r\n") || strings.Contains(request, "pr0xy") || strings.Contains(request, "Ym9iOnByMHh5") {
		t.Errorf("request record %q", request)
	}
	if !strings.HasPrefix(response, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(response, "\r\n\r\nproxied http://www.example.invalid/page\n") {
		t.Errorf("response record %q", response)
	}
}

// A Gopher+ item asked for with "+" and then its attribute block with
// "!": the attribute block's metadata record goes with the item's
// resource record, as it does when the item was asked for plainly.
func TestRecordGopherPlusAttributes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			switch strings.TrimRight(line, "\r\n") {
			case "/doc.txt\t+":
				io.WriteString(c, "+-2\r\nthe document\r\n")
			case "/doc.txt\t!":
				io.WriteString(c, "+-2\r\n+INFO: 0Doc\t/doc.txt\t127.0.0.1\t70\t+\r\n+ADMIN:\r\n Admin: Someone <a@b>\r\n")
			}
			c.Close()
		}
	}()
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "plus"), warc.Options{Software: "deref/test"})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := recordingClient(w)
	item := "gopher://" + ln.Addr().String() + "/0/doc.txt"
	for _, u := range []string{item + "%09%09+", item + "%09%09!"} {
		resp, err := c.Get(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		if err := resp.Body.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var itemID string
	var meta gowarc.WarcRecord
	for _, r := range readAll(t, filepath.Join(dir, "plus.warc.gz")) {
		switch r.Type() {
		case gowarc.Resource:
			itemID = r.WarcHeader().Get(gowarc.WarcRecordID)
		case gowarc.Metadata:
			meta = r
		}
	}
	if meta == nil || itemID == "" {
		t.Fatalf("item record %q, attribute record %v", itemID, meta)
	}
	h := meta.WarcHeader()
	if h.Get(gowarc.WarcTargetURI) != item || h.Get(gowarc.WarcConcurrentTo) != itemID || h.Get("WARC-Protocol") != "gopher+" {
		t.Errorf("attribute record:\n%s(item %s)", h, itemID)
	}
}

// recordingClient is a client that reads no netrc, goes through no proxy
// and records its retrievals into w.
func recordingClient(w *warc.Writer) (*fetch.Client, *warc.Recorder) {
	rec := &warc.Recorder{W: w}
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	c.Recorder = rec
	return c, rec
}

// A part of an object is recorded only where the exchange says it is
// one: a file: or FTP resource record of a resumed or ranged retrieval
// would claim the part was the object, and is not written; an HTTP 206
// response is recorded as it came.
func TestRecordNoParts(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "big.bin")
	body := bytes.Repeat([]byte("0123456789"), 10000)
	os.WriteFile(src, body, 0o644)
	srv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		nethttp.ServeContent(w, r, "big.bin", time.Time{}, bytes.NewReader(body))
	}))
	defer srv.Close()
	w, err := warc.Create(filepath.Join(dir, "out"), warc.Options{Software: "deref/test"})
	if err != nil {
		t.Fatal(err)
	}
	c, rec := recordingClient(w)
	fileURL := "file://" + filepath.ToSlash(src)
	for _, tc := range []struct {
		u string
		o fetch.FetchOptions
	}{
		{fileURL, fetch.FetchOptions{Offset: 5000}},
		{fileURL, fetch.FetchOptions{Length: 100}},
		{fileURL, fetch.FetchOptions{}},
		{srv.URL + "/big.bin", fetch.FetchOptions{Offset: 5000}},
	} {
		resp, err := c.FetchWith(context.Background(), url.MustParse(tc.u), tc.o)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if err := w.Close(); err != nil || rec.Err() != nil {
		t.Fatal(err, rec.Err())
	}
	recs, blocks := readRecords(t, filepath.Join(dir, "out.warc.gz"), true)
	var got []string
	for i, r := range recs[1:] {
		got = append(got, r.Type().String()+" "+strconv.Itoa(len(blocks[i+1])))
	}
	// The whole file; the 206 response (its head and the 95,000 bytes
	// after the offset) and its request.
	if len(got) != 3 || got[0] != "resource 100000" || !strings.HasPrefix(got[1], "response ") || !strings.HasPrefix(blocks[2], "HTTP/1.1 206 ") ||
		!strings.HasSuffix(blocks[2], string(body[5000:])) || !strings.HasPrefix(got[2], "request ") {
		t.Errorf("records %q", got)
	}
}
