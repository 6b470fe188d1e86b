package byterange

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		h    string
		want Range
		ok   bool
	}{
		{"bytes=0-9999", Range{First: 0, Last: 9999}, true},
		{"bytes=100-", Range{First: 100, Last: -1}, true},
		{"bytes=-500", Range{Last: -1, Suffix: 500}, true},
		{"Bytes = 5 - 7", Range{}, false}, // no space is allowed around "="
		{"BYTES=5-7", Range{First: 5, Last: 7}, true},
		{"bytes=5 - 7", Range{First: 5, Last: 7}, true},
		{"bytes=7-5", Range{}, false},
		{"bytes=-0", Range{}, false},
		{"bytes=0-1,5-6", Range{}, false},
		{"bytes=-", Range{}, false},
		{"bytes=+1-2", Range{}, false},
		{"items=0-1", Range{}, false},
		{"", Range{}, false},
		{"bytes=99999999999999999999-", Range{}, false},
	} {
		got, ok := Parse(tc.h)
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, %v", tc.h, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBounds(t *testing.T) {
	for _, tc := range []struct {
		r           Range
		total       int64
		first, last int64
		ok          bool
	}{
		{Range{First: 0, Last: 9999}, 500, 0, 499, true},
		{Range{First: 100, Last: 199}, 500, 100, 199, true},
		{Range{First: 100, Last: -1}, 500, 100, 499, true},
		{Range{First: 500, Last: -1}, 500, 0, -1, false},
		{Range{Suffix: 50, Last: -1}, 500, 450, 499, true},
		{Range{Suffix: 5000, Last: -1}, 500, 0, 499, true},
		{Range{Suffix: 1, Last: -1}, 0, 0, -1, false},
	} {
		first, last, ok := tc.r.Bounds(tc.total)
		if first != tc.first || last != tc.last || ok != tc.ok {
			t.Errorf("%+v.Bounds(%d) = %d, %d, %v; want %d, %d, %v", tc.r, tc.total, first, last, ok, tc.first, tc.last, tc.ok)
		}
	}
}

func TestIfRange(t *testing.T) {
	mod := time.Date(2026, 11, 30, 10, 0, 0, 500e6, time.UTC)
	date := mod.Format(http.TimeFormat)
	for _, tc := range []struct {
		h    string
		mod  time.Time
		etag string
		want bool
	}{
		{"", time.Time{}, "", true},
		{date, mod, "", true},
		{mod.Add(time.Second).Format(http.TimeFormat), mod, "", false},
		{mod.Add(-time.Hour).Format(http.TimeFormat), mod, "", false},
		{date, time.Time{}, "", false}, // no date to match: the whole object
		{"not a date", mod, "", false},
		{`"abc"`, mod, `"abc"`, true},
		{`"abc"`, mod, `"abd"`, false},
		{`W/"abc"`, mod, `W/"abc"`, false}, // weak tags never match for a range
		{`"abc"`, mod, `W/"abc"`, false},
		{`"abc"`, mod, "", false},
	} {
		if got := IfRange(tc.h, tc.mod, tc.etag); got != tc.want {
			t.Errorf("IfRange(%q, %v, %q) = %v, want %v", tc.h, tc.mod, tc.etag, got, tc.want)
		}
	}
}

func TestCut(t *testing.T) {
	obj := "0123456789"
	for _, tc := range []struct {
		from, size, first, last int64
		want                    string
		total                   int64
		err                     error
	}{
		{0, 10, 2, 4, "234", 10, nil},
		{0, -1, 2, 4, "234", -1, nil}, // more follows, of a length not known
		{0, -1, 2, 9, "23456789", 10, nil},
		{0, -1, 2, 20, "23456789", 10, nil},
		{0, -1, 2, -1, "23456789", 10, nil},
		{2, 8, 2, 4, "234", 10, nil}, // resumed by the server at 2
		{0, 10, 10, -1, "", 10, ErrPastEnd},
		{0, -1, 10, -1, "", 10, ErrPastEnd},
		{0, -1, 15, 20, "", 10, ErrPastEnd},
	} {
		p, err := Cut(strings.NewReader(obj[tc.from:]), tc.from, tc.size, tc.first, tc.last)
		if err != tc.err || p.Total != tc.total {
			t.Errorf("Cut(%+v): total %d, %v", tc, p.Total, err)
			continue
		}
		if err == nil {
			b, _ := io.ReadAll(p.Body)
			p.Close()
			if string(b) != tc.want || p.Last-p.First+1 != int64(len(tc.want)) {
				t.Errorf("Cut(%+v): %q, %d-%d", tc, b, p.First, p.Last)
			}
		}
	}
	p, err := Suffix(strings.NewReader(obj), 3)
	b, _ := io.ReadAll(p.Body)
	if err != nil || string(b) != "789" || p.First != 7 || p.Last != 9 || p.Total != 10 {
		t.Errorf("Suffix 3: %q %+v %v", b, p, err)
	}
	p.Close()
	if _, err := Suffix(strings.NewReader(""), 3); err != ErrPastEnd {
		t.Errorf("Suffix of nothing: %v", err)
	}
}
