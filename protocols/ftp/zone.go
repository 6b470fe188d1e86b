package ftp

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// The zone of a server's LIST times.
//
// An ls -l or MS-DOS listing gives times in the server's local time and
// names no zone, while MDTM gives UTC (RFC 3659 §2.3). On a server's
// first listing in those forms, the Fetcher asks MDTM for one file the
// listing gives to the minute and takes the difference, rounded to a
// quarter of an hour, as the zone of every LIST time of that server.
// Fetcher.TimeZone names the zone instead; the probe then only checks
// whether the server's MDTM times are local too (vsftpd's use_localtime),
// and reads them in that zone as well when they are.

// zoneState is what a Fetcher has found of one server's clock.
type zoneState struct {
	list      *time.Location // the zone of its LIST times
	mdtmLocal bool           // its MDTM times are wall-clock times in TimeZone, against RFC 3659
}

// maxZoneOffset bounds the offsets taken for a zone: UTC-12 to UTC+14 are
// the zones there are.
const maxZoneOffset = 14 * time.Hour

// serverZone returns what is known of the clock of the server at addr,
// and whether anything is.
func (f *Fetcher) serverZone(addr string) (zoneState, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	z, ok := f.zones[addr]
	return z, ok
}

func (f *Fetcher) setServerZone(addr string, z zoneState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.zones == nil {
		f.zones = make(map[string]zoneState)
	}
	f.zones[addr] = z
}

// listZone returns the zone in which to read the LIST times of the
// server at addr, and whether its clock has still to be probed.
func (f *Fetcher) listZone(addr string) (*time.Location, bool) {
	z, known := f.serverZone(addr)
	switch {
	case f.TimeZone != nil:
		return f.TimeZone, !known
	case known:
		return z.list, false
	}
	return time.UTC, true
}

// mdtmTime corrects an MDTM time of the server at addr that the probe
// found to be a local wall-clock time in TimeZone.
func (f *Fetcher) mdtmTime(addr string, t time.Time) time.Time {
	if f.TimeZone == nil {
		return t
	}
	if z, ok := f.serverZone(addr); !ok || !z.mdtmLocal {
		return t
	}
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), f.TimeZone)
}

// probeZone compares one file's LIST time, read in loc, with its MDTM
// time on s, still in the listed folder. It reports false when the
// listing has no file timed to the minute, to try again on the next
// listing; the state it returns is then to be remembered for the server.
func (f *Fetcher) probeZone(s *session, req *protocols.Request, lines []Line, loc *time.Location) (zoneState, bool) {
	var probe *Line
	for i := range lines {
		l := &lines[i]
		if l.Parsed && !l.Dir && !l.Link && l.Precision == time.Minute && url.CheckArg("name", l.Name) == nil {
			probe = l
			break
		}
	}
	if probe == nil {
		return zoneState{}, false
	}
	given := f.TimeZone != nil
	if !s.c.IsGetTimeSupported() {
		if !given {
			req.Tracef(protocols.TraceInfo, "LIST times taken as UTC: the server has no MDTM to compare them with")
		}
		return zoneState{list: loc}, true
	}
	mt, err := s.c.GetTime(probe.Name)
	if err != nil {
		if !given {
			req.Tracef(protocols.TraceInfo, fmt.Sprintf("LIST times taken as UTC: no MDTM time for %q to compare with", probe.Name))
		}
		return zoneState{list: loc}, true
	}
	lt := probe.ModTime.In(loc)
	wall := time.Date(lt.Year(), lt.Month(), lt.Day(), lt.Hour(), lt.Minute(), 0, 0, time.UTC)
	diff := wall.Sub(mt) // in (offset-1m, offset]: LIST drops the seconds
	off := diff.Round(15 * time.Minute)
	if d := diff - off; d < -2*time.Minute || d > 2*time.Minute || off < -maxZoneOffset || off > maxZoneOffset {
		req.Tracef(protocols.TraceInfo, fmt.Sprintf("LIST times taken as %s: LIST gave %s for %q and MDTM %s, %s apart, which is no time zone",
			zoneName(loc, lt), wall.Format("2006-01-02 15:04"), probe.Name, mt.UTC().Format(time.RFC3339), diff))
		return zoneState{list: loc}, true
	}
	if given {
		if _, zoff := lt.Zone(); off == 0 && zoff != 0 {
			req.Tracef(protocols.TraceInfo, fmt.Sprintf("MDTM times are local like LIST times (MDTM %s for %q, RFC 3659 says UTC): both read in %s",
				mt.UTC().Format("2006-01-02 15:04:05"), probe.Name, zoneName(loc, lt)))
			return zoneState{list: loc, mdtmLocal: true}, true
		}
		return zoneState{list: loc}, true
	}
	if off == 0 {
		req.Tracef(protocols.TraceInfo, fmt.Sprintf("LIST times are UTC: LIST and MDTM agree on %q", probe.Name))
		return zoneState{list: time.UTC}, true
	}
	z := time.FixedZone(offsetName(off), int(off/time.Second))
	req.Tracef(protocols.TraceInfo, fmt.Sprintf("LIST times are %s: LIST gave %s for %q and MDTM %s; every LIST time of this server is read in %s",
		z, wall.Format("2006-01-02 15:04"), probe.Name, mt.UTC().Format(time.RFC3339), z))
	return zoneState{list: z}, true
}

