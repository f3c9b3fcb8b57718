package partition

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

var allTimeTypes = []TimeType{Timestamptz, Timestamp, Date, EpochSeconds, EpochMillis, EpochMicros}

func TestParseTimeType(t *testing.T) {
	ok := []struct {
		sqlType, unit string
		want          TimeType
	}{
		{"timestamp with time zone", "", Timestamptz},
		{"timestamptz", "", Timestamptz},
		{"TIMESTAMP  WITH TIME\tZONE ", "", Timestamptz},
		{"timestamp(6) with time zone", "", Timestamptz},
		{"timestamptz(6)", "", Timestamptz},
		{"timestamp without time zone", "", Timestamp},
		{"timestamp", "", Timestamp},
		{"timestamp(6) without time zone", "", Timestamp},
		{"date", "", Date},
		{"bigint", "s", EpochSeconds},
		{"bigint", "ms", EpochMillis},
		{"int8", "us", EpochMicros},
		{"BIGINT", "us", EpochMicros},
	}
	for _, c := range ok {
		got, err := ParseTimeType(c.sqlType, c.unit)
		if err != nil || got != c.want {
			t.Errorf("ParseTimeType(%q, %q) = %v, %v, want %v", c.sqlType, c.unit, got, err, c.want)
		}
	}
	bad := []struct {
		sqlType, unit, want string
	}{
		{"bigint", "", `--epoch s, ms or us`},
		{"bigint", "ns", `epoch unit "ns": must be`},
		{"bigint", "S", `epoch unit "S"`},
		{"timestamptz", "s", `only bigint time columns have one`},
		{"date", "ms", `only bigint time columns have one`},
		{"integer", "s", `must be timestamptz, timestamp, date or bigint`},
		{"text", "", `"text"`},
		{"", "", `must be timestamptz`},
		{"timestamp(3) with time zone", "", "rounds its values to 3 fractional digits"},
		{"timestamptz(0)", "", "rounds its values to 0 fractional digits"},
		{"timestamp(7) with time zone", "", "must be timestamptz"},
		{"timestamp with time zone[]", "", "must be timestamptz"},
		{"time with time zone", "", "must be timestamptz"},
		{"interval", "", "must be timestamptz"},
	}
	for _, c := range bad {
		_, err := ParseTimeType(c.sqlType, c.unit)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseTimeType(%q, %q) error = %v, want it to contain %q", c.sqlType, c.unit, err, c.want)
		}
	}
}

func TestTimeTypeString(t *testing.T) {
	for _, tt := range allTimeTypes {
		if !tt.Valid() || strings.HasPrefix(tt.String(), "TimeType(") {
			t.Errorf("%d: Valid %v, String %q", int(tt), tt.Valid(), tt)
		}
	}
	for _, tt := range []TimeType{0, EpochMicros + 1, -1} {
		if tt.Valid() || tt.String() != "TimeType("+strconv.Itoa(int(tt))+")" {
			t.Errorf("%d: Valid %v, String %q", int(tt), tt.Valid(), tt)
		}
	}
}

func TestCheckInterval(t *testing.T) {
	dateOK := []Interval{days(1), days(2), days(7), months(1), months(12), dur(24 * time.Hour), dur(48 * time.Hour)}
	dateBad := []Interval{dur(time.Hour), dur(36 * time.Hour), dur(90 * time.Minute), {Days: 1, Micros: 1e6}}
	for _, iv := range dateOK {
		if err := Date.CheckInterval(iv); err != nil {
			t.Errorf("Date.CheckInterval(%v) = %v", iv, err)
		}
	}
	for _, iv := range dateBad {
		err := Date.CheckInterval(iv)
		if err == nil || !strings.Contains(err.Error(), "whole days, weeks or months, not \""+iv.String()+"\"") {
			t.Errorf("Date.CheckInterval(%v) = %v, want a whole-days error", iv, err)
		}
	}
	for _, tt := range allTimeTypes {
		if tt == Date {
			continue
		}
		for _, iv := range append(dateOK, dateBad...) {
			if err := tt.CheckInterval(iv); err != nil {
				t.Errorf("%v.CheckInterval(%v) = %v", tt, iv, err)
			}
		}
	}
	for _, tt := range allTimeTypes {
		if err := tt.CheckInterval(Interval{}); !errors.Is(err, ErrInvalidInterval) {
			t.Errorf("%v.CheckInterval(zero) = %v, want ErrInvalidInterval", tt, err)
		}
	}
	if err := TimeType(0).CheckInterval(days(1)); err == nil {
		t.Error("TimeType(0).CheckInterval: no error")
	}
}

