// The Client the flags configure, and the questions asked on the terminal.

package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/cookiefile"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/ftp"
	"github.com/urlderef/deref/protocols/gopher"
	"github.com/urlderef/deref/url"
)

func newClient(o *options, stderr io.Writer) (*fetch.Client, error) {
	c := fetch.NewClient()
	c.ConnectTimeout = seconds(o.connectTimeout)
	c.Network = o.network
	if o.iface != "" {
		ip, err := localAddr(o.iface, o.network)
		if err != nil {
			return nil, fmt.Errorf("--interface: %w", err)
		}
		c.LocalAddr = ip
	}
	if o.unixSocket != "" {
		if o.iface != "" {
			return nil, fmt.Errorf("--unix-socket and --interface do not go together")
		}
		path, d := o.unixSocket, net.Dialer{Timeout: c.ConnectTimeout}
		if d.Timeout <= 0 {
			d.Timeout = 30 * time.Second // --connect-timeout's default
		}
		c.Dial = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path) // every connection, whatever its host
		}
	}
	c.Compressed = o.compressed
	c.NoProxy = o.noProxy
	c.IdleTimeout = seconds(o.idleTimeout)
	if c.IdleTimeout > 0 {
		c.WAIS.ReplyTimeout = c.IdleTimeout
	}
	c.Mail.Dir, c.URNResolver = o.mailDir, o.urnResolver
	if o.knownHosts != "" {
		c.Gemini.KnownHosts = o.knownHosts
	}
	c.NNTP.Server, c.NNTP.Descriptions, c.NNTP.StartTLS, c.NNTP.Articles = o.newsServer, o.newsDescriptions, o.newsTLS, o.newsArticles
	c.MaxBytes = o.maxBytes
	if o.speedLimit > 0 || o.speedTime > 0 {
		c.LowSpeedLimit, c.LowSpeedTime = max(o.speedLimit, 1), seconds(o.speedTime) // -y alone: 1 byte a second, as curl
	}
	c.MaxRedirects = o.maxRedirs
	if o.maxRedirs == 0 {
		c.MaxRedirects = -1
	}
	c.AllowDowngrade = o.allowDowngrade
	if o.redirectSchemes != "" {
		c.RedirectSchemes = strings.Split(strings.ToLower(o.redirectSchemes), ",")
	}
	if o.proto != "" || o.protoRedir != "" {
		all := c.Schemes() // sorted anew at each call
		if o.proto != "" {
			c.OnlySchemes = protoSet(o.proto, all, all)
		}
		if o.protoRedir != "" {
			c.RedirectOnly = append(protoSet(o.protoRedir, c.RedirectDefaults(), all), c.RedirectSchemes...)
		}
	}
	for _, p := range strings.FieldsFunc(o.allowPorts, func(r rune) bool { return r == ',' }) {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("--allow-port: %q is not a port number", p)
		}
		c.AllowPorts = append(c.AllowPorts, n)
	}
	switch {
	case o.noNetrc:
		c.NetrcFile = ""
	case o.netrcFile != "":
		c.NetrcFile = o.netrcFile
	}
	if o.insecure || o.caCert != "" || o.caPath != "" || o.cert != "" || o.tlsMin != 0 || o.tlsMax != 0 {
		c.TLSConfig = &tls.Config{InsecureSkipVerify: o.insecure, MinVersion: o.tlsMin, MaxVersion: o.tlsMax}
	}
	if o.tlsMin != 0 && o.tlsMax != 0 && o.tlsMax < o.tlsMin {
		return nil, fmt.Errorf("--tls-max is below the least TLS version asked for")
	}
	switch {
	case o.key != "" && o.cert == "":
		return nil, fmt.Errorf("--key goes with --cert")
	case o.cert != "":
		key := o.key
		if key == "" {
			key = o.cert // the key beside the certificate, as curl reads it
		}
		pair, err := tls.LoadX509KeyPair(o.cert, key)
		if err != nil {
			return nil, fmt.Errorf("--cert: %w", err)
		}
		c.TLSConfig.Certificates = []tls.Certificate{pair}
	}
	if len(o.resolve) > 0 || len(o.connectTo) > 0 {
		c.Resolve = map[string]string{}
		for _, r := range o.connectTo {
			hostPort, to, err := connectToEntry(r)
			if err != nil {
				return nil, err
			}
			c.Resolve[hostPort] = to
		}
		for _, r := range o.resolve {
			hostPort, addr, err := resolveEntry(r)
			if err != nil {
				return nil, err
			}
			c.Resolve[hostPort] = addr
		}
	}
	if o.caCert != "" || o.caPath != "" {
		pool := x509.NewCertPool()
		if o.caCert != "" {
			b, err := os.ReadFile(o.caCert)
			if err != nil {
				return nil, fmt.Errorf("--cacert: %w", err)
			}
			if !pool.AppendCertsFromPEM(b) {
				return nil, fmt.Errorf("--cacert: %s holds no PEM certificate", o.caCert)
			}
		}
		if o.caPath != "" {
			if err := addCertDir(pool, o.caPath); err != nil {
				return nil, fmt.Errorf("--capath: %w", err)
			}
		}
		c.TLSConfig.RootCAs = pool
	}
	switch o.ftpMethod {
	case "rfc", "single", "none", "auto":
		c.FTP.Method = o.ftpMethod
	default:
		return nil, fmt.Errorf("--ftp-method: %q is not rfc, single, none or auto", o.ftpMethod)
	}
	c.FTP.ExplicitTLS = o.ftpSSL
	c.FTP.NoPipelining = o.ftpSync
	c.FTP.DisableEPSV = o.noEPSV
	if o.password != "" {
		switch {
		case o.user == "":
			return nil, fmt.Errorf("--password goes with --user")
		case strings.Contains(o.user, ":"):
			return nil, fmt.Errorf("--user names a password already; --password gives another")
		}
		o.user += ":" + o.password
		o.password = ""
	}
	if o.user != "" {
		user, pw, hasPw := strings.Cut(o.user, ":")
		if err := url.CheckArg("--user", o.user); err != nil || user == "" {
			return nil, fmt.Errorf("--user: want USER[:PASSWORD], without CR, LF or NUL")
		}
		c.User, c.Password, c.HasPassword = user, pw, hasPw
	}
	if len(o.cookies) > 0 {
		c.Header = append(c.Header, [2]string{"Cookie", strings.Join(o.cookies, "; ")})
	}
	if o.noCookies && (len(o.cookieFiles) > 0 || o.cookieJar != "") {
		return nil, errors.New("--no-cookies keeps no cookies: not with -b or -c")
	}
	if len(o.cookieFiles) > 0 || o.cookieJar != "" || o.memoryJar && !o.noCookies {
		o.jar = &cookiefile.Jar{}
		for _, name := range o.cookieFiles {
			if err := loadCookies(o.jar, name, o.stdin, o.junkSessions); err != nil {
				return nil, err
			}
		}
		c.Jar = o.jar
	}
	c.HTTPAuth = o.httpAuth
	if o.bearer != "" {
		if strings.ContainsAny(o.bearer, "\r\n\x00") {
			return nil, fmt.Errorf("--oauth2-bearer: a token without CR, LF or NUL")
		}
		c.Header = append(c.Header, [2]string{"Authorization", "Bearer " + o.bearer})
	}
	if o.userAgent != "" {
		c.Header = append(c.Header, [2]string{"User-Agent", o.userAgent})
	}
	if o.referer != "" {
		c.Header = append(c.Header, [2]string{"Referer", refererValue(o.referer)})
	}
	for _, h := range o.headers {
		name, value, ok := strings.Cut(h, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" || strings.ContainsAny(name, " \t") || strings.ContainsAny(h, "\r\n\x00") {
			return nil, fmt.Errorf("--header: %q is not 'NAME: VALUE'", h)
		}
		c.Header = append(c.Header, [2]string{name, value})
	}
	for _, h := range c.Header {
		if strings.ContainsAny(h[1], "\r\n\x00") {
			return nil, fmt.Errorf("%s: CR, LF or NUL in a header value", h[0])
		}
	}
	if o.ftpTimeZone != "" {
		loc, err := ftp.ParseZone(o.ftpTimeZone)
		if err != nil {
			return nil, fmt.Errorf("--ftp-timezone: %w", err)
		}
		c.FTP.TimeZone = loc
	}
	c.FTP.MaxIdle = max(4, o.parallel) // every worker keeps its control connection
	switch o.proxy {
	case "":
	case "-":
		c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	default:
		raw := o.proxy
		if !strings.Contains(raw, "://") {
			raw = "http://" + raw
		}
		p, err := url.Parse(url.Canonicalize(raw))
		if err != nil {
			return nil, fmt.Errorf("--proxy: %w", err)
		}
		c.Proxy = func(*url.URL) (*url.URL, error) { return p, nil } // never asked for this machine's files
	}
	if o.proxyPassword != "" {
		if o.proxyUser == "" || strings.Contains(o.proxyUser, ":") {
			return nil, fmt.Errorf("--proxy-password goes with a --proxy-user that names no password")
		}
		o.proxyUser += ":" + o.proxyPassword
	}
	if o.proxyUser != "" {
		user, pw, _ := strings.Cut(o.proxyUser, ":")
		if user == "" || url.CheckArg("--proxy-user", o.proxyUser) != nil {
			return nil, fmt.Errorf("--proxy-user: want USER:PASSWORD, without CR, LF or NUL")
		}
		via := c.Proxy
		if via == nil {
			via = fetch.ProxyFromEnvironment
		}
		c.Proxy = func(u *url.URL) (*url.URL, error) {
			p, err := via(u)
			if p != nil && p.User == nil {
				q := *p
				q.User = url.UserPassword(user, pw)
				p = &q
			}
			return p, err
		}
	}
	if o.verbose || o.traceOut != nil {
		to := stderr
		if o.traceOut != nil {
			to = o.traceOut // --trace-ascii
		}
		c.Trace = func(u *url.URL, ev fetch.TraceEvent) {
			prefix := "* "
			switch ev.Dir {
			case protocols.TraceSend:
				prefix = "> "
			case protocols.TraceRecv:
				prefix = "< "
			}
			if o.traceTime {
				prefix = time.Now().Format("15:04:05.000000 ") + prefix
			}
			errMu.Lock()
			fmt.Fprintln(to, prefix+oneLine(ev.Text))
			errMu.Unlock()
		}
	}
	if f, ok := stderr.(*os.File); ok && !o.silent && o.parallel <= 1 && term.IsTerminal(int(f.Fd())) {
		o.progress = newProgressLine(f)
		c.Progress = o.progress.update
	}
	if _, _, closeTTY, err := openTTY(); err == nil {
		closeTTY()
		c.Prompt = promptPassword // no terminal: the netrc file answers instead
		c.Gopher.Ask = askOnTerminal
		c.Gemini.Ask = answerOnTerminal
	}
	return c, nil
}

