package http

import "testing"

// An archived request head keeps every field but the credentials of
// Authorization and Proxy-Authorization, whatever their case.
func TestHideAuthorization(t *testing.T) {
	for in, want := range map[string]string{
		"GET / HTTP/1.1\r\nHost: h\r\n\r\n":                                      "GET / HTTP/1.1\r\nHost: h\r\n\r\n",
		"GET / HTTP/1.1\r\nAuthorization: Basic am9lOnB3\r\n\r\n":                "GET / HTTP/1.1\r\nAuthorization: Basic xxxxx\r\n\r\n",
		"GET / HTTP/1.1\r\nproxy-authorization: Bearer t0k3n\r\nHost: h\r\n\r\n": "GET / HTTP/1.1\r\nproxy-authorization: Bearer xxxxx\r\nHost: h\r\n\r\n",
		"GET /Authorization: HTTP/1.1\r\nX-Authorization: y\r\n\r\n":             "GET /Authorization: HTTP/1.1\r\nX-Authorization: y\r\n\r\n",
		"GET / HTTP/1.1\nAUTHORIZATION: Digest x=1\n\n":                          "GET / HTTP/1.1\nAUTHORIZATION: Digest xxxxx\n\n",
	} {
		if got := string(hideAuthorization([]byte(in))); got != want {
			t.Errorf("hideAuthorization(%q) = %q, want %q", in, got, want)
		}
	}
}