// zoneName names loc as it stands at t: its name, with the offset when
// the name does not say it.
func zoneName(loc *time.Location, t time.Time) string {
	name, off := t.In(loc).Zone()
	on := offsetName(time.Duration(off) * time.Second)
	if name == on || loc.String() == on {
		return on
	}
	return loc.String() + " (" + on + ")"
}

// offsetName writes an offset from UTC as "UTC+05:00", or "UTC".
func offsetName(off time.Duration) string {
	if off == 0 {
		return "UTC"
	}
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	m := int(off / time.Minute)
	return fmt.Sprintf("UTC%c%02d:%02d", sign, m/60, m%60)
}

// ParseZone reads a zone as --ftp-timezone takes it: an IANA name
// ("Asia/Karachi", "Europe/Berlin"), "UTC" or "Z", or an offset from UTC
// ("+05:00", "-0330", "+5", "UTC+5", "UTC-03:30").
func ParseZone(s string) (*time.Location, error) {
	t := strings.TrimSpace(s)
	switch strings.ToUpper(t) {
	case "UTC", "Z", "GMT":
		return time.UTC, nil
	}
	off := t
	if u := strings.ToUpper(t); strings.HasPrefix(u, "UTC") || strings.HasPrefix(u, "GMT") {
		off = t[3:]
	}
	if off != "" && (off[0] == '+' || off[0] == '-') {
		d, ok := parseOffset(off[1:])
		if !ok || d > maxZoneOffset {
			return nil, fmt.Errorf("%q is not an offset from UTC (+HH:MM, -HHMM or +H)", s)
		}
		if off[0] == '-' {
			d = -d
		}
		return time.FixedZone(offsetName(d), int(d/time.Second)), nil
	}
	if t == "" || t == "Local" || strings.ContainsAny(t, " \t\r\n") {
		return nil, fmt.Errorf("%q is not a time zone", s)
	}
	loc, err := time.LoadLocation(t)
	if err != nil {
		return nil, fmt.Errorf("%q is not a time zone this system knows (an IANA name such as Asia/Karachi, or an offset such as +05:00)", s)
	}
	return loc, nil
}

// parseOffset reads HH:MM, HHMM, HH or H.
func parseOffset(s string) (time.Duration, bool) {
	h, m := s, "0"
	switch {
	case strings.Contains(s, ":"):
		h, m, _ = strings.Cut(s, ":")
		if len(m) != 2 {
			return 0, false
		}
	case len(s) == 4:
		h, m = s[:2], s[2:]
	}
	if !isDigits(h) || len(h) > 2 || !isDigits(m) {
		return 0, false
	}
	hn, _ := strconv.Atoi(h)
	mn, _ := strconv.Atoi(m)
	if mn > 59 {
		return 0, false
	}
	return time.Duration(hn)*time.Hour + time.Duration(mn)*time.Minute, true
}
