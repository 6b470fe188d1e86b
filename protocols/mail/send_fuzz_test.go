package mail_test

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/protocols/mail"
	"github.com/urlderef/deref/url"
)

// FuzzSMTPReplies plays any bytes as an SMTP server's side of a mailto:
// conversation: sending must neither panic nor hang, and ends in an error
// unless the server accepted the message.
func FuzzSMTPReplies(f *testing.F) {
	f.Add("220 harness.test ESMTP\r\n250-harness.test\r\n250 8BITMIME\r\n250 OK\r\n250 Accepted\r\n354 Enter message\r\n250 OK id=1\r\n221 bye\r\n")
	f.Add("220 ok\r\n250-x\r\n250-AUTH PLAIN\r\n250 STARTTLS\r\n454 TLS not available\r\n")
	f.Add("220-multi\r\n220-line\r\n220 greeting\r\n500 what\r\n")
	f.Add("554 go away\r\n")
	f.Fuzz(func(t *testing.T, replies string) {
		ln, err := testserver.Listen(func(c net.Conn) {
			defer c.Close()
			c.SetDeadline(time.Now().Add(3 * time.Second))
			go io.Copy(io.Discard, c)
			io.WriteString(c, replies)
		})
		if err != nil {
			t.Skip(err)
		}
		defer ln.Close()
		sender := &mail.Sender{Server: ln.Addr().String()}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _, err = sender.Send(ctx, url.MustParse("mailto:joe@harness.test"), "", strings.NewReader("hello\n"))
		if err == nil && !strings.Contains(replies, "354") {
			t.Fatalf("sent without a 354 reply: %q", replies)
		}
	})
}
