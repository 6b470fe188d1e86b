package gateway

import (
	"net/http/httptest"
	"testing"

	"github.com/urlderef/deref/fetch"
)

// A page links the web, mail, sessions and the schemes browsers hand to
// programs as they are, by the scheme table (Scheme.Linked, a scheme
// registered with it too), the schemes it has pages for (the small web's
// among them) through them, and nothing else.
func TestLinkByTable(t *testing.T) {
	c := fetch.NewClient()
	c.Register(fetch.Scheme{Name: "chat", Linked: true})
	r := withTable(httptest.NewRequest("GET", "/", nil), c)
	for raw, want := range map[string]string{
		"http://h/x":              "http://h/x",
		"telnet://h/":             "telnet://h/",
		"mailto:a@h":              "mailto:a@h",
		"gemini://h/":             "/gemini/h/",
		"finger://h/gus":          "/finger/h/gus",
		"nex://h/":                "/nex/h/",
		"chat://h/room":           "chat://h/room",
		"gopher://h/1/":           "/gopher/h/1/",
		"javascript:alert(1)":     "",
		"rlogin://h/":             "",
		"data:text/html,<b>x</b>": "",
	} {
		if got := link(r, raw); got != want {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}
}
