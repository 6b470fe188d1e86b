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

// openState reads the state file, if there is one, into m, mends the WARC
// files it names (see mendWARC) and opens it for appending. It returns
// the jobs an earlier run queued and did not settle, in the order queued.
func (m *run) openState(path string) ([]job, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	type queuedJob struct {
		raw   string
		depth int
		plus  bool
	}
	var order []queuedJob
	settled := map[string]bool{}
	files := map[string]int64{} // WARC file -> where its committed records end; -1: none
	var fileOrder []string
	good := int64(0) // where the last whole line ends
	rd := bufio.NewReader(f)
	for {
		line, err := rd.ReadBytes('\n')
		if err != nil {
			if err != io.EOF {
				f.Close()
				return nil, err
			}
			break // a last line cut short is dropped
		}
		var l stateLine
		if json.Unmarshal(bytes.TrimSpace(line), &l) != nil {
			f.Close()
			return nil, fmt.Errorf("%s: line at byte %d is not a crawl's state", path, good)
		}
		good += int64(len(line))
		switch {
		case l.Start != "":
			order = append(order, queuedJob{l.Start, 0, false})
		case l.URL != "":
			settled[l.URL] = true
			plus := map[string]bool{}
			for _, k := range l.Plus {
				plus[k] = true
			}
			for _, k := range l.Links {
				order = append(order, queuedJob{k, l.Depth + 1, plus[k]})
			}
			if l.File != "" {
				if _, ok := files[l.File]; !ok {
					fileOrder = append(fileOrder, l.File)
				}
				files[l.File] = l.At
			}
		case l.Robots != "":
			m.robots[l.Robots] = newRobots(l.Allow, l.Disallow)
		case l.File != "":
			if _, ok := files[l.File]; !ok {
				files[l.File] = -1
				fileOrder = append(fileOrder, l.File)
			}
		}
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	m.state = &state{f: f}
	for _, p := range fileOrder {
		if err := mendWARC(p, files[p], m.archive); err != nil {
			f.Close()
			return nil, err
		}
	}
	var frontier []job
	for raw := range settled {
		m.seen[m.keyOf(raw)] = true
	}
	m.report.Resumed = len(settled)
	for _, q := range order {
		u, err := m.fromState(q.raw)
		if err != nil {
			continue
		}
		key := u.String()
		if m.seen[key] {
			continue
		}
		m.seen[key] = true
		frontier = append(frontier, job{u: u, depth: q.depth, plus: q.plus})
	}
	return frontier, nil
}

// keyOf is the seen-set key of a URL of the state.
func (m *run) keyOf(raw string) string {
	if u, err := m.fromState(raw); err == nil {
		return u.String()
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

// errState wraps an error of the state file.
func errState(err error) error {
	return &fetch.Error{Op: "crawl", Err: fetch.WriteError(fmt.Errorf("--state: %w", err))}
}
