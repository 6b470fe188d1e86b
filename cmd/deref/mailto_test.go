package main

import (
	"bufio"
	"net"
	"strings"
	"testing"
)

// smtpSink is a minimal SMTP receiver that keeps the commands and the
// message it was given.
func smtpSink(t *testing.T) (string, chan string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		var log strings.Builder
		c.Write([]byte("220 sink ready\r\n"))
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				got <- log.String()
				return
			}
			log.WriteString(line)
			switch verb := strings.ToUpper(strings.Fields(line + " x")[0]); verb {
			case "EHLO":
				c.Write([]byte("250-sink\r\n250 8BITMIME\r\n"))
			case "DATA":
				c.Write([]byte("354 go on\r\n"))
				for {
					l, err := r.ReadString('\n')
					if err != nil || l == ".\r\n" {
						break
					}
					log.WriteString(l)
				}
				c.Write([]byte("250 queued\r\n"))
			case "QUIT":
				c.Write([]byte("221 bye\r\n"))
				got <- log.String()
				return
			default:
				c.Write([]byte("250 ok\r\n"))
			}
		}
	}()
	return ln.Addr().String(), got
}

func TestMailto(t *testing.T) {
	if r := runDeref(t, "hi\n", "mailto:bob@example.org"); r.code == 0 || !strings.Contains(r.stderr, "--smtp") {
		t.Errorf("without --smtp: %d %q", r.code, r.stderr)
	}
	addr, got := smtpSink(t)
	t.Setenv("EMAIL", "alice@example.org")
	r := runDeref(t, "Hello Bob,\n.a dotted line\n", "--smtp", addr, "--subject", "Grüße", "mailto:bob%40example.org")
	if r.code != 0 {
		t.Fatalf("%d %q", r.code, r.stderr)
	}
	log := <-got
	for _, want := range []string{"MAIL FROM:<alice@example.org>", "RCPT TO:<bob@example.org>", "To: bob@example.org\r\n", "Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=\r\n", "\r\n\r\nHello Bob,\r\n..a dotted line\r\n"} {
		if !strings.Contains(log, want) {
			t.Errorf("missing %q in\n%s", want, log)
		}
	}
	if r := runDeref(t, "x", "--smtp", addr, "mailto:bob%0D%0ARCPT@example.org"); r.code != 2 {
		t.Errorf("CR LF in the address: %d %q", r.code, r.stderr)
	}
}