// promptPassword asks on the terminal, without echo.
func promptPassword(ctx context.Context, u *url.URL, user string) (string, error) {
	in, out, closeTTY, err := openTTY()
	if err != nil {
		return "", fmt.Errorf("%w: a password is needed for %s and there is no terminal to ask on", fetch.ErrAuth, user)
	}
	defer closeTTY()
	fmt.Fprintf(out, "Password for %s@%s: ", user, u.Host)
	pw, err := term.ReadPassword(int(in.Fd()))
	fmt.Fprintln(out)
	if err != nil {
		return "", fmt.Errorf("%w: reading the password: %w", fetch.ErrAuth, err)
	}
	return string(pw), nil
}

// answerOnTerminal asks a capsule's question on the terminal: a
// sensitive answer (Gemini's 11) without echo, as a password.
func answerOnTerminal(ctx context.Context, prompt string, sensitive bool) (string, error) {
	ttyIn, tty, closeTTY, err := openTTY()
	if err != nil {
		return "", fmt.Errorf("%w: the capsule asks %q and there is no terminal to answer on", fetch.ErrNotRetrievable, prompt)
	}
	defer closeTTY()
	fmt.Fprint(tty, protocols.Printable(prompt)+" ")
	if sensitive {
		b, err := term.ReadPassword(int(ttyIn.Fd()))
		fmt.Fprintln(tty)
		return string(b), err
	}
	line, err := bufio.NewReader(ttyIn).ReadString('\n')
	if err != nil && line == "" {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// askOnTerminal asks the questions of a Gopher+ form on the terminal.
func askOnTerminal(ctx context.Context, qs []gopher.Question) ([]string, error) {
	ttyIn, tty, closeTTY, err := openTTY()
	if err != nil {
		return nil, fmt.Errorf("%w: a form needs answers and there is no terminal to ask on", fetch.ErrNotRetrievable)
	}
	defer closeTTY()
	in := bufio.NewReader(ttyIn)
	var answers []string
	for _, q := range qs {
		if !q.NeedsAnswer() {
			fmt.Fprintln(tty, q.Prompt)
			continue
		}
		prompt := q.Prompt
		if len(q.Choices) > 0 {
			prompt += " [" + strings.Join(q.Choices, "/") + "]"
		}
		fmt.Fprint(tty, prompt+" ")
		var a string
		if q.Kind == "AskP" {
			b, err := term.ReadPassword(int(ttyIn.Fd()))
			fmt.Fprintln(tty)
			if err != nil {
				return nil, err
			}
			a = string(b)
		} else {
			line, err := in.ReadString('\n')
			if err != nil && line == "" {
				return nil, err
			}
			a = strings.TrimRight(line, "\r\n")
		}
		if a == "" && len(q.Choices) > 0 {
			a = q.Choices[0]
		}
		answers = append(answers, a)
	}
	return answers, nil
}

// refererValue is what Referer says of the URL given with -e: without its
// user, password and fragment, which RFC 9110 (10.1.3) keeps out of the
// field (a password sent there would reach the server, -v and the WARC
// request record); a value that is no URL goes as it is.
func refererValue(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || !u.HasAuthority {
		return raw
	}
	u.User, u.HasFragment, u.Fragment = nil, false, ""
	return u.String()
}

// resolveEntry reads --resolve HOST:PORT:ADDRESS (an IPv6 address in
// brackets or bare) into the HOST:PORT a dial asks for and the address it
// goes to instead.
func resolveEntry(v string) (hostPort, addr string, err error) {
	bad := fmt.Errorf("--resolve: %q is not HOST:PORT:ADDRESS", v)
	host, rest, ok := strings.Cut(v, ":")
	if !ok || host == "" {
		return "", "", bad
	}
	port, ip, ok := strings.Cut(rest, ":")
	if n, err := strconv.Atoi(port); !ok || err != nil || n < 1 || n > 65535 {
		return "", "", bad
	}
	ip = strings.TrimSuffix(strings.TrimPrefix(ip, "["), "]")
	if net.ParseIP(ip) == nil {
		return "", "", fmt.Errorf("--resolve: %q in %q is not an IP address", ip, v)
	}
	return strings.ToLower(net.JoinHostPort(strings.Trim(host, "[]"), port)), net.JoinHostPort(ip, port), nil
}

// connectToEntry reads curl's --connect-to HOST1:PORT1:HOST2:PORT2 (an
// IPv6 address in brackets): connections for HOST1:PORT1 go to
// HOST2:PORT2, HOST2 and PORT2 being HOST1's and PORT1's when empty.
// deref takes it with HOST1 and PORT1 given (curl's empty ones, "any",
// are refused).
func connectToEntry(v string) (hostPort, to string, err error) {
	bad := fmt.Errorf("--connect-to: %q is not HOST1:PORT1:HOST2:PORT2", v)
	var parts []string
	rest := v
	for i := 0; i < 4; i++ {
		var p string
		if i%2 == 0 && strings.HasPrefix(rest, "[") {
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return "", "", bad
			}
			p, rest = rest[1:end], rest[end+1:]
			if i < 3 && !strings.HasPrefix(rest, ":") && rest != "" {
				return "", "", bad
			}
			rest = strings.TrimPrefix(rest, ":")
		} else if i < 3 {
			var ok bool
			if p, rest, ok = strings.Cut(rest, ":"); !ok {
				return "", "", bad
			}
		} else {
			p, rest = rest, ""
		}
		parts = append(parts, p)
	}
	if rest != "" {
		return "", "", bad
	}
	host1, port1, host2, port2 := parts[0], parts[1], parts[2], parts[3]
	if host1 == "" || port1 == "" {
		return "", "", fmt.Errorf("--connect-to: %q: deref takes HOST1 and PORT1 given, not curl's any host or port", v)
	}
	for _, p := range []string{port1, port2} {
		if n, err := strconv.Atoi(p); p != "" && (err != nil || n < 1 || n > 65535) {
			return "", "", bad
		}
	}
	if host2 == "" {
		host2 = host1
	}
	if port2 == "" {
		port2 = port1
	}
	return strings.ToLower(net.JoinHostPort(host1, port1)), net.JoinHostPort(host2, port2), nil
}

// literalCookies refuses -b NAME=VALUE to a mirror or crawl, whose
// requests go to every host it reaches.
const literalCookies = "--cookie (-b) NAME=VALUE would go to every host reached; give the cookies in a file (--cookie FILE, --load-cookies FILE), where each names its site"

// loadCookies adds the cookies of the file -b names to jar: "" none, "-"
// standard input's; a file that is not there holds none yet, as curl has
// it (the first run of a script that keeps its cookies with -b and -c).
func loadCookies(jar *cookiefile.Jar, name string, stdin io.Reader, noSession bool) error {
	var r io.Reader
	switch name {
	case "":
		return nil
	case "-":
		if stdin == nil {
			return fmt.Errorf("-b -: standard input is not read here; name a file")
		}
		r = stdin
	default:
		f, err := os.Open(name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("-b: %w", err)
		}
		defer f.Close()
		r = f
	}
	if err := jar.Load(r, noSession); err != nil {
		return fmt.Errorf("-b %s: %w", name, err)
	}
	return nil
}

// saveCookies writes the cookie jar to the file -c names, if any, at the
// end of a run: through a temporary file beside it, renamed into place
// once whole; "-" is standard output.
func saveCookies(o *options, stdout io.Writer) error {
	if o.cookieJar == "" || o.jar == nil {
		return nil
	}
	sessions := !o.wgetJar || o.keepSessions
	if o.cookieJar == "-" {
		return o.jar.Save(stdout, sessions)
	}
	dir, base := filepath.Split(o.cookieJar)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*")
	if err != nil {
		return fetch.WriteError(err)
	}
	err = o.jar.Save(f, sessions)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), o.cookieJar)
	}
	if err != nil {
		os.Remove(f.Name())
		return fetch.WriteError(err)
	}
	return nil
}

