package warc

import (
	"bytes"
	"sort"
	"strings"
	"time"
)

// URLRow is a URL of an archive as its collection's page lists it: its
// captures' count, the first's and last's times, and the last one's
// media type.
type URLRow struct {
	URL         string
	Mime        string
	Captures    int
	First, Last time.Time
	key         string // its index's key
	sortKey     string // the order rows of several indexes are merged in
}

// Browse lists up to n of the archive's URLs in key order (the order of
// its indexes: by host, then path), those beginning with prefix (all for
// ""): the first n after the URL after ("" from the first), or, with
// back, the n just before it. more says whether there are others past
// the rows given (after them, or, with back, before them). Each index is
// searched for where to start (a binary search of a CDXJ file, the
// blocks of a ZipNum one), and only the rows given and the next are
// read: a page costs the same at any depth of a collection of millions.
func (a *Archive) Browse(prefix, after string, back bool, n int) (rows []URLRow, more bool) {
	if n <= 0 {
		return nil, false
	}
	if back && after != "" {
		var before []URLRow
		for _, ix := range a.indexes {
			lf := ix.form()
			pk := prefixKey(lf, prefix)
			before = append(before, ix.before(lf, lf.keys(after)[0], pk, n+1)...)
		}
		before = mergeRows(before)
		if len(before) <= n {
			r, _ := a.browse(prefix, "", false, n) // the first page: none before it
			return r, false
		}
		start := before[len(before)-n]
		r, _ := a.browse(prefix, start.URL, true, n)
		return r, true
	}
	return a.browse(prefix, after, false, n)
}

// browse lists up to n URLs from the URL from on (itself included where
// inclusive), and whether there are more.
func (a *Archive) browse(prefix, from string, inclusive bool, n int) ([]URLRow, bool) {
	var all []URLRow
	for _, ix := range a.indexes {
		lf := ix.form()
		pk := prefixKey(lf, prefix)
		start := pk
		if from != "" {
			start = max(lf.keys(from)[0], pk)
		}
		var rows []URLRow
		ix.from(start, func(line string) bool {
			k, _, _ := strings.Cut(line, " ")
			if !strings.HasPrefix(k, pk) {
				return false
			}
			if from != "" && !inclusive && k == start {
				return true
			}
			c, ok := lf.capture(line)
			if !ok {
				return true
			}
			if len(rows) > 0 && rows[len(rows)-1].key == k {
				r := &rows[len(rows)-1]
				r.Captures++
				r.First, r.Last = minTime(r.First, c.Time), maxTime(r.Last, c.Time)
				if !c.Time.Before(r.Last) && c.Mime != "" {
					r.Mime = c.Mime
				}
				return true
			}
			if len(rows) == n+1 {
				return false
			}
			rows = append(rows, URLRow{URL: c.URL, Mime: c.Mime, Captures: 1, First: c.Time, Last: c.Time, key: k, sortKey: surt(c.URL)})
			return true
		})
		all = append(all, rows...)
	}
	all = mergeRows(all)
	if len(all) > n {
		return all[:n], true
	}
	return all, false
}

