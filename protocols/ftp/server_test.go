package ftp_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ftpserver "github.com/fclairamb/ftpserverlib"
	"github.com/spf13/afero"
)

// driver serves a folder to anonymous users and to alice/secret through
// github.com/fclairamb/ftpserverlib, an independent FTP server.
type driver struct {
	root     string
	settings *ftpserver.Settings
	conns    atomic.Int32
	mu       sync.Mutex
	users    []string
	cert     *tls.Certificate
}

func (d *driver) GetSettings() (*ftpserver.Settings, error) { return d.settings, nil }

func (d *driver) ClientConnected(cc ftpserver.ClientContext) (string, error) {
	d.conns.Add(1)
	return "deref test server ready", nil
}

func (d *driver) ClientDisconnected(cc ftpserver.ClientContext) {}

func (d *driver) AuthUser(cc ftpserver.ClientContext, user, pass string) (ftpserver.ClientDriver, error) {
	d.mu.Lock()
	d.users = append(d.users, user+":"+pass)
	d.mu.Unlock()
	switch {
	case user == "anonymous":
		return afero.NewBasePathFs(afero.NewOsFs(), d.root), nil
	case user == "alice" && pass == "secret":
		return afero.NewBasePathFs(afero.NewOsFs(), d.root), nil
	}
	return nil, errors.New("bad login")
}

func (d *driver) GetTLSConfig() (*tls.Config, error) {
	if d.cert == nil {
		return nil, errors.New("no TLS")
	}
	return &tls.Config{Certificates: []tls.Certificate{*d.cert}}, nil
}

// testCert is a self-signed certificate for 127.0.0.1, made at start.
var testCert, testPool = makeCert()

func makeCert() (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "deref test"},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

var fileTime = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

// tree is the content every test server holds.
var tree = map[string]string{
	"hello.txt":               "hello\nworld\n",
	"pub/README.txt":          "the pub folder\n",
	"pub/data.bin":            "\x00\x01\x02\r\n\x03binary\r\n",
	"pub/nested/deep.txt":     "deep\n",
	"pub/with space/a b.txt":  "spaced\n",
	"pub/semi;colon.txt":      "semicolon\n",
	"pub/slash%2Fname.txt":    "percent\n",
	"pub/big.bin":             "",
	"pub/nested/deeper/x.bin": "x",
}

// startServer serves a fresh copy of tree and returns its host:port.
func startServer(t *testing.T, tweak func(*ftpserver.Settings)) (string, *driver) {
	t.Helper()
	root := t.TempDir()
	for name, content := range tree {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
		os.Chtimes(p, fileTime, fileTime)
	}
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	os.WriteFile(filepath.Join(root, "pub/big.bin"), big, 0o644)
	d := &driver{root: root, settings: &ftpserver.Settings{ListenAddr: "127.0.0.1:0", DefaultTransferType: ftpserver.TransferTypeBinary}}
	if tweak != nil {
		tweak(d.settings)
	}
	if d.settings.TLSRequired != ftpserver.ClearOrEncrypted || tweak != nil {
		d.cert = &testCert
	}
	s := ftpserver.NewFtpServer(d)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Stop() })
	return s.Addr(), d
}