func TestBoundLiteral(t *testing.T) {
	cases := []struct {
		tt   TimeType
		t    string
		want string
	}{
		{Timestamptz, "2019-01-07T00:00:00Z", "timestamptz '2019-01-07 00:00:00+00'"},
		{Timestamptz, "2019-01-07T13:30:05.5Z", "timestamptz '2019-01-07 13:30:05.5+00'"},
		{Timestamptz, "1969-12-31T23:59:59.999999Z", "timestamptz '1969-12-31 23:59:59.999999+00'"},
		{Timestamptz, "0001-01-01T00:00:00Z", "timestamptz '0001-01-01 00:00:00+00'"},
		{Timestamptz, "max", "timestamptz '10000-01-01 00:00:00+00'"},
		{Timestamp, "2019-01-07T00:00:00Z", "timestamp '2019-01-07 00:00:00'"},
		{Timestamp, "0999-03-01T01:02:03.000004Z", "timestamp '0999-03-01 01:02:03.000004'"},
		{Timestamp, "max", "timestamp '10000-01-01 00:00:00'"},
		{Date, "2019-01-07T00:00:00Z", "date '2019-01-07'"},
		{Date, "2019-01-07T00:00:00.000001Z", "date '2019-01-08'"}, // rounded up: same column values in [lo, hi)
		{Date, "1969-12-31T12:00:00Z", "date '1970-01-01'"},
		{Date, "max", "date '10000-01-01'"},
		{EpochSeconds, "2019-01-14T00:00:00Z", "1547424000"},
		{EpochSeconds, "0001-01-01T00:00:00Z", "-62135596800"},
		{EpochSeconds, "1969-12-31T23:59:59.5Z", "0"},
		{EpochMillis, "2019-01-14T00:00:00Z", "1547424000000"},
		{EpochMicros, "2019-01-14T00:00:00.000001Z", "1547424000000001"},
		{EpochMicros, "max", "253402300800000000"},
	}
	for _, c := range cases {
		if got := BoundLiteral(c.tt, utc(t, c.t)); got != c.want {
			t.Errorf("BoundLiteral(%v, %s) = %q, want %q", c.tt, c.t, got, c.want)
		}
	}
	// Before the supported range, PostgreSQL's era suffix (1 BC is year 0).
	bc := []struct {
		tt     TimeType
		micros int64
		want   string
	}{
		{Timestamptz, MinMicros - 1, "timestamptz '0001-12-31 23:59:59.999999+00 BC'"},
		{Timestamp, MinMicros - 366*dayMicros, "timestamp '0001-01-01 00:00:00 BC'"},
		{Date, MinMicros - dayMicros, "date '0001-12-31 BC'"},
		{Timestamptz, math.MinInt64, "timestamptz '290309-12-21 19:59:05.224192+00 BC'"},
		{Timestamptz, math.MaxInt64, "timestamptz '294247-01-10 04:00:54.775807+00'"},
		{EpochSeconds, math.MaxInt64, "9223372036855"},
		{TimeType(0), 0, ""},
	}
	for _, c := range bc {
		if got := BoundLiteral(c.tt, c.micros); got != c.want {
			t.Errorf("BoundLiteral(%v, %d) = %q, want %q", c.tt, c.micros, got, c.want)
		}
	}
}

