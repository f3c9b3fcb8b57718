package copyenc

import (
	"strings"
	"testing"
	"time"
)

// newYork is a session like a psql session on a database whose TimeZone
// is America/New_York, with a few of the server's abbreviations.
func newYork(t testing.TB, zone string) *Zones {
	t.Helper()
	z, err := NewZones(ZonesConfig{Session: zone, Abbrevs: append([]Abbrev{
		{Name: "EST", Offset: -5 * 3600}, {Name: "EDT", Offset: -4 * 3600, IsDST: true},
		{Name: "MSK", Offset: 3 * 3600, Dynamic: true},
	}, utcAbbrevs...)})
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// TestSessionZoneReading pins values found by the differential test and
// the DST cases, with the server's answers (SELECT $1::timestamptz in a
// session with that TimeZone).
func TestSessionZoneReading(t *testing.T) {
	utc := func(s string) int64 {
		tm, err := time.Parse("2006-01-02 15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixMicro()
	}
	for _, tc := range []struct {
		zone, in, want string // want: UTC, or "!" and a reason substring
	}{
		{"America/New_York", "2024-03-10 02:30", "2024-03-10 07:30:00"}, // spring-forward gap: 03:30 EDT
		{"America/New_York", "2024-03-10 01:59:59", "2024-03-10 06:59:59"},
		{"America/New_York", "2024-03-10 03:00", "2024-03-10 07:00:00"},
		{"America/New_York", "2024-11-03 01:30", "2024-11-03 06:30:00"}, // fall-back overlap: the later, EST, instant
		{"America/New_York", "2024-11-03 00:59:59", "2024-11-03 04:59:59"},
		{"America/New_York", "2024-11-03 02:00", "2024-11-03 07:00:00"},
		{"America/New_York", "1883-11-18 12:00", "1883-11-18 17:00:00"},
		{"America/New_York", "1800-01-01 00:00", "1800-01-01 04:56:02"}, // local mean time
		{"America/New_York", "2100-07-01 12:00", "2100-07-01 16:00:00"}, // past the tzdata table: the rule
		{"America/New_York", "2024-01-02 06:37:14.", "2024-01-02 11:37:14"},
		{"America/New_York", "2026-11-22 7:12:05AM-06:45", "2026-11-22 00:27:05"}, // "AM-06:45" is a POSIX zone
		{"America/New_York", "2024-01-01 10:00 est dst", "2024-01-01 14:00:00"},
		{"America/New_York", "01/02/03", "2003-01-02 05:00:00"},
		{"America/New_York", "J2451545 12:00", "2000-01-01 17:00:00"},
		{"America/New_York", "1955-12-04-02", "!invalid input syntax"}, // one date field, not a zone
		{"America/New_York", "5874897-12-28", "!out of range"},
		{"America/New_York", "2024-01-01 10:00 MSK", "!offset depends on the date"},
		{"America/New_York", "2024-01-01 10:00 EST5EDT1", "!daylight-saving rules"},
		{"America/New_York", "now", "!current time"},
		{"Australia/Lord_Howe", "2024-04-07 01:45", "2024-04-06 15:15:00"}, // half-hour overlap
		{"Australia/Lord_Howe", "2024-10-06 02:15", "2024-10-05 15:45:00"}, // half-hour gap
		{"Australia/Lord_Howe", "2024-10-06 02:30", "2024-10-05 15:30:00"},
		{"<+05>-05", "2024-01-01 10:00", "2024-01-01 05:00:00"},
	} {
		got, err := newYork(t, tc.zone).ParseTimestamp([]byte(tc.in))
		if r, ok := strings.CutPrefix(tc.want, "!"); ok {
			if err == nil || !strings.Contains(err.Error(), r) {
				t.Errorf("%s %q: %d, %v; want an error with %q", tc.zone, tc.in, got, err, r)
			}
			continue
		}
		if err != nil || got != utc(tc.want) {
			t.Errorf("%s %q = %v, %v; want %s", tc.zone, tc.in, time.UnixMicro(got).UTC(), err, tc.want)
		}
	}
}

// TestDateOrder: DateStyle's order decides ambiguous dates.
func TestDateOrder(t *testing.T) {
	for _, tc := range []struct {
		order DateOrder
		want  string
	}{{MDY, "2003-01-02"}, {DMY, "2003-02-01"}, {YMD, "2001-02-03"}} {
		z, err := NewZones(ZonesConfig{DateOrder: tc.order})
		if err != nil {
			t.Fatal(err)
		}
		d, err := z.ParseDate([]byte("01/02/03"))
		if got := time.Unix(int64(d)*86400, 0).UTC().Format("2006-01-02"); err != nil || got != tc.want {
			t.Errorf("order %d: %s, %v; want %s", tc.order, got, err, tc.want)
		}
	}
}

// TestAlwaysUTC: zones whose offset is zero at every time are read as the
// fixed zone "utc" is; a zone with a history, or a fixed offset other
// than zero, keeps its location.
func TestAlwaysUTC(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{{"UTC", true}, {"Etc/UTC", true}, {"Zulu", true}, {"Etc/GMT+5", false}, {"Europe/London", false}, {"America/New_York", false}} {
		loc, err := time.LoadLocation(tc.name)
		if err != nil {
			t.Skipf("no tzdata for %s: %v", tc.name, err)
		}
		if got := alwaysUTC(loc); got != tc.want {
			t.Errorf("alwaysUTC(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
	z, err := NewZones(ZonesConfig{Session: "Etc/UTC", Names: []string{"Etc/UTC"}})
	if err != nil {
		t.Fatal(err)
	}
	if z.session.loc != nil || z.session.fixed != 0 {
		t.Errorf("session Etc/UTC read as %+v, want the fixed zone", z.session)
	}
	for in, want := range map[string]int64{
		"2024-03-10 02:30":    time.Date(2024, 3, 10, 2, 30, 0, 0, time.UTC).UnixMicro(),
		"1800-01-01 00:00":    time.Date(1800, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro(),
		"4714-11-24 00:00 BC": time.Date(-4713, 11, 24, 0, 0, 0, 0, time.UTC).UnixMicro(),
	} {
		if got, err := z.ParseTimestamp([]byte(in)); err != nil || got != want {
			t.Errorf("%q = %d, %v; want %d", in, got, err, want)
		}
	}
}
