// Package geminid is a Gemini server for tests, on 127.0.0.1: TLS with a
// self-signed certificate of its own (or one given), one request a
// connection, the replies of a map of paths or of a handler that may
// misbehave (a header that never ends, a connection closed without TLS's
// close_notify). It counts the handshakes it makes and resumes.
package geminid

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// NewCert makes a self-signed ECDSA P-256 certificate for 127.0.0.1 and
// localhost, valid until notAfter.
func NewCert(notAfter time.Time) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter, DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// Conn is one client's connection, for a Handler.
type Conn struct {
	*tls.Conn
	Raw net.Conn // the TCP connection under TLS: closing it skips close_notify
}

// Server is a Gemini server. Set its fields before Start.
type Server struct {
	// Pages maps a path to its reply, header and body ("20 text/gemini\r\n...").
	// A path not in it is "51 Not found\r\n".
	Pages map[string]string
	// Handler, when set, answers every request line (without CRLF) instead.
	Handler func(c *Conn, line string)
	// Cert is the server's certificate; zero means a new one, valid a year.
	Cert tls.Certificate
	// MaxVersion caps the TLS version; 0 means TLS 1.3.
	MaxVersion uint16

	ln                     net.Listener
	wg                     sync.WaitGroup
	mu                     sync.Mutex
	requests               []string
	clientCerts            []*x509.Certificate
	Full, Resumed, Refused atomic.Int64
}

// Start listens on 127.0.0.1.
func (s *Server) Start() error {
	if s.Cert.Certificate == nil {
		c, err := NewCert(time.Now().AddDate(1, 0, 0))
		if err != nil {
			return err
		}
		s.Cert = c
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.ln = ln
	cfg := &tls.Config{Certificates: []tls.Certificate{s.Cert}, ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12, MaxVersion: s.MaxVersion}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			raw, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serve(raw, tls.Server(raw, cfg))
			}()
		}
	}()
	return nil
}

// Addr is HOST:PORT.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server.
func (s *Server) Close() error {
	err := s.ln.Close()
	s.wg.Wait()
	return err
}

// Requests returns the request lines read so far.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// ClientCerts returns the certificates clients presented, in order.
func (s *Server) ClientCerts() []*x509.Certificate {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*x509.Certificate(nil), s.clientCerts...)
}

func (s *Server) serve(raw net.Conn, tc *tls.Conn) {
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(10 * time.Second))
	if err := tc.Handshake(); err != nil {
		s.Refused.Add(1)
		return
	}
	cs := tc.ConnectionState()
	if cs.DidResume {
		s.Resumed.Add(1)
	} else {
		s.Full.Add(1)
	}
	line, err := bufio.NewReaderSize(tc, 1100).ReadString('\n')
	if err != nil {
		tc.Write([]byte("59 Bad request\r\n"))
		tc.Close()
		return
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	s.mu.Lock()
	s.requests = append(s.requests, line)
	if len(cs.PeerCertificates) > 0 {
		s.clientCerts = append(s.clientCerts, cs.PeerCertificates[0])
	}
	s.mu.Unlock()
	c := &Conn{Conn: tc, Raw: raw}
	if s.Handler != nil {
		s.Handler(c, line)
		tc.Close()
		return
	}
	reply := "51 Not found\r\n"
	if u, err := url.Parse(line); err == nil {
		p := u.Path
		if p == "" {
			p = "/"
		}
		if r, found := s.Pages[p]; found {
			reply = r
		}
	}
	tc.Write([]byte(reply))
	tc.Close() // close_notify, then the connection
}
