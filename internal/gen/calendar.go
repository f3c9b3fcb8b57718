package gen

// Civil time in the proleptic Gregorian calendar, UTC, for the years the
// generators produce (1 to 9999; Options.Validate keeps them there).

const (
	microsPerSecond = 1_000_000
	secondsPerDay   = 86_400
	microsPerDay    = secondsPerDay * microsPerSecond

	// minMicros is 0001-01-01 00:00:00 UTC and endMicros 10000-01-01
	// 00:00:00 UTC (exclusive): every generated time lies in between, so
	// it has a four-digit year.
	minMicros = -62135596800 * microsPerSecond
	endMicros = 253402300800 * microsPerSecond
)

// floorDiv is a/b rounded toward minus infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// daysFromCivil returns the days from 1970-01-01 to the date y-m-d.
//
// It counts in 400-year eras that start on March 1st, so that a leap day
// is the last day of its (March-based) year:
//
//	day = 146097·era + 365·yoe + ⌊yoe/4⌋ - ⌊yoe/100⌋ + day of year - 719468
//
// where 719468 is the number of days from 0000-03-01 to 1970-01-01.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400 // [0, 399]
	mp := (m + 9) % 12 // March = 0
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365]
	mp := (5*doy + 2) / 153                                // [0, 11]
	d = doy - (153*mp+2)/5 + 1
	m = (mp+2)%12 + 1
	y = yoe + era*400
	if m <= 2 {
		y++
	}
	return y, m, d
}

// appendCivil appends micros as "YYYY-MM-DD" sep "HH:MM:SS.ffffff" (UTC).
// micros must lie in [minMicros, endMicros).
func appendCivil(dst []byte, micros int64, sep byte) []byte {
	days := floorDiv(micros, microsPerDay)
	rem := micros - days*microsPerDay
	y, m, d := civilFromDays(days)
	secs := rem / microsPerSecond
	frac := rem % microsPerSecond
	var b [26]byte
	put4(b[0:], y)
	b[4] = '-'
	put2(b[5:], m)
	b[7] = '-'
	put2(b[8:], d)
	b[10] = sep
	put2(b[11:], secs/3600)
	b[13] = ':'
	put2(b[14:], secs/60%60)
	b[16] = ':'
	put2(b[17:], secs%60)
	b[19] = '.'
	put2(b[20:], frac/10000)
	put2(b[22:], frac/100%100)
	put2(b[24:], frac%100)
	return append(dst, b[:]...)
}

// put2 writes v (0 to 99) as two digits.
func put2(b []byte, v int64) {
	b[0] = byte('0' + v/10)
	b[1] = byte('0' + v%10)
}

// put4 writes v (0 to 9999) as four digits.
func put4(b []byte, v int64) {
	put2(b, v/100)
	put2(b[2:], v%100)
}
