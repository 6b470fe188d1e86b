package crawl

import (
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/links"
	"github.com/urlderef/deref/url"
)

// localCopy is the file an earlier run wrote for a URL (OnlyNewer).
type localCopy struct {
	rel  string // its path below OutputDir
	orig bool   // judged by NAME.orig, the page as it came (BackupConverted)
	size int64
	mod  time.Time
}

// localCopy finds the file u's object was written to, if any: where it
// goes as a file, a page or a style sheet (a folder's index, -E's names).
// With ConvertLinks a page or style sheet is not taken: its file was
// rewritten, and says nothing of the server's copy; with BackupConverted
// its original (NAME.orig) is, or where there is none (it had no link to
// convert) the file itself, as wget -K -N judges it.
func (m *run) localCopy(u *url.URL) *localCopy {
	var cands []string
	for _, mt := range []string{"", "text/html", "text/css"} {
		rel, err := localPath(u, &fetch.Response{Kind: fetch.KindFile, MediaType: mt}, &m.o, false)
		if err != nil {
			continue
		}
		if m.o.NoDirectories {
			rel = path.Base(rel)
		}
		if !slices.Contains(cands, rel) {
			cands = append(cands, rel)
		}
	}
	for _, rel := range cands {
		if m.o.ConvertLinks && converted(rel) {
			if !m.o.BackupConverted {
				continue
			}
			// Its original; where there is none, converting it found
			// no link to convert, and the page is as it came.
			if st, err := m.root.Lstat(rel + origSuffix); err == nil && st.Mode().IsRegular() {
				return &localCopy{rel: rel, orig: true, size: st.Size(), mod: st.ModTime()}
			}
		}
		st, err := m.root.Lstat(rel)
		if err == nil && st.Mode().IsRegular() {
			return &localCopy{rel: rel, size: st.Size(), mod: st.ModTime()}
		}
	}
	return nil
}

// converted says ConvertLinks may have rewritten the file at rel: a page
// or a style sheet, as its name tells.
func converted(rel string) bool {
	name := path.Base(rel)
	return htmlName(name) || strings.HasSuffix(strings.ToLower(name), ".css")
}

// unchanged takes the links of u's object from its file, which OnlyNewer
// found no older than the server's copy, as fetch would from the server:
// relative to final, where redirects led (u when none).
func (m *run) unchanged(u, final *url.URL, l *localCopy) (int64, []link, error) {
	m.mu.Lock()
	m.report.Unchanged++
	m.mu.Unlock()
	name := path.Base(l.rel)
	lower := strings.ToLower(name)
	css := strings.HasSuffix(lower, ".css")
	if m.o.ConvertLinks {
		m.noteWritten(u, final, l.rel, notConverted) // converted() kept pages out
	}
	if !htmlName(name) && !css {
		return 0, nil, nil
	}
	from := l.rel
	if l.orig {
		from += origSuffix // the links as they came, not as converted
	}
	f, err := m.root.Open(from)
	if err != nil {
		return 0, nil, fetch.WriteError(err)
	}
	defer f.Close()
	var hrefs []links.Link
	var base string
	if css {
		var found []string
		found, err = links.CSS(f)
		for _, h := range found {
			hrefs = append(hrefs, links.Link{URL: h, Inline: true})
		}
	} else {
		hrefs, base, err = m.pageLinks(f)
	}
	if err != nil && err != io.EOF {
		return 0, nil, fetch.WriteError(&fs.PathError{Op: "read", Path: l.rel, Err: err})
	}
	return 0, m.links(final, hrefs, base, false, nil), nil
}
