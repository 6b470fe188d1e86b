package gateway

import (
	"context"
	"errors"
	"net"
	"testing"
)

// The guard refuses private, loopback and link-local addresses (IP
// literals as an FTP server's PASV reply gives them, and names that
// resolve to them) before dialling, and dials a public address as it is.
func TestGuard(t *testing.T) {
	var dialled []string
	base := func(_ context.Context, _, addr string) (net.Conn, error) {
		dialled = append(dialled, addr)
		return nil, errors.New("not dialled in this test")
	}
	d := guard(base, false, net.DefaultResolver)
	for _, addr := range []string{"127.0.0.1:21", "10.0.0.1:20", "192.168.1.1:70", "172.16.0.1:119", "[::1]:70", "169.254.169.254:80",
		"[fe80::1]:21", "0.0.0.0:21", "[::ffff:127.0.0.1]:21", "100.64.0.1:21", "[fd00::1]:70", "localhost:70"} {
		if _, err := d(context.Background(), "tcp", addr); !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v", addr, err)
		}
	}
	if len(dialled) != 0 {
		t.Errorf("dialled %v", dialled)
	}
	d(context.Background(), "tcp", "93.184.216.34:21")
	if len(dialled) != 1 || dialled[0] != "93.184.216.34:21" {
		t.Errorf("a public address: dialled %v", dialled)
	}
	if d := guard(base, true, net.DefaultResolver); d == nil {
		t.Error("no dial with AllowPrivate")
	}
}
