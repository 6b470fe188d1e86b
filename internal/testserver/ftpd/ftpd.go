// Package ftpd serves a folder over FTP on a loopback port through
// github.com/fclairamb/ftpserverlib, an FTP server written independently
// of deref, for tests of the library and the command.
package ftpd

import (
	"crypto/tls"
	"errors"

	ftpserver "github.com/fclairamb/ftpserverlib"
	"github.com/spf13/afero"
)

// Server serves Root to any user, anonymous or not, read and write.
type Server struct {
	s *ftpserver.FtpServer
}

type driver struct {
	root     string
	settings *ftpserver.Settings
}

func (d *driver) GetSettings() (*ftpserver.Settings, error) { return d.settings, nil }
func (d *driver) ClientConnected(ftpserver.ClientContext) (string, error) {
	return "deref test server ready", nil
}
func (d *driver) ClientDisconnected(ftpserver.ClientContext) {}
func (d *driver) AuthUser(_ ftpserver.ClientContext, _, _ string) (ftpserver.ClientDriver, error) {
	return afero.NewBasePathFs(afero.NewOsFs(), d.root), nil
}
func (d *driver) GetTLSConfig() (*tls.Config, error) { return nil, errors.New("no TLS") }

// Start serves root on 127.0.0.1 at a free port, in binary mode by
// default; tweaks adjust the server's settings (EnableHASH, say).
func Start(root string, tweaks ...func(*ftpserver.Settings)) (*Server, error) {
	settings := &ftpserver.Settings{ListenAddr: "127.0.0.1:0", DefaultTransferType: ftpserver.TransferTypeBinary}
	for _, t := range tweaks {
		t(settings)
	}
	s := ftpserver.NewFtpServer(&driver{root: root, settings: settings})
	if err := s.Listen(); err != nil {
		return nil, err
	}
	go s.Serve()
	return &Server{s: s}, nil
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.s.Addr() }

// URL is the server's ftp:// URL for its root folder.
func (s *Server) URL() string { return "ftp://" + s.s.Addr() + "/" }

// Close stops the server.
func (s *Server) Close() error { return s.s.Stop() }
