package crawl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/url"
)

// stateLine is one line of a state file (Options.State), a JSON object
// saying one of these:
//
//   - {"start": URL}: a start URL was queued;
//   - {"url": URL, "depth": D, "links": [URL...], "bytes": N}: URL was
//     fetched and queued those links, at depth D+1 ("plus" lists those that
//     are Gopher+ items, whose attribute blocks are archived too); with
//     "err" it failed for good,
//     with "excluded" robots.txt excluded it; with "file" and "at", its
//     records are in that WARC file and end at that offset;
//   - {"robots": URL, "allow": [...], "disallow": [...]}: a robots.txt
//     was read, these the rules for deref;
//   - {"file": PATH}: a WARC file was begun.
//
// URLs are written without their passwords; a resumed run takes them
// from the start URLs of the same site and user.
type stateLine struct {
	Start    string   `json:"start,omitempty"`
	URL      string   `json:"url,omitempty"`
	Depth    int      `json:"depth,omitempty"`
	Links    []string `json:"links,omitempty"`
	Plus     []string `json:"plus,omitempty"`
	Bytes    int64    `json:"bytes,omitempty"`
	Err      string   `json:"err,omitempty"`
	Excluded bool     `json:"excluded,omitempty"`
	Robots   string   `json:"robots,omitempty"`
	Allow    []string `json:"allow,omitempty"`
	Disallow []string `json:"disallow,omitempty"`
	File     string   `json:"file,omitempty"`
	At       int64    `json:"at,omitempty"`
}

// state appends lines to the state file, one write each, so that a
// crawl killed at any point leaves at most its last line cut short.
type state struct {
	mu  sync.Mutex
	f   *os.File
	err error
}

func (s *state) write(l stateLine) {
	b, err := json.Marshal(l)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.f.Write(append(b, '\n')); err != nil && s.err == nil {
		s.err = err
	}
}

// stateURL is u as the state keeps it: without its password.
func stateURL(u *url.URL) string { return u.WithoutPassword() }

// fromState reads a URL of the state back, with the password of the
// start URL of its site and user, if one has it.
func (m *run) fromState(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if u.User != nil {
		for _, s := range m.starts {
			p, ok := s.User.Password()
			if ok && s.Scheme == u.Scheme && strings.EqualFold(s.Site(), u.Site()) && s.User.Username() == u.User.Username() {
				u.User = url.UserPassword(u.User.Username(), p)
				break
			}
		}
	}
	return crawlForm(u), nil
}

// loadState reads the state file, if there is one, into f and opens it
// for appending: the URLs settled are seen, those queued and not settled
// are queued again in the order queued, the robots.txt rules are kept,
// and the WARC files are known with where their settled records end
// (mendArchive cuts them there).
func (m *run) loadState(path string, f *localFrontier) error {
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	var order []Item
	settled := map[uint64]struct{}{}
	files := map[string]int{} // WARC file -> its place in f.files
	good := int64(0)          // where the last whole line ends
	rd := bufio.NewReader(file)
	for {
		line, err := rd.ReadBytes('\n')
		if err != nil {
			if err != io.EOF {
				file.Close()
				return err
			}
			break // a last line cut short is dropped
		}
		var l stateLine
		if json.Unmarshal(bytes.TrimSpace(line), &l) != nil {
			file.Close()
			return fmt.Errorf("%s: line at byte %d is not a crawl's state", path, good)
		}
		good += int64(len(line))
		switch {
		case l.Start != "":
			order = append(order, Item{URL: m.keyOf(l.Start)})
		case l.URL != "":
			settled[Fingerprint(m.keyOf(l.URL))] = struct{}{}
			plus := map[string]bool{}
			for _, k := range l.Plus {
				plus[k] = true
			}
			for _, k := range l.Links {
				order = append(order, Item{URL: m.keyOf(k), Depth: l.Depth + 1, Plus: plus[k]})
			}
			if l.File != "" {
				i, ok := files[l.File]
				if !ok {
					i = len(f.files)
					files[l.File] = i
					f.files = append(f.files, ArchiveFile{Path: l.File})
				}
				f.files[i].End = l.At
			}
		case l.Robots != "":
			f.robots[l.Robots] = [2][]string{l.Allow, l.Disallow}
		case l.File != "":
			if _, ok := files[l.File]; !ok {
				files[l.File] = len(f.files)
				f.files = append(f.files, ArchiveFile{Path: l.File, End: -1})
			}
		}
	}
	if err := file.Truncate(good); err != nil {
		file.Close()
		return err
	}
	if _, err := file.Seek(good, io.SeekStart); err != nil {
		file.Close()
		return err
	}
	f.state = &state{f: file}
	f.settled = int64(len(settled))
	for fp := range settled {
		f.seen[fp] = struct{}{}
	}
	for _, it := range order {
		fp := Fingerprint(it.URL)
		if _, ok := f.seen[fp]; ok {
			continue
		}
		f.seen[fp] = struct{}{}
		f.push(it)
	}
	return nil
}

// keyOf is a URL of the state in the crawl's form, without its password.
func (m *run) keyOf(raw string) string {
	if u, err := m.fromState(raw); err == nil {
		return stateURL(u)
	}
	return raw
}

// mendWARC makes an earlier run's WARC file hold exactly the records its
// state says it holds: a file with committed records is cut after the
// last of them (a killed run may have written more) and finished (its
// ".open" name dropped); a file begun with none is removed. The finished
// file gets its CDXJ index when w writes indexes.
func mendWARC(path string, end int64, w *warc.Writer) error {
	open := path + ".open"
	if end < 0 {
		if err := os.Remove(open); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	name := path
	if _, err := os.Stat(open); err == nil {
		name = open
	}
	fi, err := os.Stat(name)
	if err != nil {
		return fmt.Errorf("the state names %s: %w", path, err)
	}
	if fi.Size() < end {
		return fmt.Errorf("%s holds %d bytes; the state says %d were written", name, fi.Size(), end)
	}
	if fi.Size() > end {
		if err := os.Truncate(name, end); err != nil {
			return err
		}
		// An index made of the file before the cut lists records it no
		// longer holds: made again below.
		if err := os.Remove(warc.IndexName(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if name == open {
		if err := os.Rename(open, path); err != nil {
			return err
		}
	}
	if w != nil && w.Indexing() {
		if _, err := os.Stat(warc.IndexName(path)); errors.Is(err, fs.ErrNotExist) {
			return warc.Index(path)
		}
	}
	return nil
}

// errState wraps an error of the state file, or of a shared frontier's
// store: one that does not answer (fetch.ErrNetwork) or no longer holds
// the crawl (fetch.ErrProtocol) keeps its kind, and exit code.
func errState(err error) error {
	if errors.Is(err, fetch.ErrNetwork) || errors.Is(err, fetch.ErrProtocol) {
		return &fetch.Error{Op: "crawl", Err: fmt.Errorf("--state: %w", err)}
	}
	return &fetch.Error{Op: "crawl", Err: fetch.WriteError(fmt.Errorf("--state: %w", err))}
}
