package main

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/url"
)

// sendMail sends standard input to the mailto: URL's address through the
// SMTP server of --smtp (Client.SendMail). Nothing is sent without
// --smtp.
func sendMail(ctx context.Context, u *url.URL, o *options, c *fetch.Client, stderr io.Writer) error {
	to, err := u.Mailto()
	if err != nil {
		return fmt.Errorf("%w: %w", fetch.ErrBadURL, err)
	}
	if o.smtp == "" {
		return fmt.Errorf("%w: a mailto: URL designates a mailbox; to send it a message on standard input, name an SMTP server with --smtp host[:port]", fetch.ErrNotRetrievable)
	}
	n, err := c.SendMail(ctx, u, o.stdin, fetch.MailOptions{Server: o.smtp, Subject: o.subject})
	if err != nil {
		return err
	}
	addr := o.smtp
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(addr, "25")
	}
	fmt.Fprintf(stderr, "deref: sent %d bytes to %s through %s\n", n, to, addr)
	return nil
}