// protoSet is the set of schemes curl's --proto syntax gives from start:
// comma-separated names, or "all" (every scheme in all), each after
// modifiers: "+" adds it (as a bare name does), "-" removes it, "="
// makes it the only one so far. A name deref has no scheme for is kept,
// and never matches, as curl ignores it.
func protoSet(expr string, start, all []string) []string {
	set := map[string]bool{}
	for _, s := range start {
		set[s] = true
	}
	for _, item := range strings.Split(expr, ",") {
		item = strings.ToLower(strings.TrimSpace(item))
		op := byte('+')
		for item != "" && strings.IndexByte("+-=", item[0]) >= 0 {
			op, item = item[0], item[1:]
		}
		names := []string{item}
		switch item {
		case "":
			names = nil
		case "all":
			names = all
		}
		if op == '=' {
			clear(set)
		}
		for _, n := range names {
			if op == '-' {
				delete(set, n)
			} else {
				set[n] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// localAddr reads --interface: an IP address, an interface's name (its
// first address of the IP version -4 or -6 asks for, IPv4 by default) or
// a host name, with curl's "if!" and "host!" to say which.
func localAddr(v, network string) (net.IP, error) {
	kind, name, ok := strings.Cut(v, "!")
	if !ok || kind != "if" && kind != "host" {
		kind, name = "", v
	}
	if ip := net.ParseIP(name); ip != nil && kind != "if" {
		return ip, nil
	}
	if kind != "host" {
		if ifc, err := net.InterfaceByName(name); err == nil {
			addrs, err := ifc.Addrs()
			if err != nil {
				return nil, err
			}
			var ips []net.IP
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok {
					ips = append(ips, n.IP)
				}
			}
			if ip := pickFamily(ips, network); ip != nil {
				return ip, nil
			}
			return nil, fmt.Errorf("the interface %s has no address to connect from", name)
		} else if kind == "if" {
			return nil, err
		}
	}
	ips, err := net.LookupIP(name)
	if err != nil {
		return nil, fmt.Errorf("%q is neither an address, an interface nor a host: %w", name, err)
	}
	if ip := pickFamily(ips, network); ip != nil {
		return ip, nil
	}
	return nil, fmt.Errorf("%s has no address of the IP version asked for", name)
}

// pickFamily returns the first of ips of network's IP version, IPv4 when
// network does not say; a link-local IPv6 address, which needs a zone, is
// passed over.
func pickFamily(ips []net.IP, network string) net.IP {
	var v6 net.IP
	for _, ip := range ips {
		switch {
		case ip.To4() != nil:
			if network != "tcp6" {
				return ip
			}
		case !ip.IsLinkLocalUnicast() && v6 == nil:
			v6 = ip
		}
	}
	if network == "tcp4" {
		return nil
	}
	return v6
}

// addCertDir adds to pool the PEM certificates of the regular files in
// dir (OpenSSL's hashed links to them included), as curl's --capath
// reads a folder; a folder with none is an error.
func addCertDir(pool *x509.CertPool, dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	found := false
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // a folder, a broken link: not a certificate
		}
		if pool.AppendCertsFromPEM(b) {
			found = true
		}
	}
	if !found {
		return fmt.Errorf("%s holds no PEM certificate", dir)
	}
	return nil
}
