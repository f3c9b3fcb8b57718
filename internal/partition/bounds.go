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
// it fails; it is meant for per-row use (a caller on a hot path can also
// keep the last [lo, hi) and skip Bounds while lo <= t < hi).
func Bounds(iv Interval, t int64) (lo, hi int64, err error) {
	if uint64(t-MinMicros) >= uint64(MaxMicros-MinMicros) {
		return 0, 0, rangeError(t)
	}
	// Fixed and weekly intervals first, as the common case: the checks are
	// those of Interval.duration, with the sign tests folded into unsigned
	// comparisons.
	if iv.Months == 0 && uint32(iv.Days) <= maxIntervalDays && uint64(iv.Micros) <= uint64(maxIntervalMicros) {
		d := int64(iv.Days)*dayMicros + iv.Micros
		if uint64(d-secondMicros) <= uint64(maxIntervalMicros-secondMicros) && d%secondMicros == 0 {
			var origin int64
			if d%weekMicros == 0 {
				origin = mondayMicros
			}
			lo = floorDiv(t-origin, d)*d + origin
			return max(lo, MinMicros), min(lo+d, MaxMicros), nil
		}
	}
	if !iv.calendar() {
		return 0, 0, iv.Validate()
	}
	lo, hi = calendarBounds(int64(iv.Months), t)
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

// calendarBounds returns the n-month partition holding t, which is in
// range, before cutting it to the range.
func calendarBounds(n, t int64) (lo, hi int64) {
	// Days since 0000-03-01; 306 at MinMicros, so unsigned arithmetic
	// (cheaper division by constants) applies.
	z := uint32(uint64(t-MinMicros)/uint64(dayMicros)) + minMarchDay
	month := int64(monthOfMarchDay(z)) - 1970*12
	start := month
	if n > 1 {
		start = floorDiv(month, n) * n
	}
	start += 1970 * 12
	hi = (int64(marchDayOfMonth(uint32(start+n))) - daysFromCivil0) * dayMicros
	// Month 12 is 0001-01, where the range starts.
	if start <= 12 {
		return MinMicros, hi
	}
	return (int64(marchDayOfMonth(uint32(start))) - daysFromCivil0) * dayMicros, hi
}

// minMarchDay is MinMicros in days since 0000-03-01.
const minMarchDay = 306

// monthOfMarchDay returns the month number (12*year + month - 1) of the
// day z counted from 0000-03-01: the calendar-path form of civilDate,
// in unsigned arithmetic.
func monthOfMarchDay(z uint32) uint32 {
	era := z / 146097
	dayOfEra := z - era*146097
	yearOfEra := (dayOfEra - dayOfEra/1460 + dayOfEra/36524 - dayOfEra/146096) / 365
	dayOfYear := dayOfEra - (365*yearOfEra + yearOfEra/4 - yearOfEra/100)
	monthFromMarch := (5*dayOfYear + 2) / 153
	// March is month 2 of its year; January and February, months 10 and
	// 11 from March, are months 0 and 1 of the next year: the same sum.
	return era*4800 + yearOfEra*12 + monthFromMarch + 2
}

// marchDayOfMonth returns the first day, counted from 0000-03-01, of the
// month number month (12*year + month - 1, at least 2): the inverse of
// monthOfMarchDay.
func marchDayOfMonth(month uint32) uint32 {
	fromMarch := month - 2
	era := fromMarch / 4800
	rest := fromMarch - era*4800
	yearOfEra := rest / 12
	monthFromMarch := rest - yearOfEra*12
	return era*146097 + yearOfEra*365 + yearOfEra/4 - yearOfEra/100 + (153*monthFromMarch+2)/5
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
