package partition

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"
)

// utc parses an RFC 3339 time (year 0001-9999) to micros, or "max" to
// MaxMicros.
func utc(tb testing.TB, s string) int64 {
	tb.Helper()
	if s == "max" {
		return MaxMicros
	}
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		tb.Fatal(err)
	}
	return ts.UnixMicro()
}

func TestRangeConstants(t *testing.T) {
	if got := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro(); got != MinMicros {
		t.Errorf("0001-01-01 is %d, MinMicros %d", got, MinMicros)
	}
	if got := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro(); got != MaxMicros {
		t.Errorf("10000-01-01 is %d, MaxMicros %d", got, MaxMicros)
	}
}

func TestBounds(t *testing.T) {
	cases := []struct {
		name   string
		iv     Interval
		t      string
		lo, hi string
	}{
		{"hour", dur(time.Hour), "2019-01-07T13:45:12.345678Z", "2019-01-07T13:00:00Z", "2019-01-07T14:00:00Z"},
		{"hour at lo", dur(time.Hour), "2019-01-07T13:00:00Z", "2019-01-07T13:00:00Z", "2019-01-07T14:00:00Z"},
		{"hour at hi-1µs", dur(time.Hour), "2019-01-07T13:59:59.999999Z", "2019-01-07T13:00:00Z", "2019-01-07T14:00:00Z"},
		{"hour before 1970", dur(time.Hour), "1969-12-31T23:59:59.999999Z", "1969-12-31T23:00:00Z", "1970-01-01T00:00:00Z"},
		{"hour at epoch", dur(time.Hour), "1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "1970-01-01T01:00:00Z"},
		{"day", days(1), "2019-01-07T23:59:59.999999Z", "2019-01-07T00:00:00Z", "2019-01-08T00:00:00Z"},
		{"day as 24h", dur(24 * time.Hour), "2019-01-07T00:00:00Z", "2019-01-07T00:00:00Z", "2019-01-08T00:00:00Z"},
		{"day 1800", days(1), "1800-03-01T05:00:00Z", "1800-03-01T00:00:00Z", "1800-03-02T00:00:00Z"},
		{"day 1969-12-31", days(1), "1969-12-31T23:59:59.999999Z", "1969-12-31T00:00:00Z", "1970-01-01T00:00:00Z"},
		{"day 9999-12-31", days(1), "9999-12-31T23:59:59.999999Z", "9999-12-31T00:00:00Z", "max"},
		{"day 0001-01-01", days(1), "0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "0001-01-02T00:00:00Z"},
		{"week Monday", days(7), "2019-01-07T00:00:00Z", "2019-01-07T00:00:00Z", "2019-01-14T00:00:00Z"},
		{"week Wednesday", days(7), "2019-01-09T12:00:00Z", "2019-01-07T00:00:00Z", "2019-01-14T00:00:00Z"},
		{"week Sunday end", days(7), "2019-01-13T23:59:59.999999Z", "2019-01-07T00:00:00Z", "2019-01-14T00:00:00Z"},
		{"week Sunday before", days(7), "2019-01-06T10:00:00Z", "2018-12-31T00:00:00Z", "2019-01-07T00:00:00Z"},
		{"week as 168h", dur(168 * time.Hour), "2019-01-13T23:00:00Z", "2019-01-07T00:00:00Z", "2019-01-14T00:00:00Z"},
		{"week at epoch", days(7), "1970-01-01T00:00:00Z", "1969-12-29T00:00:00Z", "1970-01-05T00:00:00Z"},
		{"week 1800", days(7), "1800-01-01T00:00:00Z", "1799-12-30T00:00:00Z", "1800-01-06T00:00:00Z"},
		{"week 0001 is a Monday", days(7), "0001-01-03T00:00:00Z", "0001-01-01T00:00:00Z", "0001-01-08T00:00:00Z"},
		{"week 9999 last", days(7), "9999-12-31T23:59:59.999999Z", "9999-12-27T00:00:00Z", "max"},
		{"2 weeks origin", days(14), "1970-01-05T00:00:00Z", "1970-01-05T00:00:00Z", "1970-01-19T00:00:00Z"},
		{"2 weeks before origin", days(14), "1970-01-04T23:59:59.999999Z", "1969-12-22T00:00:00Z", "1970-01-05T00:00:00Z"},
		{"month Jan 31", months(1), "2019-01-31T23:59:59.999999Z", "2019-01-01T00:00:00Z", "2019-02-01T00:00:00Z"},
		{"month Feb 1", months(1), "2019-02-01T00:00:00Z", "2019-02-01T00:00:00Z", "2019-03-01T00:00:00Z"},
		{"month Feb 29 2020", months(1), "2020-02-29T12:00:00Z", "2020-02-01T00:00:00Z", "2020-03-01T00:00:00Z"},
		{"month Feb 2100 not leap", months(1), "2100-02-28T23:59:59.999999Z", "2100-02-01T00:00:00Z", "2100-03-01T00:00:00Z"},
		{"month Mar 1 2100", months(1), "2100-03-01T00:00:00Z", "2100-03-01T00:00:00Z", "2100-04-01T00:00:00Z"},
		{"month Feb 29 2000", months(1), "2000-02-29T23:59:59.999999Z", "2000-02-01T00:00:00Z", "2000-03-01T00:00:00Z"},
		{"month Dec", months(1), "2019-12-31T23:59:59.999999Z", "2019-12-01T00:00:00Z", "2020-01-01T00:00:00Z"},
		{"month 1969-12-31", months(1), "1969-12-31T23:59:59.999999Z", "1969-12-01T00:00:00Z", "1970-01-01T00:00:00Z"},
		{"month 1800", months(1), "1800-02-15T00:00:00Z", "1800-02-01T00:00:00Z", "1800-03-01T00:00:00Z"},
		{"month 2999", months(1), "2999-12-31T23:00:00Z", "2999-12-01T00:00:00Z", "3000-01-01T00:00:00Z"},
		{"month 9999-12", months(1), "9999-12-31T23:59:59.999999Z", "9999-12-01T00:00:00Z", "max"},
		{"quarter Q2", months(3), "2019-05-15T00:00:00Z", "2019-04-01T00:00:00Z", "2019-07-01T00:00:00Z"},
		{"quarter Q4 end", months(3), "2019-12-31T23:59:59.999999Z", "2019-10-01T00:00:00Z", "2020-01-01T00:00:00Z"},
		{"quarter Q1 start", months(3), "2020-01-01T00:00:00Z", "2020-01-01T00:00:00Z", "2020-04-01T00:00:00Z"},
		{"quarter before 1970", months(3), "1969-12-31T23:59:59.999999Z", "1969-10-01T00:00:00Z", "1970-01-01T00:00:00Z"},
		{"quarter 1800", months(3), "1800-08-31T00:00:00Z", "1800-07-01T00:00:00Z", "1800-10-01T00:00:00Z"},
		{"year", months(12), "2019-07-01T00:00:00Z", "2019-01-01T00:00:00Z", "2020-01-01T00:00:00Z"},
		{"year 1800", months(12), "1800-06-01T00:00:00Z", "1800-01-01T00:00:00Z", "1801-01-01T00:00:00Z"},
		{"year 1969 end", months(12), "1969-12-31T23:59:59.999999Z", "1969-01-01T00:00:00Z", "1970-01-01T00:00:00Z"},
		{"year 2999", months(12), "2999-03-01T00:00:00Z", "2999-01-01T00:00:00Z", "3000-01-01T00:00:00Z"},
		{"year 9999", months(12), "9999-12-31T23:59:59.999999Z", "9999-01-01T00:00:00Z", "max"},
		{"year 0001", months(12), "0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "0002-01-01T00:00:00Z"},
		{"5 months cut at 0001", months(5), "0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "0001-04-01T00:00:00Z"},
		{"100 years", months(1200), "1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "2070-01-01T00:00:00Z"},
		{"100 years before", months(1200), "1969-12-31T23:59:59.999999Z", "1870-01-01T00:00:00Z", "1970-01-01T00:00:00Z"},
		{"100 years cut at 0001", months(1200), "0050-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "0070-01-01T00:00:00Z"},
		{"90 minutes", dur(90 * time.Minute), "2019-01-07T13:45:00Z", "2019-01-07T13:30:00Z", "2019-01-07T15:00:00Z"},
		{"90 minutes epoch", dur(90 * time.Minute), "1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "1970-01-01T01:30:00Z"},
		{"90 minutes before 1970", dur(90 * time.Minute), "1969-12-31T23:59:59.999999Z", "1969-12-31T22:30:00Z", "1970-01-01T00:00:00Z"},
		{"36 hours", dur(36 * time.Hour), "1970-01-02T11:59:59.999999Z", "1970-01-01T00:00:00Z", "1970-01-02T12:00:00Z"},
		{"36 hours at lo", dur(36 * time.Hour), "1970-01-02T12:00:00Z", "1970-01-02T12:00:00Z", "1970-01-04T00:00:00Z"},
		{"36 hours before 1970", dur(36 * time.Hour), "1969-12-31T23:59:59.999999Z", "1969-12-30T12:00:00Z", "1970-01-01T00:00:00Z"},
		{"1 day 12 hours", Interval{Days: 1, Micros: 12 * 3600e6}, "1970-01-02T12:00:00Z", "1970-01-02T12:00:00Z", "1970-01-04T00:00:00Z"},
		{"7 hours cut at 10000", dur(7 * time.Hour), "9999-12-31T23:59:59.999999Z", "9999-12-31T18:00:00Z", "max"},
		{"1 second", dur(time.Second), "2019-01-07T13:45:12.999999Z", "2019-01-07T13:45:12Z", "2019-01-07T13:45:13Z"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lo, hi, err := Bounds(c.iv, utc(t, c.t))
			if err != nil {
				t.Fatalf("Bounds(%v, %s): %v", c.iv, c.t, err)
			}
			if lo != utc(t, c.lo) || hi != utc(t, c.hi) {
				t.Errorf("Bounds(%v, %s) = [%s, %s), want [%s, %s)", c.iv, c.t, fmtMicros(lo), fmtMicros(hi), c.lo, c.hi)
			}
			if n := Next(c.iv, lo); n != hi {
				t.Errorf("Next(%v, %s) = %s, want %s", c.iv, fmtMicros(lo), fmtMicros(n), fmtMicros(hi))
			}
		})
	}
}

func fmtMicros(m int64) string {
	return time.UnixMicro(m).UTC().Format(time.RFC3339Nano)
}

func TestBoundsErrors(t *testing.T) {
	outside := []int64{MaxMicros, MaxMicros + 1, MinMicros - 1, math.MinInt64, math.MaxInt64}
	for _, ts := range outside {
		if _, _, err := Bounds(days(1), ts); !errors.Is(err, ErrOutOfRange) {
			t.Errorf("Bounds(1 day, %d) error = %v, want ErrOutOfRange", ts, err)
		}
	}
	invalid := []Interval{{}, months(-1), {Months: 1, Days: 1}, dur(time.Millisecond), months(1201), days(40000),
		{Days: math.MaxInt32, Micros: math.MaxInt64}, {Micros: math.MinInt64}}
	for _, iv := range invalid {
		if _, _, err := Bounds(iv, 0); !errors.Is(err, ErrInvalidInterval) {
			t.Errorf("Bounds(%+v, 0) error = %v, want ErrInvalidInterval", iv, err)
		}
	}
}

func TestNextSaturates(t *testing.T) {
	for _, iv := range testIntervals {
		if got := Next(iv, MaxMicros); got != MaxMicros {
			t.Errorf("Next(%v, MaxMicros) = %d", iv, got)
		}
		if got := Next(iv, math.MaxInt64); got != MaxMicros {
			t.Errorf("Next(%v, MaxInt64) = %d", iv, got)
		}
		if got := Next(iv, math.MinInt64); got != MinMicros {
			t.Errorf("Next(%v, MinInt64) = %d", iv, got)
		}
		last, _, _ := Bounds(iv, MaxMicros-1)
		if got := Next(iv, last); got != MaxMicros {
			t.Errorf("Next(%v, last partition) = %d, want MaxMicros", iv, got)
		}
	}
	if got := Next(Interval{}, 0); got != MaxMicros {
		t.Errorf("Next(zero interval) = %d, want MaxMicros", got)
	}
}

// testIntervals covers every kind and name resolution.
var testIntervals = []Interval{
	months(1), months(2), months(3), months(5), months(6), months(7), months(12), months(13), months(1200),
	days(7), days(14), days(21), dur(168 * time.Hour), {Days: 6, Micros: 86400e6}, days(364),
	days(1), days(2), days(3), days(10), days(36525), dur(time.Hour), dur(7 * time.Hour), dur(36 * time.Hour),
	dur(90 * time.Minute), dur(time.Minute), dur(7 * time.Minute), dur(time.Second), dur(61 * time.Second),
	{Days: 1, Micros: 1e6},
}

// oracle computes [lo, hi) independently of the package: with time.Time
// month arithmetic for calendar intervals, with big integers otherwise.
func oracle(iv Interval, t int64) (lo, hi int64) {
	switch iv.Kind() {
	case Calendar:
		tt := time.UnixMicro(t).UTC()
		n := int(iv.Months)
		month := (tt.Year()-1970)*12 + int(tt.Month()) - 1
		start := month / n * n
		if month%n < 0 {
			start -= n
		}
		lo = time.Date(1970, time.Month(1+start), 1, 0, 0, 0, 0, time.UTC).UnixMicro()
		hi = time.Date(1970, time.Month(1+start+n), 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	default:
		d := big.NewInt(int64(iv.Days))
		d.Mul(d, big.NewInt(86400e6))
		d.Add(d, big.NewInt(iv.Micros))
		origin := big.NewInt(0)
		if iv.Kind() == Weekly {
			origin.SetInt64(time.Date(1970, 1, 5, 0, 0, 0, 0, time.UTC).UnixMicro())
		}
		q := new(big.Int).Sub(big.NewInt(t), origin)
		q.Div(q, d) // Euclidean division: floor for d > 0
		l := new(big.Int).Mul(q, d)
		l.Add(l, origin)
		lo = l.Int64()
		hi = l.Add(l, d).Int64()
	}
	return max(lo, MinMicros), min(hi, MaxMicros)
}

// randomTime returns a time in range: uniform, or near a partition
// boundary, or at the edges of the range.
func randomTime(r *rand.Rand, iv Interval) int64 {
	t := MinMicros + r.Int64N(MaxMicros-MinMicros)
	switch r.IntN(8) {
	case 0:
		lo, _, _ := Bounds(iv, t)
		t = lo + r.Int64N(3) - 1
	case 1:
		_, hi, _ := Bounds(iv, t)
		t = hi - r.Int64N(2) - 1
	case 2:
		t = MinMicros + r.Int64N(1000*dayMicros)
	case 3:
		t = MaxMicros - 1 - r.Int64N(1000*dayMicros)
	case 4:
		t = r.Int64N(200*365*dayMicros) - 100*365*dayMicros // 1870-2070
	}
	return min(max(t, MinMicros), MaxMicros-1)
}

func TestBoundsProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 3000
	if testing.Short() {
		n = 300
	}
	for _, iv := range testIntervals {
		for range n {
			ts := randomTime(r, iv)
			lo, hi, err := Bounds(iv, ts)
			if err != nil {
				t.Fatalf("Bounds(%v, %s): %v", iv, fmtMicros(ts), err)
			}
			if wlo, whi := oracle(iv, ts); lo != wlo || hi != whi {
				t.Fatalf("Bounds(%v, %s) = [%s, %s), oracle [%s, %s)", iv, fmtMicros(ts),
					fmtMicros(lo), fmtMicros(hi), fmtMicros(wlo), fmtMicros(whi))
			}
			checkPartition(t, iv, ts, lo, hi)
		}
	}
}

// checkPartition checks the invariants of the partition [lo, hi) of ts.
func checkPartition(t *testing.T, iv Interval, ts, lo, hi int64) {
	t.Helper()
	if !(MinMicros <= lo && lo <= ts && ts < hi && hi <= MaxMicros) {
		t.Fatalf("Bounds(%v, %d) = [%d, %d): not MinMicros <= lo <= t < hi <= MaxMicros", iv, ts, lo, hi)
	}
	if got := Next(iv, lo); got != hi {
		t.Fatalf("Next(%v, %d) = %d, want hi %d", iv, lo, got, hi)
	}
	if l, h, _ := Bounds(iv, hi-1); l != lo || h != hi {
		t.Fatalf("Bounds(%v, hi-1) = [%d, %d), want [%d, %d)", iv, l, h, lo, hi)
	}
	if lo > MinMicros {
		if _, h, _ := Bounds(iv, lo-1); h != lo {
			t.Fatalf("Bounds(%v, lo-1).hi = %d, want lo %d", iv, h, lo)
		}
	}
	if lo > MinMicros && lo%secondMicros != 0 {
		t.Fatalf("Bounds(%v, %d).lo = %d is not a whole second", iv, ts, lo)
	}
	kind := iv.Kind()
	if d, _ := iv.duration(); kind != Fixed || d%dayMicros == 0 {
		if lo%dayMicros != 0 || hi%dayMicros != 0 {
			t.Fatalf("Bounds(%v, %d) = [%d, %d): not midnights", iv, ts, lo, hi)
		}
	}
	if kind == Weekly && lo > MinMicros && time.UnixMicro(lo).UTC().Weekday() != time.Monday {
		t.Fatalf("Bounds(%v, %d).lo = %s is not a Monday", iv, ts, fmtMicros(lo))
	}
	if kind == Calendar && lo > MinMicros && time.UnixMicro(lo).UTC().Day() != 1 {
		t.Fatalf("Bounds(%v, %d).lo = %s is not the first of a month", iv, ts, fmtMicros(lo))
	}
}

// TestWalk walks every partition over the whole range for long
// intervals, over 1900-2100 for days, over two months for hours, two hours
// for shorter ones:
// partitions are contiguous and their names strictly increase.
func TestWalk(t *testing.T) {
	for _, iv := range testIntervals {
		from, to := MinMicros, MaxMicros
		if d, ok := iv.duration(); ok && d < 28*dayMicros || iv.calendar() && iv.Months < 3 {
			from, to = utc(t, "1900-01-01T00:00:00Z"), utc(t, "2100-01-01T00:00:00Z")
			if d, ok := iv.duration(); ok && d < dayMicros {
				from, to = utc(t, "1969-12-01T00:00:00Z"), utc(t, "1970-02-01T00:00:00Z")
			}
			if d, ok := iv.duration(); ok && d < hourMicros {
				from, to = utc(t, "1969-12-31T23:00:00Z"), utc(t, "1970-01-01T01:00:00Z")
			}
		}
		lo, _, err := Bounds(iv, from)
		if err != nil {
			t.Fatal(err)
		}
		prevName := ""
		for n := 0; lo < to; n++ {
			hi := Next(iv, lo)
			if hi <= lo {
				t.Fatalf("%v: Next(%d) = %d, not after it", iv, lo, hi)
			}
			if l, h, _ := Bounds(iv, lo); l != lo || h != hi {
				t.Fatalf("%v: Bounds(%d) = [%d, %d), want [%d, %d)", iv, lo, l, h, lo, hi)
			}
			name, err := Name("t", iv, lo)
			if err != nil {
				t.Fatal(err)
			}
			if name <= prevName {
				t.Fatalf("%v: name %q of %s does not sort after %q", iv, name, fmtMicros(lo), prevName)
			}
			prevName, lo = name, hi
		}
	}
}

// TestCivil checks the civil-date conversions on every day from 10 BC
// to 10010 AD (and the calendar path's on years 1 to 10000), and
// against the time package every 7th day.
func TestCivil(t *testing.T) {
	first := unixDays(-10, 1, 1)
	last := unixDays(10010, 12, 31)
	y, m, d := int64(-10), int64(1), int64(1)
	for n := first; n <= last; n++ {
		gy, gm, gd := civilDate(n)
		if gy != y || gm != m || gd != d {
			t.Fatalf("civilDate(%d) = %d-%d-%d, want %d-%d-%d", n, gy, gm, gd, y, m, d)
		}
		if got := unixDays(y, m, d); got != n {
			t.Fatalf("unixDays(%d-%d-%d) = %d, want %d", y, m, d, got, n)
		}
		if y >= 1 && y <= 10000 {
			month := 12*y + m - 1
			if got := monthOfMarchDay(uint32(n + daysFromCivil0)); int64(got) != month {
				t.Fatalf("monthOfMarchDay(%d-%d-%d) = %d, want %d", y, m, d, got, month)
			}
			if got := marchDayOfMonth(uint32(month)); d == 1 && int64(got) != n+daysFromCivil0 {
				t.Fatalf("marchDayOfMonth(%d-%d) = %d, want %d", y, m, got, n+daysFromCivil0)
			}
		}
		if n%7 == 0 {
			if want := time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC).Unix() / 86400; want != n {
				t.Fatalf("%d-%d-%d is day %d per the time package, %d here", y, m, d, want, n)
			}
		}
		if d++; d > daysIn(y, m) {
			d, m = 1, m+1
			if m > 12 {
				m, y = 1, y+1
			}
		}
	}
	if n := unixDays(1970, 1, 1); n != 0 {
		t.Errorf("unixDays(1970-01-01) = %d", n)
	}
	leap := map[int64]bool{2000: true, 2020: true, 2100: false, 1900: false, 2400: true, 0: true, -4: true, 1: false}
	for y, want := range leap {
		if got := daysIn(y, 2) == 29; got != want {
			t.Errorf("year %d leap = %v, want %v", y, got, want)
		}
	}
}

func TestBoundsNoAlloc(t *testing.T) {
	for _, iv := range testIntervals {
		ts := utc(t, "2019-01-07T13:45:00Z")
		if n := testing.AllocsPerRun(100, func() { _, _, _ = Bounds(iv, ts) }); n != 0 {
			t.Errorf("Bounds(%v) allocates %v times", iv, n)
		}
	}
}

func FuzzBounds(f *testing.F) {
	f.Add(int32(0), int32(7), int64(0), int64(0))
	f.Add(int32(1), int32(0), int64(0), MinMicros)
	f.Add(int32(5), int32(0), int64(0), MaxMicros-1)
	f.Add(int32(0), int32(0), int64(3600e6), int64(-1))
	f.Add(int32(0), int32(1), int64(12*3600e6), int64(1547424000e6))
	f.Add(int32(0), int32(math.MaxInt32), int64(math.MaxInt64), int64(math.MinInt64))
	f.Add(int32(-1), int32(0), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, mon, dd int32, us, ts int64) {
		// The raw fields are mostly invalid or out of range; shaped ones
		// mostly valid.
		abs := func(v int64) int64 { return max(v, -v, 0) }
		for _, iv := range []Interval{
			{Months: mon, Days: dd, Micros: us},
			{Months: int32(abs(int64(mon)) % 1300)},
			{Days: int32(abs(int64(dd)) % 40000), Micros: abs(us) % (1000 * dayMicros) / secondMicros * secondMicros},
		} {
			fuzzBoundsCheck(t, iv, ts)
			fuzzBoundsCheck(t, iv, MinMicros+abs(ts)%(MaxMicros-MinMicros))
		}
	})
}

func fuzzBoundsCheck(t *testing.T, iv Interval, ts int64) {
	lo, hi, err := Bounds(iv, ts)
	inRange := ts >= MinMicros && ts < MaxMicros
	if (err == nil) != (inRange && iv.Validate() == nil) {
		t.Fatalf("Bounds(%+v, %d) error %v, but Validate() = %v, in range %v", iv, ts, err, iv.Validate(), inRange)
	}
	if err != nil {
		if n := Next(iv, ts); n < MinMicros || n > MaxMicros {
			t.Fatalf("Next(%+v, %d) = %d, outside the range", iv, ts, n)
		}
		return
	}
	checkPartition(t, iv, ts, lo, hi)
	if wlo, whi := oracle(iv, ts); lo != wlo || hi != whi {
		t.Fatalf("Bounds(%+v, %d) = [%d, %d), oracle [%d, %d)", iv, ts, lo, hi, wlo, whi)
	}
	if _, err := Name("t", iv, lo); err != nil {
		t.Fatalf("Name(%+v, %d): %v", iv, lo, err)
	}
}

func BenchmarkBounds(b *testing.B) {
	for _, c := range []struct {
		name string
		iv   Interval
	}{
		{"hour", dur(time.Hour)},
		{"day", days(1)},
		{"90min", dur(90 * time.Minute)},
		{"week", days(7)},
		{"month", months(1)},
		{"quarter", months(3)},
	} {
		b.Run(c.name, func(b *testing.B) {
			start := time.Date(2019, 1, 7, 13, 45, 0, 0, time.UTC).UnixMicro()
			end := time.Date(2029, 1, 7, 13, 45, 0, 0, time.UTC).UnixMicro()
			ts := start
			var sink int64
			b.ReportAllocs()
			for b.Loop() {
				lo, _, _ := Bounds(c.iv, ts)
				sink += lo
				// About 17 minutes on, so that partitions change.
				if ts += 997_000_123; ts >= end {
					ts = start
				}
			}
			if sink == 0 {
				b.Log(sink)
			}
		})
	}
}
