package ftp_test

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"

	ftpserver "github.com/fclairamb/ftpserverlib"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
)

func TestExplicitTLS(t *testing.T) {
	addr, _ := startServer(t, func(s *ftpserver.Settings) { s.TLSRequired = ftpserver.ClearOrEncrypted })
	c := newTraced()
	c.FTP.ExplicitTLS = true
	// Verified by default: the test certificate is not trusted yet.
	if _, err := c.Get(context.Background(), "ftp://"+addr+"/hello.txt"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted certificate: %v", err)
	}
	c.TLSConfig = &tls.Config{RootCAs: testPool}
	body, _ := c.get(t, "ftp://alice:secret@"+addr+"/pub/big.bin;type=i")
	if len(body) != 3<<20 {
		t.Errorf("over TLS: %d bytes", len(body))
	}
	trace := c.all.String()
	if !strings.Contains(trace, "AUTH TLS") || !strings.Contains(trace, "TLS from here on") || strings.Contains(trace, "secret") || strings.Contains(trace, "USER alice") {
		t.Errorf("trace:\n%s", trace)
	}
}

func TestImplicitTLS(t *testing.T) {
	addr, _ := startServer(t, func(s *ftpserver.Settings) { s.TLSRequired = ftpserver.ImplicitEncryption })
	c := newTraced()
	c.TLSConfig = &tls.Config{RootCAs: testPool}
	c.AllowPorts = nil
	for range 2 {
		body, _ := c.get(t, "ftps://"+addr+"/hello.txt")
		if body != "hello\nworld\n" {
			t.Errorf("ftps body %q", body)
		}
	}
	// The second transfer, on the kept connection, went out as MDTM and
	// RETR with its EPSV, inside TLS; its data connection too was TLS.
	if trace := c.all.String(); !strings.Contains(trace, "MDTM hello.txt\nEPSV\nRETR hello.txt\n213 ") {
		t.Errorf("no pipelined RETR over implicit TLS:\n%s", trace)
	}
}

// TestTLSRefused checks that a required TLS the server refuses fails the
// URL before any login, even from a server that greets with 230-style
// friendliness.
func TestTLSRefused(t *testing.T) {
	s := scriptServer(t, map[string]string{"x": "x"}, func(c *ftpscript.Conn, verb, arg string) bool {
		if verb == "AUTH" {
			c.Reply("502 AUTH not implemented.")
			return true
		}
		return false
	})
	c := newTraced()
	c.FTP.ExplicitTLS = true
	_, err := c.Get(context.Background(), "ftp://joe:pw@"+s.Addr()+"/x")
	if !errors.Is(err, fetch.ErrPermission) || !strings.Contains(err.Error(), "AUTH TLS") {
		t.Errorf("refused TLS: %v", err)
	}
	for _, cmd := range s.Commands() {
		if strings.HasPrefix(cmd, "USER") || strings.HasPrefix(cmd, "PASS") {
			t.Errorf("credentials sent in the clear after TLS was refused: %q", s.Commands())
		}
	}
}
