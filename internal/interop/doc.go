// Package interop holds the interoperability suite: tests (build tag
// interop) that dereference URLs served by real daemons from Debian's
// packages, started on 127.0.0.1 by .ci/interop/start, and compare what
// arrives with the generated tree they serve.
package interop
