package http

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"maps"
	"strings"
)

// challenge is one challenge of a WWW-Authenticate field (RFC 9110,
// section 11.6.1): its scheme and parameters, names in lower case.
type challenge struct {
	scheme string
	params map[string]string
}

// parseChallenges reads the challenges of WWW-Authenticate fields. A field
// may hold several, separated by commas like their parameters:
//
//	Basic realm="a", Digest realm="b", nonce="c", qop="auth,auth-int"
//
// What cannot be read ends the field's challenges.
func parseChallenges(fields []string) []challenge {
	var out []challenge
	for _, f := range fields {
		s := f
		for {
			s = strings.TrimLeft(s, " \t,")
			scheme, rest := token(s)
			if scheme == "" {
				break
			}
			c := challenge{scheme: strings.ToLower(scheme), params: map[string]string{}}
			s = rest
			for {
				t := strings.TrimLeft(s, " \t")
				if t == "" {
					break
				}
				if strings.HasPrefix(t, ",") {
					t = strings.TrimLeft(t, " \t,")
				} else if len(c.params) > 0 {
					break // a parameter not after a comma: unreadable
				}
				name, after := token(t)
				after = strings.TrimLeft(after, " \t")
				if name == "" || !strings.HasPrefix(after, "=") {
					break // the next challenge's scheme (or a token68)
				}
				after = strings.TrimLeft(after[1:], " \t")
				var value string
				var ok bool
				if strings.HasPrefix(after, `"`) {
					value, after, ok = quoted(after)
				} else {
					value, after = token(after)
					ok = value != ""
				}
				if !ok {
					return append(out, c)
				}
				c.params[strings.ToLower(name)] = value
				s = after
			}
			out = append(out, c)
		}
	}
	return out
}

// token splits a token (RFC 9110's tchar) off the start of s.
func token(s string) (string, string) {
	i := 0
	for i < len(s) && isTokenChar(s[i]) {
		i++
	}
	return s[:i], s[i:]
}

func isTokenChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// quoted reads the quoted-string at the start of s, its escapes undone.
func quoted(s string) (string, string, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), s[i+1:], true
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}

// digestAlgorithms are the algorithms of RFC 7616 deref answers, the
// strongest first: a server may offer several challenges.
var digestAlgorithms = []struct {
	name string
	hash func() hash.Hash
}{
	{"SHA-256", sha256.New},
	{"SHA-256-SESS", sha256.New},
	{"MD5", md5.New},
	{"MD5-SESS", md5.New},
}

// pickDigest returns the Digest challenge to answer, and its algorithm's
// place in digestAlgorithms; ok is false when there is none deref can
// answer (an unknown algorithm, or a qop that is neither auth nor
// auth-int).
func pickDigest(cs []challenge) (c challenge, alg int, ok bool) {
	best := len(digestAlgorithms)
	for _, ch := range cs {
		if ch.scheme != "digest" || ch.params["nonce"] == "" {
			continue
		}
		name := strings.ToUpper(ch.params["algorithm"])
		if name == "" {
			name = "MD5"
		}
		for i, a := range digestAlgorithms {
			if a.name == name && i < best && pickQop(ch.params["qop"]) != "-" {
				c, best, ok = ch, i, true
			}
		}
	}
	return c, best, ok
}

// pickQop chooses auth over auth-int from a challenge's qop list; "" when
// it gives none (RFC 2069's digest), "-" when it offers neither.
func pickQop(list string) string {
	if list == "" {
		return ""
	}
	intOnly := false
	for _, q := range strings.Split(list, ",") {
		switch strings.ToLower(strings.TrimSpace(q)) {
		case "auth":
			return "auth"
		case "auth-int":
			intOnly = true
		}
	}
	if intOnly {
		return "auth-int"
	}
	return "-"
}

