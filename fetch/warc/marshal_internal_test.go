package warc

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"
)

// marshal writes what gowarc's own Marshaler writes, byte for byte, for
// records of every kind the archive makes, a revisit record and one
// with no block included.
func TestMarshalAsGowarc(t *testing.T) {
	date := time.Date(2026, 11, 26, 17, 0, 0, 0, time.UTC)
	cases := []struct {
		typ         gowarc.RecordType
		contentType string
		block       string
	}{
		{gowarc.Resource, "text/plain", "an item\r\nof two lines\n"},
		{gowarc.Metadata, "text/x-ftp-control-conversation", "> RETR f\r\n226 Transfer complete.\r\n"},
		{gowarc.Request, "application/http;msgtype=request", "GET /p HTTP/1.1\r\nHost: h\r\n\r\n"},
		{gowarc.Response, "application/http;msgtype=response", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\nhello"},
		{gowarc.Resource, "application/octet-stream", ""},
	}
	for _, c := range cases {
		b := gowarc.NewRecordBuilder(c.typ, gowarc.WithRecordIdFunc(newRecordID), gowarc.WithNoValidation())
		io.WriteString(b, c.block)
		b.AddWarcHeader(fTargetURI, "http://h/p")
		b.AddWarcHeaderTime(fDate, date)
		b.AddWarcHeader(fContentType, c.contentType)
		b.AddWarcHeader(fProtocol, "gopher")
		b.AddWarcHeaderInt64(fContentLength, int64(len(c.block)))
		b.AddWarcHeader(fPayloadDigest, "sha1:UZ7NPD6N6M2Z2WVZJZ4PQ7MQCZO3TM4B")
		rec, _, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		recs := []gowarc.WarcRecord{rec}
		if c.typ == gowarc.Response {
			rv, err := rec.ToRevisitRecord(&gowarc.RevisitRef{Profile: gowarc.ProfileIdenticalPayloadDigestV1_1, TargetRecordId: "<urn:uuid:1>", TargetUri: "http://h/q", TargetDate: "2026-11-25T00:00:00Z"})
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, rv)
		}
		for _, r := range recs {
			var want, got bytes.Buffer
			if _, _, err := gowarc.NewMarshaler().Marshal(&want, r, 0); err != nil {
				t.Fatal(err)
			}
			if err := marshal(&got, r); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("%s record:\n got %q\nwant %q", r.Type(), got.String(), want.String())
			}
			if !strings.HasSuffix(got.String(), c.block+"\r\n\r\n") && r.Type() != gowarc.Revisit {
				t.Errorf("%s record does not end with its block: %q", r.Type(), got.String())
			}
		}
		rec.Close()
	}
}
