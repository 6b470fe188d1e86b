package main

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
	"os/user"
	"strings"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/netrc"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// maxMessage bounds a message read from standard input.
const maxMessage = 32 << 20

// sendMail sends standard input to the mailto: URL's address through the
// SMTP server of --smtp, as lynx does: STARTTLS when the server offers it
// (certificate verified), AUTH with the netrc entry of the server when
// there is one. Nothing is sent without --smtp.
func sendMail(ctx context.Context, u *url.URL, o *options, c *fetch.Client, stderr io.Writer) error {
	to, err := u.Mailto()
	if err != nil {
		return fmt.Errorf("%w: %w", fetch.ErrBadURL, err)
	}
	if o.smtp == "" {
		return fmt.Errorf("%w: a mailto: URL designates a mailbox; to send it a message on standard input, name an SMTP server with --smtp host[:port]", fetch.ErrNotRetrievable)
	}
	if err := url.CheckArg("subject", o.subject); err != nil {
		return fmt.Errorf("%w: %w", fetch.ErrBadURL, err)
	}
	addr := o.smtp
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(addr, "25")
	}
	host, _, _ := net.SplitHostPort(addr)
	from := os.Getenv("EMAIL")
	if from == "" {
		name := "deref"
		if cu, err := user.Current(); err == nil {
			name = cu.Username
		}
		hn, _ := os.Hostname()
		from = name + "@" + hn
	}
	if err := url.CheckArg("sender", from); err != nil {
		return fmt.Errorf("%w: %w", fetch.ErrBadURL, err)
	}
	body, err := io.ReadAll(io.LimitReader(o.stdin, maxMessage+1))
	if err != nil {
		return err
	}
	if len(body) > maxMessage {
		return fmt.Errorf("the message is larger than %d bytes", maxMessage)
	}
	connect, idle := seconds(o.connectTimeout), seconds(o.idleTimeout)
	if connect <= 0 {
		connect = 30 * time.Second
	}
	if idle <= 0 {
		idle = 120 * time.Second
	}
	d := net.Dialer{Timeout: connect}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("%w: smtp: %w", fetch.ErrNetwork, err)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	// The greeting is part of connecting; after it, every reply has the
	// idle time-out.
	replies := &smtpReplies{Conn: conn, left: maxSMTPReplies, wait: idle}
	conn.SetReadDeadline(time.Now().Add(connect))
	sc, err := smtp.NewClient(replies, host)
	if err != nil {
		conn.Close()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("%w within %v (the connect time-out)", protocols.ErrNoGreeting, connect)
		}
		return fmt.Errorf("%w: smtp: %w", fetch.ErrProtocol, err)
	}
	replies.greeted = true
	defer sc.Close()
	if ok, _ := sc.Extension("STARTTLS"); ok {
		cfg := &tls.Config{ServerName: host}
		if c.TLSConfig != nil {
			cfg = c.TLSConfig.Clone()
			if cfg.ServerName == "" {
				cfg.ServerName = host
			}
		}
		if err := sc.StartTLS(cfg); err != nil {
			return fmt.Errorf("%w: smtp STARTTLS: %w", fetch.ErrNetwork, err)
		}
	}
	if ok, _ := sc.Extension("AUTH"); ok && c.NetrcFile != "" {
		if entries, err := netrc.Load(c.NetrcFile); err == nil {
			if e := netrc.Find(entries, host, ""); e != nil && e.Login != "" {
				if err := sc.Auth(smtp.PlainAuth("", e.Login, e.Password, host)); err != nil {
					return fmt.Errorf("%w: smtp AUTH: %w", fetch.ErrAuth, err)
				}
			}
		}
	}
	if err := sc.Mail(from); err != nil {
		return fmt.Errorf("%w: smtp MAIL FROM: %w", fetch.ErrProtocol, err)
	}
	if err := sc.Rcpt(to); err != nil {
		return fmt.Errorf("%w: smtp RCPT TO:<%s>: %w", fetch.ErrNotFound, to, err)
	}
	w, err := sc.Data()
	if err != nil {
		return fmt.Errorf("%w: smtp DATA: %w", fetch.ErrProtocol, err)
	}
	var id [12]byte
	rand.Read(id[:])
	domain := from[strings.LastIndexByte(from, '@')+1:]
	subject := o.subject
	if subject == "" {
		subject = "(no subject)"
	}
	fmt.Fprintf(w, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <%x@%s>\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\nX-Mailer: deref\r\n\r\n",
		from, to, mime.QEncoding.Encode("utf-8", subject), time.Now().Format(time.RFC1123Z), id, domain)
	if _, err := w.Write(body); err != nil {
		return fmt.Errorf("%w: smtp: %w", fetch.ErrNetwork, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("%w: smtp: the server refused the message: %w", fetch.ErrProtocol, err)
	}
	sc.Quit()
	fmt.Fprintf(stderr, "deref: sent %d bytes to %s through %s\n", len(body), to, addr)
	return nil
}

// maxSMTPReplies bounds all the server's replies of one conversation
// together: a few hundred bytes in practice. net/smtp would otherwise hold
// an endless reply line or multi-line reply whole.
const maxSMTPReplies = 1 << 20

// smtpReplies counts what the server sends, and fails the connection past
// the bound.
type smtpReplies struct {
	net.Conn
	left    int64
	wait    time.Duration // the idle time-out, for every read after the greeting
	greeted bool
}

func (r *smtpReplies) Read(p []byte) (int, error) {
	if r.greeted {
		r.Conn.SetReadDeadline(time.Now().Add(r.wait))
	}
	if r.left <= 0 {
		return 0, fmt.Errorf("%w: the SMTP server's replies passed %d bytes", fetch.ErrProtocol, maxSMTPReplies)
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.Conn.Read(p)
	r.left -= int64(n)
	if r.greeted && errors.Is(err, os.ErrDeadlineExceeded) {
		err = fmt.Errorf("%w: nothing from the SMTP server for %v", fetch.ErrTimeout, r.wait)
	}
	return n, err
}