// digestAuthorization is the Authorization value answering c (RFC 7616,
// section 3.4) for a GET or HEAD of uri, the request-target; cnonce is
// the client's nonce ("" makes one) and nc the nonce count.
func digestAuthorization(c challenge, alg int, user, password, method, uri, cnonce string, nc int) (string, error) {
	if strings.ContainsFunc(user+password, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return "", fmt.Errorf("a user name or password with a control character cannot log in with Digest")
	}
	a := digestAlgorithms[alg]
	h := func(s string) string {
		d := a.hash()
		d.Write([]byte(s))
		return hex.EncodeToString(d.Sum(nil))
	}
	realm, nonce := c.params["realm"], c.params["nonce"]
	qop := pickQop(c.params["qop"])
	if cnonce == "" {
		cnonce = newCnonce()
	}
	ha1 := h(user + ":" + realm + ":" + password)
	if strings.HasSuffix(a.name, "-SESS") {
		ha1 = h(ha1 + ":" + nonce + ":" + cnonce)
	}
	ha2 := h(method + ":" + uri)
	if qop == "auth-int" {
		ha2 = h(method + ":" + uri + ":" + h("")) // a GET has no body
	}
	count := fmt.Sprintf("%08x", nc)
	var response string
	if qop == "" {
		response = h(ha1 + ":" + nonce + ":" + ha2)
	} else {
		response = h(ha1 + ":" + nonce + ":" + count + ":" + cnonce + ":" + qop + ":" + ha2)
	}
	name := user
	hashed := strings.EqualFold(c.params["userhash"], "true")
	if hashed {
		name = h(user + ":" + realm)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Digest username=%s, realm=%s, nonce=%s, uri=%s, response=%s", quote(name), quote(realm), quote(nonce), quote(uri), quote(response))
	if c.params["algorithm"] != "" {
		b.WriteString(", algorithm=" + c.params["algorithm"])
	}
	if o, ok := c.params["opaque"]; ok {
		b.WriteString(", opaque=" + quote(o))
	}
	if qop != "" {
		fmt.Fprintf(&b, ", qop=%s, nc=%s, cnonce=%s", qop, count, quote(cnonce))
	}
	if hashed {
		b.WriteString(", userhash=true")
	}
	return b.String(), nil
}

// newCnonce is a client nonce: 24 random bytes.
func newCnonce() string {
	b := make([]byte, 24)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// quote makes s a quoted-string.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// digestSession is a Digest login a server accepted, kept so that the next
// requests to that server answer its challenge before it is made (RFC
// 7616, section 3.3: the nonce is used again with the next nonce count),
// instead of each costing a 401 first, as curl keeps it.
type digestSession struct {
	c      challenge
	alg    int
	cnonce string // the same for every use of the nonce (it is part of a -sess key)
	nc     int    // the last nonce count sent
	secret [sha256.Size]byte
}

// digestKey names the logins kept: one for each origin (the scheme and
// host of the request line's server) and user name.
type digestKey struct {
	origin, user string
}

// digestSecret stands for a password in a kept login, so that a request
// with another password does not use it.
func digestSecret(password string) [sha256.Size]byte {
	return sha256.Sum256([]byte("deref digest\x00" + password))
}

// nextDigest returns the Authorization value that answers, before it
// is made, the challenge the server at k accepted last, with the next
// nonce count; ok is false when there is none to answer.
func (f *Fetcher) nextDigest(k digestKey, password, method, uri string) (auth string, ok bool) {
	f.mu.Lock()
	s := f.digests[k]
	if s == nil || s.secret != digestSecret(password) {
		f.mu.Unlock()
		return "", false
	}
	s.nc++
	c, alg, cnonce, nc := s.c, s.alg, s.cnonce, s.nc
	f.mu.Unlock()
	auth, err := digestAuthorization(c, alg, k.user, password, method, uri, cnonce, nc)
	return auth, err == nil
}

// keepDigest records that the server at k accepted an answer to c (or,
// with c nil, that it refused the one kept). A nextnonce the server gave
// in its Authentication-Info field (RFC 7616, section 3.5) replaces the
// nonce, its count starting again.
func (f *Fetcher) keepDigest(k digestKey, c *challenge, alg int, cnonce, password, info string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c == nil {
		delete(f.digests, k)
		return
	}
	s := &digestSession{c: *c, alg: alg, cnonce: cnonce, nc: 1, secret: digestSecret(password)}
	if next := nextNonce(info); next != "" {
		s.c.params = maps.Clone(c.params)
		s.c.params["nonce"] = next
		s.nc = 0
	}
	if f.digests == nil {
		f.digests = map[digestKey]*digestSession{}
	}
	f.digests[k] = s
}

// nextNonce reads the nextnonce parameter of an Authentication-Info
// field; "" when there is none.
func nextNonce(info string) string {
	if info == "" {
		return ""
	}
	// The field is a challenge's parameters without the scheme.
	for _, c := range parseChallenges([]string{"x " + info}) {
		return c.params["nextnonce"]
	}
	return ""
}

// renewNonce takes the nextnonce of an Authentication-Info field the
// server at k sent with a reply to a kept login.
func (f *Fetcher) renewNonce(k digestKey, info string) {
	next := nextNonce(info)
	if next == "" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.digests[k]; s != nil {
		s.c.params = maps.Clone(s.c.params)
		s.c.params["nonce"] = next
		s.nc = 0
	}
}
