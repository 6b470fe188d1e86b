package http

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseChallenges: several challenges in a field and over fields,
// quoted strings with commas and escapes, a token68 scheme.
func TestParseChallenges(t *testing.T) {
	got := parseChallenges([]string{
		`Basic realm="a, b", Digest realm="x\"y", nonce=abc, qop="auth,auth-int", algorithm=SHA-256`,
		`Negotiate, Bearer realm=r`,
		`Digest realm="unterminated`,
	})
	want := []challenge{
		{"basic", map[string]string{"realm": "a, b"}},
		{"digest", map[string]string{"realm": `x"y`, "nonce": "abc", "qop": "auth,auth-int", "algorithm": "SHA-256"}},
		{"negotiate", map[string]string{}},
		{"bearer", map[string]string{"realm": "r"}},
		{"digest", map[string]string{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestDigestAuthorization: the published examples' responses (RFC 2069's
// and RFC 2617's for MD5, curl's test 2061 for SHA-256), the strongest
// algorithm chosen, userhash, and credentials that cannot go in a field.
func TestDigestAuthorization(t *testing.T) {
	for _, tt := range []struct {
		name, field, user, password, uri, cnonce, want string
	}{
		{"RFC 2069", `Digest realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"`,
			"Mufasa", "CircleOfLife", "/dir/index.html", "",
			`Digest username="Mufasa", realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/dir/index.html", response="1949323746fe6a43ef61f9606e7febea", opaque="5ccc069c403ebaf9f0171e9517f40e41"`},
		{"RFC 2617", `Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"`,
			"Mufasa", "Circle Of Life", "/dir/index.html", "0a4f113b",
			`Digest username="Mufasa", realm="testrealm@host.com", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", uri="/dir/index.html", response="6629fae49393a05397450978507c4ef1", opaque="5ccc069c403ebaf9f0171e9517f40e41", qop=auth, nc=00000001, cnonce="0a4f113b"`},
		{"curl 2061", `Digest realm="testrealm", nonce="1053604145", algorithm="SHA-256"`,
			"testuser", "testpass", "/2061", "",
			`Digest username="testuser", realm="testrealm", nonce="1053604145", uri="/2061", response="9dc55255f1a2537b838311674b621d45346b862a81631bb20e4ce356ef25062d", algorithm=SHA-256`},
		// Computed by another implementation (Python's hashlib) from RFC
		// 7616's formulas: auth-int of a GET (no body), and -sess.
		{"auth-int", `Digest realm="r", nonce="n", qop="auth-int"`, "u", "p", "/x", "c",
			`Digest username="u", realm="r", nonce="n", uri="/x", response="272e15ceadf49fb232f5866e55aa3195", qop=auth-int, nc=00000001, cnonce="c"`},
		{"SHA-256-sess", `Digest realm="r", nonce="n", qop=auth, algorithm=SHA-256-sess`, "u", "p", "/x", "c",
			`Digest username="u", realm="r", nonce="n", uri="/x", response="203435f0e3f59800bcc823a3cc777e26d10adbdb6e4ebef111fe48f2fdcdc0cf", algorithm=SHA-256-sess, qop=auth, nc=00000001, cnonce="c"`},
	} {
		c, alg, ok := pickDigest(parseChallenges([]string{tt.field}))
		if !ok {
			t.Fatalf("%s: no challenge picked", tt.name)
		}
		got, err := digestAuthorization(c, alg, tt.user, tt.password, "GET", tt.uri, tt.cnonce, 1)
		if tt.cnonce == "" {
			// No qop: no cnonce goes out, whatever the one made.
			if strings.Contains(got, "cnonce") {
				t.Errorf("%s: a cnonce without qop: %s", tt.name, got)
			}
		}
		if err != nil || got != tt.want {
			t.Errorf("%s:\n got %s %v\nwant %s", tt.name, got, err, tt.want)
		}
	}

	// SHA-256 over MD5 when both are offered; an unknown algorithm and a
	// qop deref cannot give are passed over.
	cs := parseChallenges([]string{`Digest realm="r", nonce="n1", algorithm=MD5`, `Digest realm="r", nonce="n2", algorithm=SHA-256`,
		`Digest realm="r", nonce="n3", algorithm=SHA-512-256`, `Digest realm="r", nonce="n4", qop="auth-conf"`})
	if c, alg, ok := pickDigest(cs); !ok || c.params["nonce"] != "n2" || digestAlgorithms[alg].name != "SHA-256" {
		t.Errorf("picked %v %d %v", c, alg, ok)
	}
	if _, _, ok := pickDigest(parseChallenges([]string{`Digest realm="r", nonce="n", algorithm=SHA-512-256`, `Basic realm="r"`})); ok {
		t.Error("picked an algorithm deref does not have")
	}
	// userhash: the name goes hashed (RFC 7616, section 3.4.4).
	c, alg, _ := pickDigest(parseChallenges([]string{`Digest realm="api@example.org", nonce="n", qop=auth, algorithm=SHA-256, userhash=true`}))
	got, _ := digestAuthorization(c, alg, "J\u00e4s\u00f8n Doe", "Secret, or not?", "GET", "/doe.json", "c", 1)
	if !strings.Contains(got, `username="5a1a8a47df5c298551b9b42ba9b05835174a5bd7d511ff7fe9191d8e946fc4e7", `) || !strings.HasSuffix(got, ", userhash=true") {
		t.Errorf("userhash: %s", got)
	}
	if _, err := digestAuthorization(c, alg, "joe\r\nX: y", "pw", "GET", "/", "c", 1); err == nil {
		t.Error("a user name with CR LF accepted")
	}
}
