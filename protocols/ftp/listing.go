package ftp

import (
	"strconv"
	"strings"
	"time"
)

// Line is one line of a directory listing, parsed as far as its format
// allows. A line no parser understands keeps Raw and Name (the whole line)
// and has Parsed false: listings never drop what they cannot read.
type Line struct {
	Raw    string
	Name   string
	Dir    bool
	Link   bool
	Target string // a link's target, when the listing gives it
	// Size is the file's size in bytes; -1 when unknown: for folders,
	// for links (a listing gives the link's own size, not its target's),
	// and for sizes beyond what an int64 holds (2^64-1 is seen from real
	// servers).
	Size int64
	// ModTime is zero when the listing gives no time, or an impossible one
	// (a three-digit year, month 13, February 30): never a wrong time.
	ModTime time.Time
	// Precision is how finely ModTime is known: time.Second (MLSD, EPLF),
	// time.Minute (a recent ls -l line, MS-DOS lines) or 24 hours (an
	// ls -l line with a year); 0 without a time.
	Precision time.Duration
	Parsed    bool
	Format    string // "mlsd", "unix", "dos", "eplf" or "" when not parsed
}

// ParseListing parses the lines of an MLSD or LIST reply. The entries "."
// and ".." and MLSD's cdir and pdir are left out.
//
// now is the server's clock: its Location is the zone in which ls -l and
// MS-DOS lines give their times (they name none; MLSD and EPLF times are
// UTC whatever it is), and a date without a year is placed in the year
// that puts it no later than a day after now, as ls shows the time of day
// only for files of the last six months.
func ParseListing(data string, mlsd bool, now time.Time) []Line {
	var out []Line
	for _, raw := range strings.Split(data, "\n") {
		raw = strings.TrimSuffix(raw, "\r")
		if strings.TrimSpace(raw) == "" {
			continue
		}
		var l Line
		var ok bool
		if mlsd {
			l, ok = parseMLSD(raw)
		} else {
			l, ok = parseEPLF(raw)
			if !ok {
				l, ok = parseUnix(raw, now)
			}
			if !ok {
				l, ok = parseDOS(raw, now.Location())
			}
		}
		if !ok {
			if strings.HasPrefix(raw, "total ") {
				continue // the block count of ls -l
			}
			l = Line{Raw: raw, Name: raw, Size: -1}
		}
		if l.Name == "." || l.Name == ".." {
			continue
		}
		out = append(out, l)
	}
	return out
}

// parseMLSD reads "fact=value;fact=value; name" (RFC 3659 §7).
func parseMLSD(raw string) (Line, bool) {
	facts, name, ok := strings.Cut(raw, " ")
	if !ok || name == "" {
		return Line{}, false
	}
	l := Line{Raw: raw, Name: name, Size: -1, Parsed: true, Format: "mlsd"}
	for _, f := range strings.Split(facts, ";") {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		switch strings.ToLower(k) {
		case "type":
			switch strings.ToLower(v) {
			case "dir":
				l.Dir = true
			case "cdir", "pdir":
				l.Name = "."
			}
			// OS.unix=symlink, or proftpd's OS.unix=slink:/target.
			kind, target, hasTarget := strings.Cut(v, ":")
			if k := strings.ToLower(kind); k == "os.unix=symlink" || k == "os.unix=slink" {
				l.Link = true
				if hasTarget {
					l.Target = target
				}
			}
		case "size", "sizd":
			l.Size = parseSize(v)
		case "modify":
			if t, err := time.Parse("20060102150405", v[:min(len(v), 14)]); err == nil {
				l.ModTime, l.Precision = t, time.Second
			}
		}
	}
	if l.Link || l.Dir {
		l.Size = -1 // a link's own size, a folder's sizd: not a file's size
	}
	return l, true
}

// parseSize reads a size field: -1 when it is not a number, or a number
// too large for an int64.
func parseSize(s string) int64 {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
		return n
	}
	return -1
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool { return s != "" && strings.TrimLeft(s, "0123456789") == "" }

// date builds a time from a listing's fields, or reports that they name
// no real moment (month 13, February 30, hour 24, a year before 1900).
func date(y int, mon time.Month, d, h, m int, loc *time.Location) (time.Time, bool) {
	if y < 1900 || y > 9999 || mon < 1 || mon > 12 || d < 1 || h < 0 || h > 23 || m < 0 || m > 59 {
		return time.Time{}, false
	}
	t := time.Date(y, mon, d, h, m, 0, 0, loc)
	if t.Day() != d {
		return time.Time{}, false // a day the month does not have
	}
	return t, true
}

// parseEPLF reads the Easily Parsed LIST Format: "+facts,\tname".
func parseEPLF(raw string) (Line, bool) {
	if !strings.HasPrefix(raw, "+") {
		return Line{}, false
	}
	facts, name, ok := strings.Cut(raw[1:], "\t")
	if !ok || name == "" {
		return Line{}, false
	}
	l := Line{Raw: raw, Name: name, Size: -1, Parsed: true, Format: "eplf"}
	for _, f := range strings.Split(facts, ",") {
		if f == "" {
			continue
		}
		switch f[0] {
		case '/':
			l.Dir = true
		case 's':
			l.Size = parseSize(f[1:])
		case 'm':
			if n, err := strconv.ParseInt(f[1:], 10, 64); err == nil {
				l.ModTime, l.Precision = time.Unix(n, 0).UTC(), time.Second
			}
		}
	}
	return l, true
}

