package fetch

import (
	"strings"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/file"
	"github.com/urlderef/deref/protocols/finger"
	"github.com/urlderef/deref/protocols/ftp"
	"github.com/urlderef/deref/protocols/gemini"
	"github.com/urlderef/deref/protocols/gopher"
	"github.com/urlderef/deref/protocols/http"
	"github.com/urlderef/deref/protocols/mail"
	"github.com/urlderef/deref/protocols/nex"
	"github.com/urlderef/deref/protocols/nntp"
	"github.com/urlderef/deref/protocols/prospero"
	"github.com/urlderef/deref/protocols/spartan"
	"github.com/urlderef/deref/protocols/telnet"
	"github.com/urlderef/deref/protocols/wais"
)

// builtins wires the built-in protocols: the one place the engine names
// schemes. Everything else asks the registered protocols.Scheme.
func (c *Client) builtins() []protocols.Scheme {
	var s []protocols.Scheme
	s = append(s, http.Schemes(c.httpF)...)
	s = append(s, file.Schemes()...)
	s = append(s, ftp.Schemes(c.FTP)...)
	s = append(s, gopher.Schemes(c.Gopher)...)
	s = append(s, wais.Schemes(c.WAIS)...)
	s = append(s, mail.Schemes(c.Mail)...)
	s = append(s, telnet.Schemes(c.Telnet)...)
	s = append(s, nntp.Schemes(c.NNTP)...)
	s = append(s, prospero.Schemes(c.Prospero)...)
	s = append(s, gemini.Schemes(c.Gemini)...)
	s = append(s, finger.Schemes(c.Finger)...)
	s = append(s, spartan.Schemes(c.Spartan)...)
	s = append(s, nex.Schemes(c.Nex)...)
	return append(s,
		protocols.Scheme{Name: "urn", Fetcher: urnFetcher{c}},
		// Designated by URLs, retrieved by none.
		protocols.Scheme{Name: "mailto", Linked: true, NotRetrievable: "a mailto: URL designates a mailbox, not an object (Client.SendMail, and the deref command's --smtp, send mail to it)"},
		protocols.Scheme{Name: "tn3270", Ports: []int{23}, Linked: true, NotRetrievable: "a tn3270: URL designates an interactive session for an external program (the deref command hands it to one)"},
		protocols.Scheme{Name: "rlogin", Ports: []int{513}, NotRetrievable: "an rlogin: URL designates an interactive session for an external program (the deref command hands it to one)"},
		protocols.Scheme{Name: "z39.50", Ports: []int{210}, Reserved: true},
		protocols.Scheme{Name: "z39.50r", Ports: []int{210}, Reserved: true},
		protocols.Scheme{Name: "z39.50s", Ports: []int{210}, Reserved: true},
		protocols.Scheme{Name: "afs", Reserved: true},
		protocols.Scheme{Name: "nfs", Reserved: true},
		protocols.Scheme{Name: "mailserver", Reserved: true},
		protocols.Scheme{Name: "x500", Reserved: true},
		protocols.Scheme{Name: "whois", Reserved: true},
	)
}

// Linked says whether a page links URLs of the scheme name as they are
// (its Scheme.Linked): the web, mailto:, sessions, rather than through a
// page of its own.
func (c *Client) Linked(name string) bool {
	s, _ := c.scheme(name)
	return s.Linked
}

// Register adds schemes to the Client: their fetchers and what the
// engine should know of them (protocols.Scheme). It panics if a scheme is
// registered twice: a wiring mistake should fail at start, not at first
// use. The built-in schemes are registered by NewClient already: their
// fetchers are configured through the Client's fields (Client.NNTP.Server
// names the news server), which the panic names.
func (c *Client) Register(schemes ...protocols.Scheme) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.schemes == nil {
		c.schemes = make(map[string]protocols.Scheme)
	}
	for _, s := range schemes {
		s.Name = strings.ToLower(s.Name)
		if old, dup := c.schemes[s.Name]; dup {
			msg := "fetch: scheme " + s.Name + " registered twice"
			if field := c.fieldOf(old.Fetcher); field != "" {
				msg += ": NewClient registers it; configure Client." + field + " (its fields) instead of registering another"
			}
			panic(msg)
		}
		c.schemes[s.Name] = s
	}
}

// fieldOf names the Client's field that holds f, a built-in fetcher; ""
// for any other.
func (c *Client) fieldOf(f protocols.Fetcher) string {
	for _, b := range []struct {
		name string
		f    protocols.Fetcher
	}{{"FTP", c.FTP}, {"Gopher", c.Gopher}, {"WAIS", c.WAIS}, {"Mail", c.Mail}, {"Telnet", c.Telnet}, {"NNTP", c.NNTP}, {"Prospero", c.Prospero}, {"Gemini", c.Gemini}, {"Finger", c.Finger}, {"Spartan", c.Spartan}, {"Nex", c.Nex}} {
		if f == b.f {
			return b.name
		}
	}
	return ""
}

// scheme is the registered description of name; ok is false for a
// scheme the Client does not know.
func (c *Client) scheme(name string) (protocols.Scheme, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	s, ok := c.schemes[name]
	return s, ok
}

// Scheme returns what the Client knows of the scheme name (lower case):
// its Fetcher and how the engine treats its URLs.
func (c *Client) Scheme(name string) (Scheme, bool) { return c.scheme(name) }

// fetcher is the registered fetcher of the scheme name, or nil.
func (c *Client) fetcher(name string) protocols.Fetcher {
	s, _ := c.scheme(name)
	return s.Fetcher
}

// wellKnown maps ports to the protocol they belong to, for RFC 1738 §6.
var wellKnown = map[int]string{
	7: "echo", 9: "discard", 13: "daytime", 19: "chargen", 20: "ftp-data", 21: "ftp", 22: "ssh",
	23: "telnet", 25: "smtp", 37: "time", 43: "whois", 53: "domain", 69: "tftp", 70: "gopher",
	79: "finger", 80: "http", 87: "link", 110: "pop3", 111: "sunrpc", 113: "ident", 119: "nntp",
	123: "ntp", 135: "msrpc", 139: "netbios", 143: "imap", 161: "snmp", 179: "bgp", 210: "wais",
	389: "ldap", 443: "https", 445: "smb", 465: "smtps", 512: "exec", 513: "login", 514: "shell",
	515: "printer", 563: "nntps", 587: "submission", 636: "ldaps", 873: "rsync", 989: "ftps-data",
	990: "ftps", 993: "imaps", 995: "pop3s", 1525: "prospero", 2049: "nfs", 3306: "mysql",
	5432: "postgresql", 6379: "redis", 6665: "irc", 6666: "irc", 6667: "irc", 6668: "irc", 6669: "irc",
	6697: "ircs", 11211: "memcache",
}
