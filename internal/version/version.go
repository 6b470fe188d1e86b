// Package version says which deref this is, from the build information Go
// records in every binary: the module's version (or "devel" for a build
// from a work tree) and the commit it was built from, when known.
package version

import (
	"runtime/debug"
	"strings"
)

// Module is deref's module path.
const Module = "github.com/urlderef/deref"

// Version is deref's module version ("v1.2.3"), or "devel" when it was
// built from a work tree rather than fetched as a module.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := bi.Main.Version
	if bi.Main.Path != Module {
		for _, d := range bi.Deps {
			if d.Path == Module {
				v = d.Version
			}
		}
	}
	if v == "" || v == "(devel)" {
		return "devel"
	}
	return v
}

// Commit is the commit deref was built from, shortened, with "+dirty"
// when the work tree had changes; empty when the build did not record it.
func Commit() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}

// UserAgent is what deref calls itself to HTTP servers: "deref/VERSION".
func UserAgent() string {
	return "deref/" + strings.TrimPrefix(Version(), "v")
}