var months = map[string]time.Month{
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
	"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}

// parseUnix reads an "ls -l" line:
//
//	-rw-r--r--    1 0        0             383 Jan 02  2020 README.txt
//	drwxr-xr-x   2 root     root         4096 Jan  2 03:04 pub
//	lrwxrwxrwx   1 0        0               7 Jan 02  2020 link -> target
//
// The name is whatever follows the time field's single separating space,
// so names with spaces survive. The line is found by its shape (a number,
// a month name, a day, then a year or a time of day); a size too large to
// hold or a date that cannot be leaves that field unknown, not the line.
func parseUnix(raw string, now time.Time) (Line, bool) {
	if len(raw) < 10 || strings.IndexByte("-dlbcps", raw[0]) < 0 {
		return Line{}, false
	}
	// Find "Mon DD HH:MM|YYYY name" from the left: the first month name
	// preceded by a number (the size).
	fields := fieldsWithPos(raw)
	for i := 2; i+3 < len(fields); i++ {
		mon, ok := months[strings.ToLower(fields[i].s)]
		if !ok || !isDigits(fields[i-1].s) {
			continue
		}
		day, err := strconv.Atoi(fields[i+1].s)
		if err != nil || len(fields[i+1].s) > 2 {
			continue
		}
		tf := fields[i+2].s
		var t time.Time
		var prec time.Duration
		if hh, mm, ok := strings.Cut(tf, ":"); ok {
			if !isDigits(hh) || !isDigits(mm) || len(hh) > 2 || len(mm) != 2 {
				continue
			}
			h, _ := strconv.Atoi(hh)
			m, _ := strconv.Atoi(mm)
			y := now.Year()
			if t, ok = date(y, mon, day, h, m, now.Location()); ok {
				if t.After(now.Add(24 * time.Hour)) {
					t, ok = date(y-1, mon, day, h, m, now.Location())
				}
			}
			if ok {
				prec = time.Minute
			}
		} else {
			if !isDigits(tf) {
				continue
			}
			y, _ := strconv.Atoi(tf)
			if len(tf) == 4 {
				if t, ok = date(y, mon, day, 0, 0, now.Location()); ok {
					prec = 24 * time.Hour
				}
			}
		}
		name := raw[fields[i+2].end:]
		if len(name) > 0 && name[0] == ' ' {
			name = name[1:]
		}
		l := Line{Raw: raw, Name: name, Size: parseSize(fields[i-1].s), ModTime: t, Precision: prec, Parsed: true, Format: "unix"}
		switch raw[0] {
		case 'd':
			l.Dir, l.Size = true, -1
		case 'l':
			l.Link, l.Size = true, -1
			if n, t, ok := strings.Cut(name, " -> "); ok {
				l.Name, l.Target = n, t
			}
		}
		if l.Name == "" {
			return Line{}, false
		}
		return l, true
	}
	return Line{}, false
}

// parseDOS reads an MS-DOS/Windows (IIS) line:
//
//	01-02-20  03:04AM       <DIR>          pub
//	01-02-2020  03:04PM                383 README.txt
//
// A line of that shape whose date cannot be (month 13) keeps its name,
// kind and size, with no time.
func parseDOS(raw string, loc *time.Location) (Line, bool) {
	fields := fieldsWithPos(raw)
	if len(fields) < 4 || !dosShape(fields[0].s, "NN-NN-NN", "NN-NN-NNNN") || !dosShape(fields[1].s, "NN:NNAM", "NN:NNPM", "N:NNAM", "N:NNPM") {
		return Line{}, false
	}
	l := Line{Raw: raw, Size: -1, Parsed: true, Format: "dos"}
	for _, layout := range []string{"01-02-06 3:04PM", "01-02-2006 3:04PM"} {
		if t, err := time.ParseInLocation(layout, fields[0].s+" "+fields[1].s, loc); err == nil {
			l.ModTime, l.Precision = t, time.Minute
			break
		}
	}
	if strings.EqualFold(fields[2].s, "<DIR>") {
		l.Dir = true
	} else if isDigits(fields[2].s) {
		l.Size = parseSize(fields[2].s)
	} else {
		return Line{}, false
	}
	l.Name = raw[fields[3].start:]
	return l, true
}

// dosShape reports whether s has one of the shapes, where N stands for a
// digit and other bytes for themselves, case aside.
func dosShape(s string, shapes ...string) bool {
	for _, sh := range shapes {
		if len(sh) != len(s) {
			continue
		}
		ok := true
		for i := 0; i < len(s) && ok; i++ {
			if sh[i] == 'N' {
				ok = s[i] >= '0' && s[i] <= '9'
			} else {
				ok = s[i] == sh[i] || s[i]|0x20 == sh[i]|0x20
			}
		}
		if ok {
			return true
		}
	}
	return false
}

type field struct {
	s          string
	start, end int
}

func fieldsWithPos(s string) []field {
	var out []field
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			break
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		out = append(out, field{s[i:j], i, j})
		i = j
	}
	return out
}
