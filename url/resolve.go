package url

import "strings"

// ResolveReference resolves a partial form against u, the URL of the
// document it was found in, by the algorithm of RFC 3986 §5.2, which
// refines the partial-form rules of RFC 1630. ref's own scheme, authority,
// path, query and fragment take precedence in that order; "." and ".."
// segments are removed. The result is re-parsed for its scheme, so a
// component that the scheme does not split off (a "?" in an FTP path) is
// read as that scheme reads it.
func (u *URL) ResolveReference(ref *URL) *URL {
	t := new(URL)
	switch {
	case ref.Scheme != "":
		*t = *ref
		t.Path = removeDotSegments(ref.Path)
	case ref.HasAuthority:
		*t = *ref
		t.Scheme = u.Scheme
		t.Path = removeDotSegments(ref.Path)
	default:
		t.Scheme, t.User, t.Host, t.Port, t.HasAuthority = u.Scheme, u.User, u.Host, u.Port, u.HasAuthority
		switch {
		case ref.Path == "":
			t.Path = u.Path
			t.Query, t.HasQuery = u.Query, u.HasQuery
			if ref.HasQuery {
				t.Query, t.HasQuery = ref.Query, true
			}
		case strings.HasPrefix(ref.Path, "/"):
			t.Path = removeDotSegments(ref.Path)
			t.Query, t.HasQuery = ref.Query, ref.HasQuery
		default:
			t.Path = removeDotSegments(merge(u, ref.Path))
			t.Query, t.HasQuery = ref.Query, ref.HasQuery
		}
	}
	t.Fragment, t.HasFragment = ref.Fragment, ref.HasFragment
	if !t.HasAuthority && strings.HasPrefix(t.Path, "//") {
		t.Path = "/." + t.Path // keep the path from reading as an authority
	}
	if p, err := Parse(t.String()); err == nil {
		return p
	}
	return t
}

// merge implements RFC 3986 §5.2.3.
func merge(base *URL, ref string) string {
	if base.HasAuthority && base.Path == "" {
		return "/" + ref
	}
	i := strings.LastIndexByte(base.Path, '/')
	return base.Path[:i+1] + ref
}

// removeDotSegments implements RFC 3986 §5.2.4.
func removeDotSegments(in string) string {
	if !strings.Contains(in, ".") {
		return in
	}
	var out []string // each element starts with "/" except possibly the first
	for in != "" {
		switch {
		case strings.HasPrefix(in, "../"):
			in = in[3:]
		case strings.HasPrefix(in, "./"):
			in = in[2:]
		case strings.HasPrefix(in, "/./"):
			in = in[2:]
		case in == "/.":
			in = "/"
		case strings.HasPrefix(in, "/../"):
			in = in[3:]
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		case in == "/..":
			in = "/"
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		case in == "." || in == "..":
			in = ""
		default:
			j := strings.IndexByte(in[1:], '/')
			if j < 0 {
				out = append(out, in)
				in = ""
			} else {
				out = append(out, in[:j+1])
				in = in[j+1:]
			}
		}
	}
	return strings.Join(out, "")
}
