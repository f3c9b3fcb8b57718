package partition

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// Interval constructors for tests.
func months(n int32) Interval { return Interval{Months: n} }
func days(n int32) Interval   { return Interval{Days: n} }
func dur(d time.Duration) Interval {
	return Interval{Micros: d.Microseconds()}
}

func TestIntervalValidate(t *testing.T) {
	valid := []Interval{
		months(1), months(3), months(12), months(1200),
		days(1), days(7), days(14), days(36525),
		dur(time.Second), dur(time.Minute), dur(time.Hour), dur(90 * time.Minute), dur(36 * time.Hour),
		{Days: 1, Micros: 3600e6}, {Days: 36524, Micros: 86400e6}, {Micros: maxIntervalMicros},
	}
	for _, iv := range valid {
		if err := iv.Validate(); err != nil {
			t.Errorf("%+v.Validate() = %v, want nil", iv, err)
		}
	}
	invalid := []struct {
		iv   Interval
		want string // in the message
	}{
		{Interval{}, `"00:00:00" is zero`},
		{months(-1), `"-1 mons" is negative`},
		{days(-7), `"-7 days" is negative`},
		{dur(-time.Hour), `"-01:00:00" is negative`},
		{Interval{Days: 1, Micros: -1}, "negative"},
		{Interval{Months: 1, Days: -1}, "negative"},
		{Interval{Months: 1, Days: 1}, `"1 mon 1 day" mixes months with days or time: an interval is either calendar months/years or a fixed duration`},
		{Interval{Months: 1, Micros: 3600e6}, "mixes months"},
		{dur(500 * time.Millisecond), `"00:00:00.5" is under 1 second`},
		{Interval{Micros: 1}, "under 1 second"},
		{dur(1500 * time.Millisecond), `"00:00:01.5" is not a whole number of seconds`},
		{Interval{Days: 1, Micros: 1}, "not a whole number of seconds"},
		{months(1201), `"100 years 1 mon" is over 100 years`},
		{months(math.MaxInt32), "over 100 years"},
		{days(36526), "over 100 years"},
		{days(math.MaxInt32), "over 100 years"},
		{Interval{Days: 36525, Micros: 1e6}, "over 100 years"},
		{Interval{Micros: math.MaxInt64}, "over 100 years"},
		{Interval{Days: math.MaxInt32, Micros: math.MaxInt64}, "over 100 years"},
	}
	for _, c := range invalid {
		err := c.iv.Validate()
		if err == nil {
			t.Errorf("%+v.Validate() = nil, want an error", c.iv)
			continue
		}
		if !errors.Is(err, ErrInvalidInterval) {
			t.Errorf("%+v.Validate() = %v, does not wrap ErrInvalidInterval", c.iv, err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v.Validate() = %q, want it to contain %q", c.iv, err, c.want)
		}
	}
}

func TestIntervalKind(t *testing.T) {
	cases := []struct {
		iv   Interval
		want Kind
	}{
		{months(1), Calendar},
		{months(3), Calendar},
		{months(12), Calendar},
		{days(7), Weekly},
		{days(14), Weekly},
		{days(364), Weekly},
		{dur(7 * 24 * time.Hour), Weekly},
		{Interval{Days: 6, Micros: 86400e6}, Weekly},
		{Interval{Days: 13, Micros: 86400e6}, Weekly},
		{days(1), Fixed},
		{days(6), Fixed},
		{days(8), Fixed},
		{dur(time.Hour), Fixed},
		{dur(90 * time.Minute), Fixed},
		{dur(36 * time.Hour), Fixed},
		{Interval{Days: 7, Micros: 1e6}, Fixed},
		// Invalid intervals are Fixed: neither months only nor whole weeks.
		{Interval{}, Fixed},
		{days(-7), Fixed},
		{Interval{Months: 1, Days: 7}, Fixed},
		{Interval{Days: math.MaxInt32, Micros: math.MaxInt64}, Fixed},
	}
	for _, c := range cases {
		if got := c.iv.Kind(); got != c.want {
			t.Errorf("%+v.Kind() = %v, want %v", c.iv, got, c.want)
		}
	}
	if s := Kind(0).String(); s != "Kind(0)" {
		t.Errorf("Kind(0).String() = %q", s)
	}
}

// TestIntervalString checks the text against PostgreSQL's own output
// (IntervalStyle postgres), which was read from a PostgreSQL 15 server
// for every case below: SELECT '<text>'::interval::text.
func TestIntervalString(t *testing.T) {
	cases := []struct {
		iv   Interval
		want string
	}{
		{months(1), "1 mon"},
		{months(3), "3 mons"},
		{months(12), "1 year"},
		{months(14), "1 year 2 mons"},
		{months(24), "2 years"},
		{months(1200), "100 years"},
		{days(1), "1 day"},
		{days(7), "7 days"},
		{dur(time.Hour), "01:00:00"},
		{dur(36 * time.Hour), "36:00:00"},
		{dur(90 * time.Minute), "01:30:00"},
		{dur(time.Second), "00:00:01"},
		{dur(876600 * time.Hour), "876600:00:00"},
		{Interval{Days: 1, Micros: 3600e6}, "1 day 01:00:00"},
		{Interval{}, "00:00:00"},
		{dur(500 * time.Millisecond), "00:00:00.5"},
		{Interval{Micros: 1}, "00:00:00.000001"},
		{Interval{Micros: 1_234_560}, "00:00:01.23456"},
		{days(-1), "-1 days"},
		{dur(-time.Hour), "-01:00:00"},
		{Interval{Months: 1, Days: -1}, "1 mon -1 days"},
		{Interval{Months: -1, Days: 1}, "-1 mons +1 day"},
		{Interval{Days: 1, Micros: -3600e6}, "1 day -01:00:00"},
		{Interval{Days: -2, Micros: 3600e6}, "-2 days +01:00:00"},
		{months(-14), "-1 years -2 mons"},
		{Interval{Months: 1, Days: 1}, "1 mon 1 day"},
		{Interval{Micros: math.MinInt64}, "-2562047788:00:54.775808"},
		{Interval{Micros: math.MaxInt64}, "2562047788:00:54.775807"},
	}
	for _, c := range cases {
		if got := c.iv.String(); got != c.want {
			t.Errorf("%+v.String() = %q, want %q", c.iv, got, c.want)
		}
	}
}

// TestIntervalStringNoAlloc: String allocates only its result.
func TestIntervalStringNoAlloc(t *testing.T) {
	iv := Interval{Months: -14, Days: 3, Micros: -5_400_000_001}
	if n := testing.AllocsPerRun(100, func() { _ = iv.String() }); n > 1 {
		t.Errorf("String allocates %v times, want 1", n)
	}
}

// TestIntervalHuman: lengths read as words, so that `table list` shows
// "1 hour" beside "7 days" (it showed 01:00:00).
func TestIntervalHuman(t *testing.T) {
	for _, c := range []struct {
		iv   Interval
		want string
	}{
		{dur(time.Hour), "1 hour"},
		{days(7), "7 days"},
		{Interval{Months: 14}, "1 year 2 months"},
		{Interval{Days: 1, Micros: 3600e6}, "1 day 1 hour"},
		{dur(90 * time.Minute), "1 hour 30 minutes"},
		{dur(15 * time.Minute), "15 minutes"},
		{dur(time.Second), "1 second"},
		{dur(1500 * time.Millisecond), "1.5 seconds"},
		{dur(2*time.Hour + 3*time.Second), "2 hours 3 seconds"},
		{dur(-time.Hour), "-01:00:00"},
		{Interval{}, "00:00:00"},
	} {
		if got := c.iv.Human(); got != c.want {
			t.Errorf("%+v.Human() = %q, want %q", c.iv, got, c.want)
		}
	}
}
