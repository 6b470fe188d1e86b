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
	Raw     string
	Name    string
	Dir     bool
	Link    bool
	Target  string // a link's target, when the listing gives it
	Size    int64  // -1 when unknown
	ModTime time.Time
	Parsed  bool
	Format  string // "mlsd", "unix", "dos", "eplf" or "" when not parsed
}

// ParseListing parses the lines of an MLSD or LIST reply. now anchors Unix
// dates that give a time instead of a year. The entries "." and ".." and
// MLSD's cdir and pdir are left out.
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
				l, ok = parseDOS(raw)
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
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				l.Size = n
			}
		case "modify":
			if t, err := time.Parse("20060102150405", v[:min(len(v), 14)]); err == nil {
				l.ModTime = t
			}
		}
	}
	return l, true
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
			if n, err := strconv.ParseInt(f[1:], 10, 64); err == nil {
				l.Size = n
			}
		case 'm':
			if n, err := strconv.ParseInt(f[1:], 10, 64); err == nil {
				l.ModTime = time.Unix(n, 0).UTC()
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
// so names with spaces survive.
func parseUnix(raw string, now time.Time) (Line, bool) {
	if len(raw) < 10 || strings.IndexByte("-dlbcps", raw[0]) < 0 {
		return Line{}, false
	}
	// Find "Mon DD HH:MM|YYYY name" from the left: the first month name
	// preceded by a number (the size).
	fields := fieldsWithPos(raw)
	for i := 2; i+3 < len(fields); i++ {
		mon, ok := months[strings.ToLower(fields[i].s)]
		if !ok {
			continue
		}
		size, err := strconv.ParseInt(fields[i-1].s, 10, 64)
		if err != nil {
			continue
		}
		day, err := strconv.Atoi(fields[i+1].s)
		if err != nil || day < 1 || day > 31 {
			continue
		}
		tf := fields[i+2].s
		var t time.Time
		if hh, mm, ok := strings.Cut(tf, ":"); ok {
			h, err1 := strconv.Atoi(hh)
			m, err2 := strconv.Atoi(mm)
			if err1 != nil || err2 != nil {
				continue
			}
			y := now.Year()
			t = time.Date(y, mon, day, h, m, 0, 0, time.UTC)
			if t.After(now.Add(24 * time.Hour)) {
				t = t.AddDate(-1, 0, 0)
			}
		} else {
			y, err := strconv.Atoi(tf)
			if err != nil {
				continue
			}
			t = time.Date(y, mon, day, 0, 0, 0, 0, time.UTC)
		}
		name := raw[fields[i+2].end:]
		if len(name) > 0 && name[0] == ' ' {
			name = name[1:]
		}
		l := Line{Raw: raw, Name: name, Size: size, ModTime: t, Parsed: true, Format: "unix"}
		switch raw[0] {
		case 'd':
			l.Dir, l.Size = true, -1
		case 'l':
			l.Link = true
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
func parseDOS(raw string) (Line, bool) {
	fields := fieldsWithPos(raw)
	if len(fields) < 4 {
		return Line{}, false
	}
	t, err := time.Parse("01-02-06 03:04PM", fields[0].s+" "+fields[1].s)
	if err != nil {
		if t, err = time.Parse("01-02-2006 03:04PM", fields[0].s+" "+fields[1].s); err != nil {
			return Line{}, false
		}
	}
	l := Line{Raw: raw, ModTime: t, Size: -1, Parsed: true, Format: "dos"}
	if strings.EqualFold(fields[2].s, "<DIR>") {
		l.Dir = true
	} else if n, err := strconv.ParseInt(fields[2].s, 10, 64); err == nil {
		l.Size = n
	} else {
		return Line{}, false
	}
	l.Name = raw[fields[3].start:]
	return l, true
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
