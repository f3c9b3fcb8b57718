package partition

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Interval is a PostgreSQL interval reduced to the three fields PostgreSQL
// stores: months, days and microseconds. A partition interval is either
// calendar months (Months only) or a fixed duration (Days and Micros, a day
// counting as exactly 24 hours since all partition math is in UTC).
type Interval struct {
	Months int32
	Days   int32
	Micros int64
}

// Kind is how an Interval's partitions are aligned.
type Kind int

// Interval kinds.
const (
	// Calendar intervals are whole months, aligned to whole months counted
	// from 1970-01: 1 month is each calendar month, 3 months are quarters,
	// 12 months are calendar years.
	Calendar Kind = iota + 1
	// Weekly intervals are whole weeks, aligned to Monday 1970-01-05, so
	// every partition starts on a Monday at midnight UTC.
	Weekly
	// Fixed intervals are any other fixed duration, aligned to the Unix
	// epoch: 1 day starts at midnight UTC, 1 hour on the hour.
	Fixed
)

// String returns the kind's name in lower case.
func (k Kind) String() string {
	switch k {
	case Calendar:
		return "calendar"
	case Weekly:
		return "weekly"
	case Fixed:
		return "fixed"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Units in microseconds.
const (
	secondMicros = int64(1_000_000)
	minuteMicros = 60 * secondMicros
	hourMicros   = 60 * minuteMicros
	dayMicros    = 24 * hourMicros
	weekMicros   = 7 * dayMicros
)

// Limits of a valid partition interval: at most 100 years (of 365.25 days
// for fixed durations), at least one second.
const (
	maxIntervalMonths = 100 * 12
	maxIntervalDays   = 36525
	maxIntervalMicros = maxIntervalDays * dayMicros
)

// ErrInvalidInterval is wrapped by the errors of Validate (and so of every
// function given an invalid partition interval).
var ErrInvalidInterval = errors.New("invalid partition interval")

// intervalError builds a Validate error: the interval as PostgreSQL prints
// it, what is wrong, and ErrInvalidInterval.
func intervalError(iv Interval, why string) error {
	return fmt.Errorf("partition interval %q %s (%w)", iv.String(), why, ErrInvalidInterval)
}

// Validate reports whether iv can be a partition interval: positive, either
// calendar months or a fixed duration (not both), a whole number of seconds
// of at least one second, and at most 100 years. The error wraps
// ErrInvalidInterval.
func (iv Interval) Validate() error {
	switch {
	case iv.Months < 0 || iv.Days < 0 || iv.Micros < 0:
		return intervalError(iv, "is negative in some field: a partition interval must be positive")
	case iv == Interval{}:
		return intervalError(iv, "is zero: a partition interval must be positive")
	case iv.Months > 0 && (iv.Days > 0 || iv.Micros > 0):
		return intervalError(iv, "mixes months with days or time: an interval is either calendar months/years or a fixed duration")
	case iv.Months > maxIntervalMonths:
		return intervalError(iv, "is over 100 years")
	case iv.Months > 0:
		return nil
	}
	// The first two conditions keep the sum from overflowing.
	if iv.Days > maxIntervalDays || iv.Micros > maxIntervalMicros || int64(iv.Days)*dayMicros+iv.Micros > maxIntervalMicros {
		return intervalError(iv, "is over 100 years")
	}
	d := int64(iv.Days)*dayMicros + iv.Micros
	if d < secondMicros {
		return intervalError(iv, "is under 1 second")
	}
	if d%secondMicros != 0 {
		return intervalError(iv, "is not a whole number of seconds")
	}
	return nil
}

// duration returns the length in micros of a valid fixed-duration interval,
// and false for anything else (calendar or invalid). It agrees with
// Validate and is cheap enough for the per-row path.
func (iv Interval) duration() (int64, bool) {
	if iv.Months != 0 || iv.Days < 0 || iv.Micros < 0 || iv.Days > maxIntervalDays || iv.Micros > maxIntervalMicros {
		return 0, false
	}
	d := int64(iv.Days)*dayMicros + iv.Micros
	if d < secondMicros || d > maxIntervalMicros || d%secondMicros != 0 {
		return 0, false
	}
	return d, true
}

// calendar reports whether iv is a valid calendar interval.
func (iv Interval) calendar() bool {
	return iv.Months > 0 && iv.Months <= maxIntervalMonths && iv.Days == 0 && iv.Micros == 0
}

// Kind returns how iv's partitions are aligned: Calendar for months only,
// Weekly for whole weeks (7 days, 14 days, 168:00:00, 6 days 24:00:00, …),
// Fixed for everything else. Kind does not validate iv.
func (iv Interval) Kind() Kind {
	if iv.Months != 0 {
		if iv.Days == 0 && iv.Micros == 0 {
			return Calendar
		}
		return Fixed
	}
	if iv.Days < 0 || iv.Micros < 0 || (iv.Days == 0 && iv.Micros == 0) {
		return Fixed
	}
	// Reduced modulo a week first, so that no product overflows.
	if (int64(iv.Days%7)*dayMicros+iv.Micros%weekMicros)%weekMicros == 0 {
		return Weekly
	}
	return Fixed
}

// String returns iv as PostgreSQL prints an interval with IntervalStyle
// postgres ("1 mon", "3 mons", "1 year", "1 year 2 mons", "7 days",
// "01:00:00", "1 day 01:30:00", "-1 days"), which ::interval reads back to
// the same three fields.
func (iv Interval) String() string {
	var buf [64]byte
	return string(iv.appendText(buf[:0]))
}

// Human renders iv in words for people: "1 hour", "1 day 1 hour",
// "1 year 2 months", "1.5 seconds" (String's "01:00:00" sits badly beside
// "7 days"). PostgreSQL reads it back as the same interval. A negative or
// zero interval, which no partition has, is rendered as String does.
func (iv Interval) Human() string {
	if iv.Months < 0 || iv.Days < 0 || iv.Micros < 0 || iv == (Interval{}) {
		return iv.String()
	}
	var parts []string
	add := func(v int64, unit string) {
		if v == 0 {
			return
		}
		if v != 1 {
			unit += "s"
		}
		parts = append(parts, strconv.FormatInt(v, 10)+" "+unit)
	}
	add(int64(iv.Months/12), "year")
	add(int64(iv.Months%12), "month")
	add(int64(iv.Days), "day")
	add(iv.Micros/hourMicros, "hour")
	add(iv.Micros%hourMicros/minuteMicros, "minute")
	if us := iv.Micros % minuteMicros; us%secondMicros == 0 {
		add(us/secondMicros, "second")
	} else {
		sec := strconv.FormatFloat(float64(us)/float64(secondMicros), 'f', -1, 64)
		parts = append(parts, sec+" seconds")
	}
	return strings.Join(parts, " ")
}

// appendText appends iv as PostgreSQL's EncodeInterval does for
// IntervalStyle postgres: each nonzero field among years, months and days,
// then the time of day as [-]HH:MM:SS[.ffffff] when it is nonzero or when
// nothing else was printed. A field after a negative one is prefixed with
// "+" when positive, as PostgreSQL does.
func (iv Interval) appendText(b []byte) []byte {
	empty, afterNegative := true, false
	part := func(v int64, unit string) {
		if v == 0 {
			return
		}
		if !empty {
			b = append(b, ' ')
		}
		if afterNegative && v > 0 {
			b = append(b, '+')
		}
		b = strconv.AppendInt(b, v, 10)
		b = append(b, ' ')
		b = append(b, unit...)
		if v != 1 {
			b = append(b, 's')
		}
		afterNegative, empty = v < 0, false
	}
	part(int64(iv.Months/12), "year")
	part(int64(iv.Months%12), "mon")
	part(int64(iv.Days), "day")
	if !empty && iv.Micros == 0 {
		return b
	}
	if !empty {
		b = append(b, ' ')
	}
	// Magnitude in uint64 so that math.MinInt64 has one.
	mag := uint64(iv.Micros)
	if iv.Micros < 0 {
		b = append(b, '-')
		mag = -mag
	} else if afterNegative {
		b = append(b, '+')
	}
	hours, rest := mag/uint64(hourMicros), mag%uint64(hourMicros)
	if hours < 10 {
		b = append(b, '0')
	}
	b = strconv.AppendUint(b, hours, 10)
	b = append(b, ':')
	b = append2(b, int(rest/uint64(minuteMicros)))
	b = append(b, ':')
	rest %= uint64(minuteMicros)
	b = append2(b, int(rest/uint64(secondMicros)))
	return appendFraction(b, int64(rest%uint64(secondMicros)))
}

// append2 appends v (0..99) as two digits.
func append2(b []byte, v int) []byte {
	return append(b, byte('0'+v/10), byte('0'+v%10))
}

// appendFraction appends "." and the micros (0..999999) without trailing
// zeros, or nothing when micros is zero.
func appendFraction(b []byte, micros int64) []byte {
	if micros == 0 {
		return b
	}
	var digits [6]byte
	for i := 5; i >= 0; i-- {
		digits[i] = byte('0' + micros%10)
		micros /= 10
	}
	n := 6
	for digits[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, digits[:n]...)
}
