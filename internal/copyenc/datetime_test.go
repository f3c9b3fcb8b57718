package copyenc

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func unixMicro(y int, m time.Month, d, h, mi, s, us int) int64 {
	return time.Date(y, m, d, h, mi, s, us*1000, time.UTC).UnixMicro()
}

func TestParseTimestamp(t *testing.T) {
	base := unixMicro(2024, 1, 2, 3, 4, 5, 0)
	tests := []struct {
		in   string
		want int64
	}{
		{"2024-01-02", unixMicro(2024, 1, 2, 0, 0, 0, 0)},
		{"2024-01-02 03:04", unixMicro(2024, 1, 2, 3, 4, 0, 0)},
		{"2024-01-02T03:04", unixMicro(2024, 1, 2, 3, 4, 0, 0)},
		{"2024-01-02 03:04:05", base},
		{"2024-01-02T03:04:05", base},
		{"2024-01-02t03:04:05", base},
		{"2024-01-02  \t03:04:05", base},
		{"  2024-01-02 03:04:05 \n", base},
		{"2024-1-2 3:4:5", base},
		{"2024-01-02 03:04:05Z", base},
		{"2024-01-02 03:04:05z", base},
		{"2024-01-02 03:04:05 Z", base},
		{"2024-01-02 03:04:05 UTC", base},
		{"2024-01-02 03:04:05utc", base},
		{"2024-01-02 03:04:05+00", base},
		{"2024-01-02 03:04:05-00", base},
		{"2024-01-02 05:04:05+02", base},
		{"2024-01-02 05:34:05+0230", base},
		{"2024-01-02 05:34:05+02:30", base},
		{"2024-01-02 05:34:05 +02:30", base},
		{"2024-01-02 00:34:05-02:30", base},
		{"2024-01-02 19:04:06+15:59:59", base + 2_000000},
		{"2024-01-02 03:04:05.5", base + 500000},
		{"2024-01-02 03:04:05.000001", base + 1},
		{"2024-01-02 03:04:05.123456Z", base + 123456},
		{"2024-01-02 03:04:05.1234564", base + 123456},
		{"2024-01-02 03:04:05.1234566", base + 123457},
		{"2024-01-02 03:04:05.123456789+00", base + 123457},
		// rint(strtod(".0000005") * 1e6) and friends, as PostgreSQL computes them
		{"2000-01-01 00:00:00.0000005", unixMicro(2000, 1, 1, 0, 0, 0, 0)},
		{"2000-01-01 00:00:00.0000015", unixMicro(2000, 1, 1, 0, 0, 0, 2)},
		{"2000-01-01 00:00:00.0000025", unixMicro(2000, 1, 1, 0, 0, 0, 2)},
		{"2024-01-01 23:59:59.9999996", unixMicro(2024, 1, 2, 0, 0, 0, 0)},
		{"2024-01-01 24:00:00", unixMicro(2024, 1, 2, 0, 0, 0, 0)},
		{"2024-12-31 24:00", unixMicro(2025, 1, 1, 0, 0, 0, 0)},
		{"2024-01-01 24:00:00.0000004", unixMicro(2024, 1, 2, 0, 0, 0, 0)},
		{"2024-02-29 12:00", unixMicro(2024, 2, 29, 12, 0, 0, 0)},
		{"2000-02-29", unixMicro(2000, 2, 29, 0, 0, 0, 0)},
		{"1969-12-31 23:59:59.999999", -1},
		{"1900-02-28 12:00:00.5", -2203934399_500000},
		{"0001-01-01 00:00:00", -62135596800_000000},
		{"9999-12-31 23:59:59.999999", unixMicro(9999, 12, 31, 23, 59, 59, 999999)},
		{"10000-01-01", 253402300800_000000},
		{"0002024-01-02 03:04:05", base},
		{"0044-03-15 12:00:00 BC", -63517780800_000000},
		{"0044-03-15 14:00:00+02 bc", -63517780800_000000},
		{"0001-01-01 BC", -62167219200_000000},
		{"0001-02-29 00:00 BC", -62167219200_000000 + 59*86400_000000}, // 1 BC is a leap year
		{"4714-11-24 00:00:00 BC", -210866803200_000000},
		{"294246-12-31 00:00:00", unixMicro(294246, 12, 31, 0, 0, 0, 0)},
		{"infinity", InfinityMicros},
		{" INFINITY ", InfinityMicros},
		// the other spellings of PostgreSQL's datetime input, with the server's values
		{"024-01-02", unixMicro(24, 1, 2, 0, 0, 0, 0)},
		{"2024/01/02", unixMicro(2024, 1, 2, 0, 0, 0, 0)},
		{"20240102", unixMicro(2024, 1, 2, 0, 0, 0, 0)},
		{"2024-01-002", unixMicro(2024, 1, 2, 0, 0, 0, 0)},
		{"2024-01-02 12:34.5", unixMicro(2024, 1, 2, 0, 12, 34, 500000)},
		{"2024-01-02 23:59:60", unixMicro(2024, 1, 3, 0, 0, 0, 0)},
		{"2024-01-02 10:00:00.", unixMicro(2024, 1, 2, 10, 0, 0, 0)},
		{"2024-01-02 10:00:00+5", unixMicro(2024, 1, 2, 5, 0, 0, 0)},
		{"2024-01-02 10:00:00+05:3", unixMicro(2024, 1, 2, 4, 57, 0, 0)},
		{"2024-01-02 10:00:00+053", unixMicro(2024, 1, 2, 9, 7, 0, 0)},
		{"2024-01-02 10:00:00 AD", unixMicro(2024, 1, 2, 10, 0, 0, 0)},
		{"2024-01-02Z", unixMicro(2024, 1, 2, 0, 0, 0, 0)},
		{"epoch", 0},
		{"Jan 2 2024", unixMicro(2024, 1, 2, 0, 0, 0, 0)},
		{"2 Jan 2024", unixMicro(2024, 1, 2, 0, 0, 0, 0)},
		{"Tuesday, January 2, 2024 10:00 PM", unixMicro(2024, 1, 2, 22, 0, 0, 0)},
		{"1/2/24", unixMicro(2024, 1, 2, 0, 0, 0, 0)},
		{"J2451545", unixMicro(2000, 1, 1, 0, 0, 0, 0)},
		{"J2451545.5", unixMicro(2000, 1, 1, 12, 0, 0, 0)},
		{"2024-01-02 allballs", unixMicro(2024, 1, 2, 0, 0, 0, 0)},
		{"19990108 040506", unixMicro(1999, 1, 8, 4, 5, 6, 0)},
		{"1999.008", unixMicro(1999, 1, 8, 0, 0, 0, 0)},
		{"2024-01-02 10:00:00 utc+3", unixMicro(2024, 1, 2, 13, 0, 0, 0)},
		{"2024-01-02 10:00:00.1234567890123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890", unixMicro(2024, 1, 2, 10, 0, 0, 123457)},
		{"-infinity", NegInfinityMicros},
	}
	for _, tt := range tests {
		got, err := ParseTimestamp([]byte(tt.in))
		if err != nil || got != tt.want {
			t.Errorf("ParseTimestamp(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{
		"", "2024", "2024-01", "24-01-02", "12345678-01-01", "2024-001-02", "2024-02-30", "2023-02-29", "1900-02-29", "2024-13-01", "2024-00-10",
		"2024-01-00", "0000-01-01", "0000-01-01 BC", "2024-01-02 10", "2024-01-02T10", "2024-01-02T",
		"2024-01-02 25:00", "2024-01-02 24:00:01", "2024-01-02 24:01", "2024-01-02 24:00:00.5",
		"2024-01-02 23:60", "2024-01-02 123:00", "2024-01-02 10:00:00.x",
		"2024-01-02 10:00:00,5", "2024-01-02 10:00:00+16", "2024-01-02 10:00:00+05:60", "2024-01-02 10:00:00+05:30:60", "2024-01-02 10:00:00 EST",
		"2024-01-02 10:00:00 America/New_York", "10:00 2024-01-02", "allballs 2024-01-02", "2024-01-02 10:00 EST5EDT1", "+infinity", "yesterday",
		"2024-01-02 10:00:00 " + strings.Repeat("9", 150), "2024-01-02 BCX",
		"2024-01-02 10:00:00Z Z", "now", "today", "+infinity", "infinityx",
		"4714-11-23 BC", "4714-11-23 23:59:59 BC",
		"294277-01-01", "294276-12-31 24:00", "294247-01-10 04:00:54.775807", "2024-01-02\x0010:00",
	} {
		if got, err := ParseTimestamp([]byte(in)); err == nil {
			t.Errorf("ParseTimestamp(%q) = %d, want an error", in, got)
		} else if !IsValueError(err) {
			t.Errorf("ParseTimestamp(%q): %T is not a *ValueError", in, err)
		}
	}
}

func TestParseLocalTimestamp(t *testing.T) {
	for _, in := range []string{"2024-01-02 03:04:05+02", "2024-01-02 03:04:05 -11:30", "2024-01-02T03:04:05Z"} {
		got, err := ParseLocalTimestamp([]byte(in))
		if want := unixMicro(2024, 1, 2, 3, 4, 5, 0); err != nil || got != want {
			t.Errorf("ParseLocalTimestamp(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	_, err := ParseLocalTimestamp([]byte("x"))
	var ve *ValueError
	if !errors.As(err, &ve) || ve.Type != "timestamp without time zone" {
		t.Errorf("error %v", err)
	}
}

func TestParseDate(t *testing.T) {
	tests := []struct {
		in   string
		want int32
	}{
		{"1970-01-01", 0},
		{" 1969-12-31 ", -1},
		{"2024-02-29", 19782},
		{"2024-1-2", 19724},
		{"0001-12-31 BC", -719163},
		{"0001-12-31 bc", -719163},
		{"4714-11-24 BC", -2440588},
		{"5874897-12-31", 2147483494 - 2440588 - 1},
		{"infinity", InfinityDays},
		{"-Infinity", NegInfinityDays},
		// date_in drops a time of day and reads a zone (and ignores it)
		{"2024-01-02 10:00", 19724}, {"2024-01-02T23:59:59-12", 19724}, {"2024-01-02Z", 19724},
		{"2024-01-02 AD", 19724}, {"20240102", 19724}, {"epoch", 0}, {"January 2, 2024", 19724},
	}
	for _, tt := range tests {
		got, err := ParseDate([]byte(tt.in))
		if err != nil || got != tt.want {
			t.Errorf("ParseDate(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{
		"", "2024-02-30", "2023-02-29", "4714-11-23 BC", "5874898-01-01", "0000-01-01", "today", "10:00",
	} {
		if got, err := ParseDate([]byte(in)); err == nil {
			t.Errorf("ParseDate(%q) = %d, want an error", in, got)
		}
	}
}

func TestTimestampCodecs(t *testing.T) {
	// payloads: timestamptz_send / timestamp_send of the same text
	cases := []codecCase{
		ok("1969-12-31 23:59:59.999999Z", "fffca2fec4c81fff", "1969-12-31 23:59:59.999999+00"),
		ok("1900-02-28 12:00:00.5+00", "fff4ce874dca9120", "1900-02-28 12:00:00.5+00"),
		ok("0044-03-15 12:00:00 BC", "ff1af9e8fb46d000", "0044-03-15 12:00:00+00 BC"),
		ok("4714-11-24 00:00:00 BC", "fd0f7cc1411fa000", "4714-11-24 00:00:00+00 BC"),
		ok("294276-12-31 23:59:59.999999", "7fffff5bb3b29fff", "294276-12-31 23:59:59.999999+00"),
		ok("1970-01-01", "fffca2fec4c82000", "1970-01-01 00:00:00+00"),
		ok("2000-01-01 00:00:00.0000005", "0000000000000000", "2000-01-01 00:00:00+00"),
		ok("2024-01-01 23:59:59.9999996", "0002b0e9f2c0a000", "2024-01-02 00:00:00+00"),
		ok("infinity", "7fffffffffffffff", "infinity"),
		ok("-infinity", "8000000000000000", "-infinity"),
		bad("2024-02-30", "field value out of range"), bad("0000-01-01", "field value out of range"),
		bad("294277-01-01", "out of range"), bad("4714-11-23 BC", "out of range"),
		bad("2024-01-02 10", "invalid input syntax"), bad("2024-01-02 10:00+16", "time zone displacement out of range"),
		bad("yesterday", "current time"),
	}
	runCodecCases(t, TypeInfo{OID: oidTimestamptz, Name: "timestamp with time zone"}, append([]codecCase{
		ok("2024-02-29T23:59:59.123456+05:30", "0002b588372a5a00", "2024-02-29 18:29:59.123456+00"),
	}, cases...))
	runCodecCases(t, TypeInfo{OID: oidTimestamp, Name: "timestamp(3) without time zone"}, append([]codecCase{
		ok("2024-02-29T23:59:59.123456+05:30", "0002b58cd3566000", "2024-02-29 23:59:59.123456+00"),
	}, cases...))
	// a zone can carry a value across PostgreSQL's end of time, either way
	tz := mustLookup(t, oidTimestamptz)
	if _, err := tz.AppendBinary(nil, []byte("294276-12-31 23:59:59-01")); err == nil {
		t.Error("accepted a timestamptz past the end of PostgreSQL's range")
	}
	if _, err := tz.AppendBinary(nil, []byte("294277-01-01 00:30:00+01")); err != nil {
		t.Errorf("rejected a timestamptz inside PostgreSQL's range: %v", err)
	}
	if _, err := tz.AppendBinary(nil, []byte("4714-11-23 23:00:00-02 BC")); err != nil {
		t.Errorf("rejected a timestamptz inside PostgreSQL's range: %v", err)
	}
}

func TestDateCodec(t *testing.T) {
	runCodecCases(t, TypeInfo{OID: oidDate, Name: "date"}, []codecCase{
		ok("1970-01-01", "ffffd533", "1970-01-01"),
		ok("2000-01-01", "00000000", "2000-01-01"),
		ok("1969-12-31", "ffffd532", "1969-12-31"),
		ok("0001-01-01 BC", "fff4da8b", "0001-01-01 BC"),
		ok("5874897-12-31", "7fda970c", "5874897-12-31"),
		ok("4714-11-24 BC", "ffda97a7", "4714-11-24 BC"),
		ok("infinity", "7fffffff", "infinity"),
		ok("-infinity", "80000000", "-infinity"),
		ok("2024-01-02 00:00", "0000223f", "2024-01-02"), bad("5874898-01-01", "out of range"),
	})
}

func TestCalendar(t *testing.T) {
	// daysFromCivil against Go's time package over 1..9999 AD, and the
	// inverse over PostgreSQL's whole range.
	for d := int64(-719162); d <= 2932896; d += 97 {
		tm := time.Unix(d*86400, 0).UTC()
		if got := daysFromCivil(int64(tm.Year()), int(tm.Month()), tm.Day()); got != d {
			t.Fatalf("daysFromCivil(%v) = %d, want %d", tm, got, d)
		}
	}
	for d := int64(minPGDays + epochDays); d < endPGDays+epochDays; d += 7919 {
		y, m, dd := civilFromDays(d)
		if m < 1 || m > 12 || dd < 1 || dd > daysIn(y, m) || daysFromCivil(y, m, dd) != d {
			t.Fatalf("civilFromDays(%d) = %d-%d-%d", d, y, m, dd)
		}
	}
	if got := daysFromCivil(-4713, 11, 24) - epochDays; got != minPGDays {
		t.Fatalf("Julian day 0 is PostgreSQL day %d, want %d", got, minPGDays)
	}
	if got := daysFromCivil(294277, 1, 1) - epochDays; got*86400 != endPGTimestamp {
		t.Fatalf("294277-01-01 is PostgreSQL day %d", got)
	}
	y, m, d := civilFromDays(math.MinInt64 / microsPerDay)
	if daysFromCivil(y, m, d) != math.MinInt64/microsPerDay {
		t.Fatal("extreme day")
	}
}