// TestParseBound feeds ParseBound what PostgreSQL 15's pg_get_expr printed
// for these bounds, under TimeZone UTC unless noted.
func TestParseBound(t *testing.T) {
	ok := []struct {
		tt     TimeType
		expr   string
		lo, hi string
	}{
		{Timestamptz, "FOR VALUES FROM ('2019-01-07 00:00:00+00') TO ('2019-01-14 00:00:00+00')", "2019-01-07T00:00:00Z", "2019-01-14T00:00:00Z"},
		{Timestamptz, "FOR VALUES FROM ('2019-01-07 00:00:00+00') TO ('2019-01-14 00:00:00.5+00')", "2019-01-07T00:00:00Z", "2019-01-14T00:00:00.5Z"},
		{Timestamptz, "FOR VALUES FROM ('0001-01-01 00:00:00+00') TO ('0001-02-01 00:00:00+00')", "0001-01-01T00:00:00Z", "0001-02-01T00:00:00Z"},
		{Timestamptz, "FOR VALUES FROM ('9999-12-01 00:00:00+00') TO ('10000-01-01 00:00:00+00')", "9999-12-01T00:00:00Z", "max"},
		// TimeZone Asia/Kolkata; its offset before 1900 is local mean time.
		{Timestamptz, "FOR VALUES FROM ('2019-01-07 05:30:00+05:30') TO ('2019-01-14 05:30:00.5+05:30')", "2019-01-07T00:00:00Z", "2019-01-14T00:00:00.5Z"},
		{Timestamptz, "FOR VALUES FROM ('0001-01-01 05:53:28+05:53:28') TO ('0001-02-01 05:53:28+05:53:28')", "0001-01-01T00:00:00Z", "0001-02-01T00:00:00Z"},
		{Timestamptz, "FOR VALUES FROM ('2018-12-31 19:00:00-05') TO ('2019-01-06 20:00:00-04')", "2019-01-01T00:00:00Z", "2019-01-07T00:00:00Z"},
		{Timestamptz, "FOR VALUES FROM ('1969-12-31 23:59:59.999999+00') TO ('1970-01-01 00:00:00.000001+00')", "1969-12-31T23:59:59.999999Z", "1970-01-01T00:00:00.000001Z"},
		// BoundLiteral's typed form, and other spacing and case.
		{Timestamptz, "FOR VALUES FROM (timestamptz '2019-01-07 00:00:00+00') TO (TIMESTAMPTZ '2019-01-14 00:00:00+00')", "2019-01-07T00:00:00Z", "2019-01-14T00:00:00Z"},
		{Timestamptz, "  for values from( '2019-01-07 00:00:00+00' )to('2019-01-14 00:00:00+00')\n", "2019-01-07T00:00:00Z", "2019-01-14T00:00:00Z"},
		{Timestamp, "FOR VALUES FROM ('2019-01-07 00:00:00') TO ('10000-01-01 00:00:00')", "2019-01-07T00:00:00Z", "max"},
		{Timestamp, "FOR VALUES FROM (timestamp '2019-01-07 00:00:00') TO ('2019-01-07 00:00:01')", "2019-01-07T00:00:00Z", "2019-01-07T00:00:01Z"},
		{Date, "FOR VALUES FROM ('2019-01-07') TO ('10000-01-01')", "2019-01-07T00:00:00Z", "max"},
		{Date, "FOR VALUES FROM ('0001-01-01') TO ('2019-01-07')", "0001-01-01T00:00:00Z", "2019-01-07T00:00:00Z"},
		{Date, "FOR VALUES FROM ('2020-02-29') TO (date '2020-03-01')", "2020-02-29T00:00:00Z", "2020-03-01T00:00:00Z"},
		{EpochSeconds, "FOR VALUES FROM ('1547424000') TO ('1547510400')", "2019-01-14T00:00:00Z", "2019-01-15T00:00:00Z"},
		{EpochSeconds, "FOR VALUES FROM ('-62135596800') TO ('0')", "0001-01-01T00:00:00Z", "1970-01-01T00:00:00Z"},
		{EpochSeconds, "FOR VALUES FROM (-62135596800) TO (0)", "0001-01-01T00:00:00Z", "1970-01-01T00:00:00Z"},
		{EpochMillis, "FOR VALUES FROM ('1547424000000') TO ('1547424000001')", "2019-01-14T00:00:00Z", "2019-01-14T00:00:00.001Z"},
		{EpochMicros, "FOR VALUES FROM ('-62135596800000000') TO ('253402300800000000')", "0001-01-01T00:00:00Z", "max"},
	}
	for _, c := range ok {
		lo, hi, err := ParseBound(c.tt, c.expr)
		if err != nil || lo != utc(t, c.lo) || hi != utc(t, c.hi) {
			t.Errorf("ParseBound(%v, %q) = [%s, %s), %v, want [%s, %s)", c.tt, c.expr, fmtMicros(lo), fmtMicros(hi), err, c.lo, c.hi)
		}
	}
}

