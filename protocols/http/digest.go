package http

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
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
		b := make([]byte, 24)
		rand.Read(b)
		cnonce = base64.RawURLEncoding.EncodeToString(b)
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

// quote makes s a quoted-string.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
