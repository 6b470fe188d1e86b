// Package fetch is the engine that dereferences URLs: give it a locator
// and it speaks the right protocol and streams the object back.
//
//	resp, err := fetch.Get(ctx, "ftp://ftp.example.org/pub/README")
//	if err != nil { ... }
//	defer resp.Body.Close()
//	io.Copy(os.Stdout, resp.Body)
//
// A Client holds the registry of protocols (every built-in one wired in
// NewClient, no init side effects), credentials (URL, netrc, prompt),
// proxies and per-scheme gateways, redirect policy, limits and the trace
// and progress hooks. Protocols do one retrieval each; the Client decides
// everything around it.
//
// Errors are *Error values naming the operation and the URL (password
// redacted) and unwrapping to a sentinel ([ErrNotFound], ErrAuth, ...) and to
// the protocol's own error.
package fetch