func TestParseBoundErrors(t *testing.T) {
	const (
		unsupported = "unsupported"
		outOfRange  = "out of range"
	)
	cases := []struct {
		tt   TimeType
		expr string
		want string // unsupported, outOfRange, or text in the message
	}{
		{Timestamptz, "DEFAULT", unsupported},
		{Timestamptz, "FOR VALUES FROM (MINVALUE) TO ('0001-12-01 00:00:00+00 BC')", unsupported},
		{Timestamptz, "FOR VALUES FROM ('2019-01-07 00:00:00+00') TO (MAXVALUE)", unsupported},
		{EpochSeconds, "FOR VALUES FROM (MAXVALUE) TO (MAXVALUE)", unsupported},
		{Timestamptz, "FOR VALUES FROM ('-infinity') TO ('2019-01-07 00:00:00+00')", unsupported},
		{Date, "FOR VALUES FROM ('2019-01-07') TO ('infinity')", unsupported},
		{EpochSeconds, "FOR VALUES WITH (modulus 2, remainder 0)", unsupported},
		{EpochSeconds, "FOR VALUES IN (1, 2)", unsupported},
		{EpochSeconds, "FOR VALUES FROM ('1', 2) TO ('3', 4)", unsupported},
		{Timestamptz, "FOR VALUES FROM ('0001-12-01 05:53:28+05:53:28 BC') TO ('0001-01-01 00:00:00+00')", outOfRange},
		{Timestamptz, "FOR VALUES FROM ('2019-01-07 00:00:00+00') TO ('10000-01-01 00:00:00.000001+00')", outOfRange},
		{Timestamptz, "FOR VALUES FROM ('2019-01-07 00:00:00+00') TO ('294276-12-31 23:59:59+00')", outOfRange},
		{Date, "FOR VALUES FROM ('0044-03-15 BC') TO ('2019-01-07')", outOfRange},
		{Date, "FOR VALUES FROM ('2019-01-07') TO ('10000-01-02')", outOfRange},
		{EpochSeconds, "FOR VALUES FROM ('-62135596801') TO ('0')", outOfRange},
		{EpochSeconds, "FOR VALUES FROM ('0') TO ('99999999999999999999')", outOfRange},
		{EpochMicros, "FOR VALUES FROM ('0') TO ('253402300800000001')", outOfRange},
		{Timestamptz, "FOR VALUES FROM ('2019-01-14 00:00:00+00') TO ('2019-01-07 00:00:00+00')", "empty range"},
		{Timestamptz, "FOR VALUES FROM ('2019-01-07 00:00:00+00') TO ('2019-01-07 00:00:00+00')", "empty range"},
		// DateStyle other than ISO.
		{Timestamptz, "FOR VALUES FROM ('06/01/2019 20:30:00 NST') TO ('13/01/2019 20:30:00.5 NST')", "ISO format"},
		{Timestamptz, "FOR VALUES FROM ('Mon Jan 07 00:00:00 2019 UTC') TO ('Mon Jan 14 00:00:00 2019 UTC')", "ISO format"},
		{Date, "FOR VALUES FROM ('07.01.2019') TO ('14.01.2019')", "ISO format"},
		// The wrong time type for the text.
		{Timestamptz, "FOR VALUES FROM ('2019-01-07 00:00:00') TO ('2019-01-14 00:00:00')", "no UTC offset"},
		{Timestamp, "FOR VALUES FROM ('2019-01-07 00:00:00+00') TO ('2019-01-14 00:00:00+00')", "has a UTC offset"},
		{Date, "FOR VALUES FROM ('2019-01-07 00:00:00') TO ('2019-01-14 00:00:00')", "ISO format"},
		{Timestamptz, "FOR VALUES FROM ('2019-01-07') TO ('2019-01-14')", "ISO format"},
		{Timestamptz, "FOR VALUES FROM ('1547424000') TO ('1547510400')", "ISO format"},
		{EpochSeconds, "FOR VALUES FROM ('2019-01-07') TO ('2019-01-14')", "not an integer"},
		{Timestamptz, "FOR VALUES FROM (timestamp '2019-01-07 00:00:00+00') TO ('2019-01-14 00:00:00+00')", "expected a quoted timestamp"},
		{Timestamp, "FOR VALUES FROM ('2019-01-07 00:00:00') TO (2019)", "expected a quoted timestamp"},
		{Date, "FOR VALUES FROM (20190107) TO ('2019-01-14')", "expected a quoted date"},
		// Impossible fields.
		{Date, "FOR VALUES FROM ('2019-02-29') TO ('2019-03-01')", "ISO format"},
		{Date, "FOR VALUES FROM ('2100-02-29') TO ('2100-03-01')", "ISO format"},
		{Date, "FOR VALUES FROM ('2019-13-01') TO ('2020-01-01')", "ISO format"},
		{Date, "FOR VALUES FROM ('0000-01-01') TO ('2020-01-01')", "ISO format"},
		{Date, "FOR VALUES FROM ('2019-00-01') TO ('2020-01-01')", "ISO format"},
		{Date, "FOR VALUES FROM ('2019-1-01') TO ('2020-01-01')", "ISO format"},
		{Date, "FOR VALUES FROM ('2019-01-01 AD') TO ('2020-01-01')", "ISO format"},
		{Timestamp, "FOR VALUES FROM ('2019-01-07 24:00:00') TO ('2019-01-14 00:00:00')", "ISO format"},
		{Timestamp, "FOR VALUES FROM ('2019-01-07 23:60:00') TO ('2019-01-14 00:00:00')", "ISO format"},
		{Timestamp, "FOR VALUES FROM ('2019-01-07 23:59:60') TO ('2019-01-14 00:00:00')", "ISO format"},
		{Timestamp, "FOR VALUES FROM ('2019-01-07 00:00:00.') TO ('2019-01-14 00:00:00')", "ISO format"},
		{Timestamp, "FOR VALUES FROM ('2019-01-07 00:00:00.1234567') TO ('2019-01-14 00:00:00')", "ISO format"},
		{Timestamptz, "FOR VALUES FROM ('2019-01-07 00:00:00+16') TO ('2019-01-14 00:00:00+00')", "ISO format"},
		{Timestamptz, "FOR VALUES FROM ('2019-01-07 00:00:00+05:') TO ('2019-01-14 00:00:00+00')", "ISO format"},
		{Timestamptz, "FOR VALUES FROM ('2019-01-07 00:00:00+0530') TO ('2019-01-14 00:00:00+00')", "ISO format"},
		{Timestamptz, "FOR VALUES FROM ('2019-01-07 00:00:00+00x') TO ('2019-01-14 00:00:00+00')", "ISO format"},
		{Timestamptz, "FOR VALUES FROM ('2019-01-07 00:00:00x') TO ('2019-01-14 00:00:00+00')", "ISO format"},
		// Broken syntax.
		{Timestamptz, "", "expected FOR VALUES"},
		{Timestamptz, "FOR VALUES", "expected FROM"},
		{Timestamptz, "FOR VALUESFROM ('2019-01-07 00:00:00+00') TO ('2019-01-14 00:00:00+00')", "expected FOR VALUES"},
		{Timestamptz, "FOR VALUES FROM '2019-01-07 00:00:00+00' TO ('2019-01-14 00:00:00+00')", "expected ("},
		{Timestamptz, "FOR VALUES FROM ('2019-01-07 00:00:00+00' TO ('2019-01-14 00:00:00+00')", "expected )"},
		{Timestamptz, "FOR VALUES FROM ('2019-01-07 00:00:00+00') ('2019-01-14 00:00:00+00')", "expected TO"},
		{Timestamptz, "FOR VALUES FROM ('2019-01-07 00:00:00+00') TO ('2019-01-14 00:00:00+00", "expected a closing quote"},
		{Timestamptz, "FOR VALUES FROM ('2019-01-07 00:00:00+00') TO ('2019-01-14 00:00:00+00') x", "expected the end"},
		{Timestamptz, "FOR VALUES FROM ('2019-01-07 00:00:00+00''') TO ('2019-01-14 00:00:00+00')", "has a quote inside"},
		{EpochSeconds, "FOR VALUES FROM ('1) TO ('2')", "not an integer"},
		{EpochSeconds, "FOR VALUES FROM (1 + 1) TO (3)", "expected )"},
		{EpochSeconds, "FOR VALUES FROM (0x10) TO (20)", "not an integer"},
		{EpochSeconds, "FOR VALUES FROM () TO (20)", "not an integer"},
		{Timestamptz, "DEFAULT x", "expected FOR VALUES"},
		{Timestamptz, "FOR VALUES FROM ('" + strings.Repeat("9", 300) + "') TO ('1')", "too long"},
		{TimeType(0), "FOR VALUES FROM ('1') TO ('2')", "invalid time type"},
	}
	for _, c := range cases {
		lo, hi, err := ParseBound(c.tt, c.expr)
		switch {
		case err == nil:
			t.Errorf("ParseBound(%v, %q) = [%d, %d), want an error", c.tt, c.expr, lo, hi)
		case c.want == unsupported:
			if !errors.Is(err, ErrUnsupportedBound) {
				t.Errorf("ParseBound(%v, %q) = %v, want ErrUnsupportedBound", c.tt, c.expr, err)
			}
		case c.want == outOfRange:
			if !errors.Is(err, ErrOutOfRange) {
				t.Errorf("ParseBound(%v, %q) = %v, want ErrOutOfRange", c.tt, c.expr, err)
			}
		case !strings.Contains(err.Error(), c.want):
			t.Errorf("ParseBound(%v, %q) = %v, want it to contain %q", c.tt, c.expr, err, c.want)
		}
	}
}

