package copyenc

import "math"

// PostgreSQL uses the proleptic Gregorian calendar for all dates, with
// astronomical year numbering inside (year 0 is 1 BC, -1 is 2 BC) and the
// "BC" suffix outside. Its range starts at Julian day 0, 4714-11-24 BC:
//
//	timestamp  4714-11-24 00:00:00 BC  ≤ t <  294277-01-01 00:00:00
//	date       4714-11-24 BC           ≤ d <  5874898-01-01
//
// Below, "PostgreSQL days" and "PostgreSQL micros" count from 2000-01-01.
const (
	microsPerDay = 86400_000000

	minPGDays      = -2451545                      // 4714-11-24 BC (Julian day 0)
	endPGDays      = 2147483494 - 2451545          // 5874898-01-01, exclusive
	minPGMicros    = minPGDays * microsPerDay      // MIN_TIMESTAMP
	endPGTimestamp = (109203528 - 2451545) * 86400 // 294277-01-01 in seconds
	endPGMicros    = endPGTimestamp * 1000000      // END_TIMESTAMP, exclusive

	julianMinYear  = -4713 // IS_VALID_JULIAN: from November of 4714 BC
	julianMinMonth = 11
	julianMaxYear  = 5874898
)

// daysFromCivil returns the days from 1970-01-01 to the proleptic
// Gregorian date y-m-d (astronomical year), for any int32 year.
//
// It counts in 400-year eras starting on March 1st, so that the leap day
// is the last day of an era-year:
//
//	era = ⌊y' / 400⌋ where y' = y - (m <= 2)
//	day of era = 365·yoe + ⌊yoe/4⌋ - ⌊yoe/100⌋ + day of the March-based year
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv64(y, 400)
	yoe := y - era*400 // [0, 399]
	mp := (m + 9) % 12 // March = 0
	doy := int64((153*mp+2)/5 + d - 1)
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468 // 719468: 0000-03-01 to 1970-01-01
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y int64, m, d int) {
	z += 719468
	era := floorDiv64(z, 146097)
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365]
	mp := (5*doy + 2) / 153                                // [0, 11]
	d = int(doy - (153*mp+2)/5 + 1)
	m = int((mp+2)%12) + 1
	y = yoe + era*400
	if m <= 2 {
		y++
	}
	return y, m, d
}

func floorDiv64(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// daysIn returns the number of days of month m of year y.
func daysIn(y int64, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// appendPGTimestampText spells a PostgreSQL timestamp as timestamptz_out
// does in the ISO style with TimeZone UTC: "2024-01-02 03:04:05.5+00",
// "0044-03-15 12:00:00+00 BC", "infinity". PostgreSQL reads this back as
// the same value for timestamp and timestamptz alike.
func appendPGTimestampText(dst []byte, t int64) []byte {
	switch t {
	case math.MaxInt64:
		return append(dst, "infinity"...)
	case math.MinInt64:
		return append(dst, "-infinity"...)
	}
	days := floorDiv64(t, microsPerDay)
	tod := t - days*microsPerDay
	y, m, d := civilFromDays(days + epochDays)
	dst = appendYMD(dst, y, m, d)
	secs := tod / 1000000
	dst = append(dst, ' ')
	dst = append2(dst, int(secs/3600))
	dst = append(dst, ':')
	dst = append2(dst, int(secs/60%60))
	dst = append(dst, ':')
	dst = append2(dst, int(secs%60))
	if us := tod % 1000000; us != 0 {
		dst = append(dst, '.')
		div := int64(100000)
		for us != 0 {
			dst = append(dst, byte('0'+us/div))
			us %= div
			div /= 10
		}
	}
	dst = append(dst, "+00"...)
	if y <= 0 {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendPGDateText spells a PostgreSQL date as date_out does in the ISO
// style: "2024-01-02", "0044-03-15 BC", "infinity".
func appendPGDateText(dst []byte, days int32) []byte {
	switch days {
	case math.MaxInt32:
		return append(dst, "infinity"...)
	case math.MinInt32:
		return append(dst, "-infinity"...)
	}
	y, m, d := civilFromDays(int64(days) + epochDays)
	dst = appendYMD(dst, y, m, d)
	if y <= 0 {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendYMD writes YYYY-MM-DD, the year at least four digits and counted
// from 1 BC backwards when y <= 0 (the caller adds " BC").
func appendYMD(dst []byte, y int64, m, d int) []byte {
	if y <= 0 {
		y = 1 - y
	}
	for p := int64(1000); p > 1 && y < p; p /= 10 {
		dst = append(dst, '0')
	}
	dst = appendIntText(dst, y)
	dst = append(dst, '-')
	dst = append2(dst, m)
	dst = append(dst, '-')
	return append2(dst, d)
}

func append2(dst []byte, v int) []byte {
	return append(dst, byte('0'+v/10), byte('0'+v%10))
}
