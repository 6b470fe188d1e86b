package gateway_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/gateway"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
	"github.com/urlderef/deref/url"
)

// TestOperatorCredentialsUnused: a gateway mounted on a Client that holds
// its user's credentials (a netrc file with a login for the server,
// Client.User, a password prompt) answers a visitor as anonymous: alice's
// private file is refused, and the prompt is never asked. The same Client
// used directly still logs in as alice.
func TestOperatorCredentialsUnused(t *testing.T) {
	var mu sync.Mutex
	users := map[*ftpscript.Conn]string{}
	fs := &ftpscript.Server{Files: map[string]string{"alice.txt": "alice's secret\n", "pub.txt": "public\n"}}
	fs.Handle = func(c *ftpscript.Conn, verb, arg string) bool {
		mu.Lock()
		defer mu.Unlock()
		switch verb {
		case "USER":
			users[c] = arg
		case "PASS":
			if users[c] == "alice" && arg != "secret" {
				users[c] = ""
				c.Reply("530 Login incorrect.")
				return true
			}
		case "SIZE", "MDTM", "RETR":
			if arg == "alice.txt" && users[c] != "alice" {
				c.Reply("550 Permission denied.")
				return true
			}
		}
		return false
	}
	if err := fs.Start(); err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	netrcFile := filepath.Join(t.TempDir(), "netrc")
	os.WriteFile(netrcFile, []byte("machine 127.0.0.1 login alice password secret\n"), 0o600)

	asked := false
	prompt := func(context.Context, *url.URL, string) (string, error) {
		asked = true
		return "secret", nil
	}
	for _, tc := range []struct {
		name string
		set  func(c *fetch.Client)
		url  string // what the visitor asks for, below /ftp/
	}{
		{"the netrc file", func(c *fetch.Client) { c.NetrcFile = netrcFile }, fs.Addr() + "/alice.txt"},
		{"Client.User", func(c *fetch.Client) { c.User, c.Password, c.HasPassword = "alice", "secret", true }, fs.Addr() + "/alice.txt"},
		{"the prompt", func(c *fetch.Client) { c.NetrcFile, c.Prompt = "", prompt }, "alice@" + fs.Addr() + "/alice.txt"},
		{"the netrc file, for a user the URL names", func(c *fetch.Client) { c.NetrcFile = netrcFile }, "alice@" + fs.Addr() + "/alice.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fetch.NewClient()
			c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
			tc.set(c)
			direct, err := c.Get(context.Background(), "ftp://"+tc.url)
			if err != nil {
				t.Fatalf("the Client itself: %v", err)
			}
			direct.Body.Close()
			asked = false
			s := httptest.NewServer(gateway.Handler(c, gateway.Options{AllowPrivate: true}))
			defer s.Close()
			resp, body := get(t, s.URL+"/ftp/"+tc.url)
			if resp.StatusCode == 200 || body == "alice's secret\n" {
				t.Errorf("a visitor got alice's file: %d %q", resp.StatusCode, body)
			}
			if strings.Contains(body, "netrc") || strings.Contains(body, "-u ") {
				t.Errorf("a visitor is told of the operator's means of login: %s", body)
			}
			if strings.HasPrefix(tc.url, "alice@") && !strings.Contains(body, "give it in the URL, as ftp://alice:PASSWORD@") {
				t.Errorf("a visitor naming a user is not told how to give the password: %s", body)
			}
			if asked {
				t.Error("the gateway asked the operator's prompt for a visitor")
			}
			if resp, body := get(t, s.URL+"/ftp/"+fs.Addr()+"/pub.txt"); resp.StatusCode != 200 || body != "public\n" {
				t.Errorf("a public file: %d %q", resp.StatusCode, body)
			}
		})
	}
}