// pgGetExpr returns the FOR VALUES text pg_get_expr prints for the
// bounds that BoundLiteral writes: the value quoted, without its type.
func pgGetExpr(tt TimeType, lo, hi int64) string {
	untyped := func(m int64) string {
		lit := BoundLiteral(tt, m)
		if i := strings.IndexByte(lit, '\''); i >= 0 {
			return lit[i:]
		}
		return "'" + lit + "'"
	}
	return "FOR VALUES FROM (" + untyped(lo) + ") TO (" + untyped(hi) + ")"
}

// TestBoundRoundTrip: the bounds of random partitions, written by
// BoundLiteral into a FOR VALUES clause, as pgts sends it and as
// PostgreSQL prints it back, parse to the same bounds.
func TestBoundRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tt := range allTimeTypes {
		for _, iv := range testIntervals {
			if tt.CheckInterval(iv) != nil {
				continue
			}
			for range 200 {
				lo, hi, _ := Bounds(iv, randomTime(r, iv))
				sent := "FOR VALUES FROM (" + BoundLiteral(tt, lo) + ") TO (" + BoundLiteral(tt, hi) + ")"
				for _, expr := range []string{sent, pgGetExpr(tt, lo, hi)} {
					l, h, err := ParseBound(tt, expr)
					if err != nil || l != lo || h != hi {
						t.Fatalf("ParseBound(%v, %q) = [%d, %d), %v, want [%d, %d)", tt, expr, l, h, err, lo, hi)
					}
				}
			}
		}
	}
	// Any micros, not only partition bounds, for the timestamp types.
	for range 5000 {
		lo := MinMicros + r.Int64N(MaxMicros-MinMicros)
		hi := lo + 1 + r.Int64N(MaxMicros-lo)
		for _, tt := range []TimeType{Timestamptz, Timestamp, EpochMicros} {
			expr := pgGetExpr(tt, lo, hi)
			if l, h, err := ParseBound(tt, expr); err != nil || l != lo || h != hi {
				t.Fatalf("ParseBound(%v, %q) = [%d, %d), %v, want [%d, %d)", tt, expr, l, h, err, lo, hi)
			}
		}
	}
}

