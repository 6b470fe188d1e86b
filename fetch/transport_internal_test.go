package fetch

import (
	"context"
	"fmt"
	nethttp "net/http"
	"testing"

	"github.com/urlderef/deref/protocols"
)

// Every kind of failure maps to the status a refusal means, or to 0 (the
// error itself) when no server answered.
func TestStatusOf(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want int
	}{
		{ErrNotFound, nethttp.StatusNotFound},
		{ErrPermission, nethttp.StatusForbidden},
		{ErrAuth, nethttp.StatusUnauthorized},
		{ErrNotModified, nethttp.StatusNotModified},
		{ErrRangeNotSatisfied, nethttp.StatusRequestedRangeNotSatisfiable},
		{ErrTemporary, nethttp.StatusServiceUnavailable},
		{protocols.ErrBudget, nethttp.StatusServiceUnavailable},
		{ErrProtocol, nethttp.StatusBadGateway},
		{ErrRedirect, nethttp.StatusBadGateway},
		{ErrShortBody, nethttp.StatusBadGateway},
		{ErrTooLarge, nethttp.StatusBadGateway},
		{ErrNetwork, 0},
		{ErrTimeout, 0},
		{protocols.ErrNoGreeting, 0},
		{ErrBadURL, 0},
		{ErrUnsafePort, 0},
		{ErrUnsupportedScheme, 0},
		{ErrNotRetrievable, 0},
		{context.Canceled, 0},
		{context.DeadlineExceeded, 0},
	} {
		err := &Error{Op: "get", URL: "ftp://h/x", Err: fmt.Errorf("%w: the server's words", tt.err)}
		if got := statusOf(err); got != tt.want {
			t.Errorf("%v: %d, want %d", tt.err, got, tt.want)
		}
	}
}