// mergeRows sorts rows of several indexes into one order, a URL that
// several hold made one row.
func mergeRows(rows []URLRow) []URLRow {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].sortKey < rows[j].sortKey })
	var out []URLRow
	for _, r := range rows {
		if len(out) > 0 && out[len(out)-1].sortKey == r.sortKey {
			o := &out[len(out)-1]
			o.Captures += r.Captures
			if r.Last.After(o.Last) && r.Mime != "" {
				o.Mime = r.Mime
			}
			o.First, o.Last = minTime(o.First, r.First), maxTime(o.Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return out
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// prefixKey is the key prefix of the URLs beginning with prefix, in an
// index of form lf: its key with the part that does not carry over cut
// (a SURT's closing "/" where the prefix named a host alone).
func prefixKey(lf *lineForm, prefix string) string {
	if prefix == "" {
		return ""
	}
	k := lf.keys(prefix)[0]
	if !strings.HasSuffix(prefix, "/") {
		k = strings.TrimSuffix(k, "/")
	}
	return k
}

// from calls fn with every line whose key is key or after it, in order,
// until fn returns false.
func (ix *sortedIndex) from(key string, fn func(line string) bool) {
	for off := ix.firstAt(key); off < ix.size; {
		l, err := ix.lineAt(off)
		if err != nil || !fn(l) {
			return
		}
		off += int64(len(l)) + 1
	}
}

// before is up to n URLs whose keys come just before key (and begin
// with prefix), in order: read backwards from key's place.
func (ix *sortedIndex) before(lf *lineForm, key, prefix string, n int) []URLRow {
	end := ix.firstAt(key)
	var rows []URLRow // newest first
	for end > 0 {
		start := ix.prevLineStart(end)
		l, err := ix.lineAt(start)
		if err != nil {
			break
		}
		end = start
		k, _, _ := strings.Cut(l, " ")
		if !strings.HasPrefix(k, prefix) {
			break
		}
		if len(rows) > 0 && rows[len(rows)-1].key == k {
			continue
		}
		if len(rows) == n {
			break
		}
		if c, ok := lf.capture(l); ok {
			rows = append(rows, URLRow{URL: c.URL, key: k, sortKey: surt(c.URL), First: c.Time, Last: c.Time, Captures: 1})
		}
	}
	for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
		rows[i], rows[j] = rows[j], rows[i]
	}
	return rows
}

// prevLineStart is where the line that ends just before end (a line's
// start) begins.
func (ix *sortedIndex) prevLineStart(end int64) int64 {
	buf := make([]byte, 4096)
	pos := end - 1 // the newline ending the line before
	for pos > 0 {
		from := max(0, pos-int64(len(buf)))
		n, _ := ix.r.ReadAt(buf[:pos-from], from)
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return from + int64(i) + 1
		}
		pos = from
	}
	return 0
}

// from calls fn with every line whose key is key or after it, in order,
// until fn returns false.
func (ix *zipnumIndex) from(key string, fn func(line string) bool) {
	i := sort.Search(len(ix.blocks), func(i int) bool { return ix.blocks[i].key >= key })
	if i > 0 {
		i--
	}
	last := ""
	for ; i < len(ix.blocks); i++ {
		stop := false
		if ix.block(i, func(l string) bool {
			k, _, _ := strings.Cut(l, " ")
			if k < key || l == last {
				return true
			}
			last = l
			if !fn(l) {
				stop = true
				return false
			}
			return true
		}) != nil || stop {
			return
		}
	}
}

// before is up to n URLs whose keys come just before key (and begin
// with prefix), in order: the blocks before key's read back one by one.
func (ix *zipnumIndex) before(lf *lineForm, key, prefix string, n int) []URLRow {
	i := sort.Search(len(ix.blocks), func(i int) bool { return ix.blocks[i].key >= key })
	var rows []URLRow // in order
	for b := min(i, len(ix.blocks)-1); b >= 0; b-- {
		var block []URLRow
		done := false
		ix.block(b, func(l string) bool {
			k, _, _ := strings.Cut(l, " ")
			if k >= key {
				return false
			}
			if !strings.HasPrefix(k, prefix) {
				return k < prefix // before the prefix's keys: on; past them: done
			}
			if len(block) > 0 && block[len(block)-1].key == k {
				return true
			}
			if c, ok := lf.capture(l); ok {
				block = append(block, URLRow{URL: c.URL, key: k, sortKey: surt(c.URL), First: c.Time, Last: c.Time, Captures: 1})
			}
			return true
		})
		if len(rows) > 0 && len(block) > 0 && block[len(block)-1].key == rows[0].key {
			block = block[:len(block)-1]
		}
		rows = append(block, rows...)
		if b > 0 && ix.blocks[b].key < prefix {
			done = true
		}
		if len(rows) >= n || done {
			break
		}
	}
	if len(rows) > n {
		rows = rows[len(rows)-n:]
	}
	return rows
}

// StartPages are up to n pages a person would start from: those its
// WACZ files list (pages/pages.jsonl), else, of its first 10,000 URLs,
// those of a kind a person opens (HTML pages, menus, folders, groups,
// searches, gemtext pages), the shortest URLs first.
func (a *Archive) StartPages(n int) []Page {
	var out []Page
	a.Pages(func(p Page) bool {
		out = append(out, p)
		return len(out) < n
	})
	if len(out) > 0 {
		return out
	}
	rows, _ := a.Browse("", "", false, 10000)
	for _, r := range rows {
		if pageTypes[r.Mime] || r.Mime == "text/plain" && strings.HasSuffix(r.URL, "/") {
			out = append(out, Page{URL: r.URL, Time: r.Last})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].URL) < len(out[j].URL) })
	if len(out) > n {
		out = out[:n]
	}
	return out
}