func TestParseBoundNoAlloc(t *testing.T) {
	expr := "FOR VALUES FROM ('2019-01-07 05:30:00.5+05:30') TO ('2019-01-14 00:00:00+00')"
	if n := testing.AllocsPerRun(100, func() { _, _, _ = ParseBound(Timestamptz, expr) }); n != 0 {
		t.Errorf("ParseBound allocates %v times", n)
	}
}

func TestToFromMicros(t *testing.T) {
	cases := []struct {
		tt     TimeType
		v      int64
		micros int64
	}{
		{EpochSeconds, 1547424000, 1547424000e6},
		{EpochSeconds, -1, -1e6},
		{EpochMillis, 1547424000123, 1547424000123e3},
		{EpochMillis, -1, -1000},
		{EpochMicros, -7, -7},
		{Timestamptz, 42, 42},
		{Timestamp, -42, -42},
		{Date, 1, dayMicros},
		{Date, -719162, MinMicros},
		{EpochSeconds, math.MaxInt64, math.MaxInt64},
		{EpochSeconds, math.MaxInt64 / 1_000_000, math.MaxInt64 / 1_000_000 * 1_000_000},
		{EpochSeconds, math.MaxInt64/1_000_000 + 1, math.MaxInt64},
		{EpochSeconds, math.MinInt64, math.MinInt64},
		{EpochSeconds, math.MinInt64/1_000_000 - 1, math.MinInt64},
		{EpochMillis, math.MinInt64 / 1000, math.MinInt64 / 1000 * 1000},
		{Date, math.MaxInt64, math.MaxInt64},
		{TimeType(0), 5, 5},
	}
	for _, c := range cases {
		if got := ToMicros(c.tt, c.v); got != c.micros {
			t.Errorf("ToMicros(%v, %d) = %d, want %d", c.tt, c.v, got, c.micros)
		}
	}
	// FromMicros rounds down, keeping the value in the same partition.
	from := []struct {
		tt     TimeType
		micros int64
		v      int64
	}{
		{EpochSeconds, 1547424000e6, 1547424000},
		{EpochSeconds, 1547424000e6 + 999999, 1547424000},
		{EpochSeconds, -1, -1},
		{EpochSeconds, -1e6, -1},
		{EpochSeconds, -1e6 - 1, -2},
		{EpochMillis, -1, -1},
		{EpochMillis, 1999, 1},
		{EpochMicros, -1, -1},
		{Date, -1, -1},
		{Date, dayMicros, 1},
		{Timestamptz, 123, 123},
		{EpochSeconds, math.MinInt64, -9223372036855},
	}
	for _, c := range from {
		if got := FromMicros(c.tt, c.micros); got != c.v {
			t.Errorf("FromMicros(%v, %d) = %d, want %d", c.tt, c.micros, got, c.v)
		}
	}
}

