package partition

import (
	"errors"
	"fmt"
	"time"
)

// The supported time range, in microseconds since the Unix epoch, UTC:
// [MinMicros, MaxMicros) is 0001-01-01T00:00:00Z up to, not including,
// 10000-01-01T00:00:00Z, the years PostgreSQL prints with four digits and
// no era.
const (
	MinMicros int64 = -62_135_596_800_000_000
	MaxMicros int64 = 253_402_300_800_000_000
)

// ErrOutOfRange is wrapped by errors for times outside [MinMicros,
// MaxMicros).
var ErrOutOfRange = errors.New("outside the supported time range, years 0001 to 9999 UTC")

// rangeError says micros is out of range.
func rangeError(micros int64) error {
	return fmt.Errorf("time %s (%d µs since the epoch) is %w",
		time.UnixMicro(micros).UTC().Format(time.RFC3339Nano), micros, ErrOutOfRange)
}

// mondayMicros is 1970-01-05T00:00:00Z, the first Monday of the epoch, to
// which weekly partitions are aligned.
const mondayMicros = 4 * dayMicros

// Bounds returns the partition [lo, hi) that holds t (all in micros) for
// the interval iv:
//
//   - Calendar: N months aligned to whole months counted from 1970-01,
//     so 3 months start in January, April, July and October.
//   - Weekly: N weeks aligned to Monday 1970-01-05.
//   - Fixed: floor(t/d)*d for the duration d, aligned to the epoch.
//
// The first and last partitions of the supported range are cut at
// MinMicros and MaxMicros when the alignment falls outside it, so
// MinMicros <= lo <= t < hi <= MaxMicros always holds. The error wraps
// ErrOutOfRange when t is outside [MinMicros, MaxMicros), and
// ErrInvalidInterval when iv is invalid. Bounds does not allocate unless
// it fails; it is meant for per-row use.
func Bounds(iv Interval, t int64) (lo, hi int64, err error) {
	if t < MinMicros || t >= MaxMicros {
		return 0, 0, rangeError(t)
	}
	if iv.calendar() {
		lo, hi = calendarBounds(int64(iv.Months), t)
	} else if d, ok := iv.duration(); !ok {
		return 0, 0, iv.Validate()
	} else if d%weekMicros == 0 {
		lo = floorDiv(t-mondayMicros, d)*d + mondayMicros
		hi = lo + d
	} else {
		lo = floorDiv(t, d) * d
		hi = lo + d
	}
	return max(lo, MinMicros), min(hi, MaxMicros), nil
}

// Next returns the start of the partition following the one that holds lo,
// which is that partition's upper bound: Next(iv, lo) == hi for the lo and
// hi of Bounds. It saturates: it returns MinMicros for lo before the
// supported range, and MaxMicros for lo at or after the start of the last
// partition, or when iv is invalid, so that a loop advancing with Next
// always ends.
func Next(iv Interval, lo int64) int64 {
	if lo < MinMicros {
		return MinMicros
	}
	_, hi, err := Bounds(iv, lo)
	if err != nil {
		return MaxMicros
	}
	return hi
}

// calendarBounds returns the n-month partition holding t; t is in range.
func calendarBounds(n, t int64) (lo, hi int64) {
	y, m, _ := civilDate(floorDiv(t, dayMicros))
	month := (y-1970)*12 + m - 1
	start := floorDiv(month, n) * n
	return monthStartMicros(start), monthStartMicros(start + n)
}

// monthStartMicros returns the first instant of the month that is month
// months after 1970-01 (negative before it).
func monthStartMicros(month int64) int64 {
	y := 1970 + floorDiv(month, 12)
	m := month - floorDiv(month, 12)*12 + 1
	return unixDays(y, m, 1) * dayMicros
}

// floorDiv returns floor(a/b) for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// ceilDiv returns ceil(a/b) for b > 0.
func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b > 0 {
		q++
	}
	return q
}

// Civil-date arithmetic on the proleptic Gregorian calendar, in 400-year
// eras of 146097 days, with years starting on March 1 so that the leap day
// is the last day of a year. Year 0 is 1 BC. Valid for any date whose day
// count fits int64 with room to spare (far beyond PostgreSQL's range).

// daysFromCivil0 is the day number of 1970-01-01 counted from 0000-03-01.
const daysFromCivil0 = 719468

// unixDays returns the number of days from 1970-01-01 to y-m-d (negative
// before it). m is 1..12 and d is 1..31; d may run past the month's end,
// which counts on into the next months.
func unixDays(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yearOfEra := y - era*400       // 0..399
	monthFromMarch := (m + 9) % 12 // March = 0, February = 11
	dayOfYear := (153*monthFromMarch+2)/5 + d - 1
	dayOfEra := yearOfEra*365 + yearOfEra/4 - yearOfEra/100 + dayOfYear
	return era*146097 + dayOfEra - daysFromCivil0
}

// civilDate returns the date (year, month 1..12, day 1..31) that is days
// days after 1970-01-01.
func civilDate(days int64) (y, m, d int64) {
	z := days + daysFromCivil0
	era := floorDiv(z, 146097)
	dayOfEra := z - era*146097 // 0..146096
	yearOfEra := (dayOfEra - dayOfEra/1460 + dayOfEra/36524 - dayOfEra/146096) / 365
	dayOfYear := dayOfEra - (365*yearOfEra + yearOfEra/4 - yearOfEra/100)
	monthFromMarch := (5*dayOfYear + 2) / 153
	d = dayOfYear - (153*monthFromMarch+2)/5 + 1
	m = monthFromMarch + 3
	if m > 12 {
		m -= 12
	}
	y = yearOfEra + era*400
	if m <= 2 {
		y++
	}
	return y, m, d
}

// daysIn returns the number of days in month m of year y.
func daysIn(y, m int64) int64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
