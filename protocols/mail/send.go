package mail

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/smtp"
	"os"
	"strings"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// MaxMessage bounds a message Send sends.
const MaxMessage = 32 << 20

// maxReplies bounds all the server's replies of one conversation
// together: a few hundred bytes in practice. net/smtp would otherwise hold
// an endless reply line or multi-line reply whole.
const maxReplies = 1 << 20

// Sender sends a message to the mailbox a mailto: URL designates through
// an SMTP server (RFC 5321), as lynx does: STARTTLS when the server offers
// it (the certificate verified), AUTH PLAIN when the server offers it and
// Login gives credentials.
type Sender struct {
	// Server is host[:port]; the port is 25 when omitted.
	Server string
	// From is the sender's address; empty means protocols.UserAddress().
	From string
	// TLSConfig, when set, is used for STARTTLS (its ServerName set to
	// the server's host when empty).
	TLSConfig *tls.Config
	// Login returns the credentials for the server's host, if any.
	Login func(host string) (user, password string, ok bool)
	// Dial connects; nil means a net.Dialer.
	Dial protocols.DialFunc
	// ConnectTimeout bounds the connection and the greeting (30 seconds
	// when 0); IdleTimeout every later reply (2 minutes when 0, no bound
	// when negative).
	ConnectTimeout, IdleTimeout time.Duration
}

// Send sends body, streamed, as a text/plain message with the subject to
// the address of u (a mailto: URL), and returns the bytes of body sent
// and the server's address. Nothing is sent when body passes
// MaxMessage: the connection is dropped before the message's end.
func (s *Sender) Send(ctx context.Context, u *url.URL, subject string, body io.Reader) (int64, string, error) {
	to, err := u.Mailto()
	if err != nil {
		return 0, "", fmt.Errorf("%w: %w", protocols.ErrBadURL, err)
	}
	if s.Server == "" {
		return 0, "", fmt.Errorf("%w: no SMTP server to send through", protocols.ErrNotRetrievable)
	}
	if err := url.CheckArg("subject", subject); err != nil {
		return 0, "", fmt.Errorf("%w: %w", protocols.ErrBadURL, err)
	}
	addr := s.Server
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(addr, "25")
	}
	host, _, _ := net.SplitHostPort(addr)
	from := s.From
	if from == "" {
		from = protocols.UserAddress()
	}
	if err := url.CheckArg("sender", from); err != nil {
		return 0, addr, fmt.Errorf("%w: %w", protocols.ErrBadURL, err)
	}
	connect, idle := s.ConnectTimeout, s.IdleTimeout
	if connect <= 0 {
		connect = 30 * time.Second
	}
	switch {
	case idle == 0:
		idle = 2 * time.Minute
	case idle < 0:
		idle = 0
	}
	dial := s.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: connect}
		dial = d.DialContext
	}
	dctx, cancel := context.WithTimeout(ctx, connect)
	conn, err := dial(dctx, "tcp", addr)
	cancel()
	if err != nil {
		return 0, addr, fmt.Errorf("%w: smtp: %w", protocols.ErrNetwork, err)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	// The greeting is part of connecting; after it, every reply has the
	// idle time-out.
	replies := &replyConn{Conn: conn, left: maxReplies, wait: idle}
	conn.SetReadDeadline(time.Now().Add(connect))
	sc, err := smtp.NewClient(replies, host)
	if err != nil {
		conn.Close()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, addr, fmt.Errorf("%w within %v (the connect time-out)", protocols.ErrNoGreeting, connect)
		}
		return 0, addr, fmt.Errorf("%w: smtp: %w", protocols.ErrProtocol, err)
	}
	replies.greeted = true
	defer sc.Close()
	if ok, _ := sc.Extension("STARTTLS"); ok {
		cfg := &tls.Config{ServerName: host}
		if s.TLSConfig != nil {
			cfg = s.TLSConfig.Clone()
			if cfg.ServerName == "" {
				cfg.ServerName = host
			}
		}
		if err := sc.StartTLS(cfg); err != nil {
			return 0, addr, fmt.Errorf("%w: smtp STARTTLS: %w", protocols.ErrNetwork, err)
		}
	}
	if ok, _ := sc.Extension("AUTH"); ok && s.Login != nil {
		if user, pass, ok := s.Login(host); ok {
			if err := sc.Auth(smtp.PlainAuth("", user, pass, host)); err != nil {
				return 0, addr, fmt.Errorf("%w: smtp AUTH: %w", protocols.ErrAuth, err)
			}
		}
	}
	if err := sc.Mail(from); err != nil {
		return 0, addr, fmt.Errorf("%w: smtp MAIL FROM: %w", protocols.ErrProtocol, err)
	}
	if err := sc.Rcpt(to); err != nil {
		return 0, addr, fmt.Errorf("%w: smtp RCPT TO:<%s>: %w", protocols.ErrNotFound, to, err)
	}
	w, err := sc.Data()
	if err != nil {
		return 0, addr, fmt.Errorf("%w: smtp DATA: %w", protocols.ErrProtocol, err)
	}
	var id [12]byte
	rand.Read(id[:])
	domain := from[strings.LastIndexByte(from, '@')+1:]
	if subject == "" {
		subject = "(no subject)"
	}
	fmt.Fprintf(w, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <%x@%s>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\nX-Mailer: deref\r\n\r\n",
		from, to, mime.QEncoding.Encode("utf-8", subject), time.Now().Format(time.RFC1123Z), id, domain)
	n, err := io.Copy(w, io.LimitReader(body, MaxMessage+1))
	switch {
	case err == nil && n > MaxMessage:
		conn.Close() // the message never ends: the server discards it
		return n, addr, fmt.Errorf("the message is larger than %d bytes: nothing was sent", MaxMessage)
	case err != nil:
		conn.Close()
		return n, addr, fmt.Errorf("reading the message: %w: nothing was sent", err)
	}
	if err := w.Close(); err != nil {
		return n, addr, fmt.Errorf("%w: smtp: the server refused the message: %w", protocols.ErrProtocol, err)
	}
	sc.Quit()
	return n, addr, nil
}

// replyConn counts what the server sends and fails the connection past
// the bound; after the greeting every read has the idle time-out.
type replyConn struct {
	net.Conn
	left    int64
	wait    time.Duration
	greeted bool
}

func (r *replyConn) Read(p []byte) (int, error) {
	switch {
	case r.greeted && r.wait > 0:
		r.Conn.SetReadDeadline(time.Now().Add(r.wait))
	case r.greeted:
		r.Conn.SetReadDeadline(time.Time{})
	}
	if r.left <= 0 {
		return 0, fmt.Errorf("%w: the SMTP server's replies passed %d bytes", protocols.ErrProtocol, maxReplies)
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.Conn.Read(p)
	r.left -= int64(n)
	if r.greeted && errors.Is(err, os.ErrDeadlineExceeded) {
		err = fmt.Errorf("%w: nothing from the SMTP server for %v", protocols.ErrTimeout, r.wait)
	}
	return n, err
}