func FuzzParseBound(f *testing.F) {
	seeds := []string{
		"FOR VALUES FROM ('2019-01-07 00:00:00+00') TO ('2019-01-14 00:00:00.5+00')",
		"FOR VALUES FROM ('0001-01-01 05:53:28+05:53:28') TO ('0001-02-01 05:53:28+05:53:28')",
		"FOR VALUES FROM (MINVALUE) TO ('0001-12-01 05:53:28+05:53:28 BC')",
		"FOR VALUES FROM ('2019-01-07 00:00:00') TO ('10000-01-01 00:00:00')",
		"FOR VALUES FROM ('2019-01-07') TO ('10000-01-01')",
		"FOR VALUES FROM ('0001-02-29 BC') TO ('2019-01-07')",
		"FOR VALUES FROM ('-62135596800') TO ('0')",
		"FOR VALUES FROM (1547424000) TO (1547510400)",
		"FOR VALUES FROM ('1', 2) TO ('3', 4)",
		"FOR VALUES WITH (modulus 2, remainder 0)",
		"FOR VALUES IN (1, 2)",
		"DEFAULT",
		"FOR VALUES FROM (timestamptz '2019-01-07 00:00:00+00') TO (timestamptz '10000-01-01 00:00:00+00')",
	}
	for i, s := range seeds {
		f.Add(uint8(i), s)
	}
	f.Fuzz(func(t *testing.T, ttb uint8, expr string) {
		tt := TimeType(ttb%8) + Timestamptz - 1 // mostly valid, some not
		lo, hi, err := ParseBound(tt, expr)
		if err != nil {
			return
		}
		if !(MinMicros <= lo && lo < hi && hi <= MaxMicros) {
			t.Fatalf("ParseBound(%v, %q) = [%d, %d): outside the range or empty", tt, expr, lo, hi)
		}
		// Whatever parsed is printed back the same way and parses alike.
		again := pgGetExpr(tt, lo, hi)
		if l, h, err := ParseBound(tt, again); err != nil || l != lo || h != hi {
			t.Fatalf("ParseBound(%v, %q) = [%d, %d), %v, want [%d, %d) as from %q", tt, again, l, h, err, lo, hi, expr)
		}
	})
}

func BenchmarkParseBound(b *testing.B) {
	for _, c := range []struct {
		name string
		tt   TimeType
		expr string
	}{
		{"timestamptz", Timestamptz, "FOR VALUES FROM ('2019-01-07 00:00:00+00') TO ('2019-01-14 00:00:00+00')"},
		{"date", Date, "FOR VALUES FROM ('2019-01-07') TO ('2019-01-14')"},
		{"epoch", EpochSeconds, "FOR VALUES FROM ('1547424000') TO ('1547510400')"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.expr)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := ParseBound(c.tt, c.expr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkBoundLiteral(b *testing.B) {
	m := time.Date(2019, 1, 7, 0, 0, 0, 0, time.UTC).UnixMicro()
	b.ReportAllocs()
	for b.Loop() {
		_ = BoundLiteral(Timestamptz, m)
	}
}
