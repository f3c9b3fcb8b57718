package copyenc

import (
	"math"
	"strconv"
	"unsafe"
)

// ParseTimestamp reads a timestamp with time zone in the ISO 8601 /
// PostgreSQL ISO spellings and returns Unix micros (InfinityMicros and
// NegInfinityMicros for "infinity" and "-infinity"). A value without a
// zone is taken as UTC, which is what PostgreSQL does in the loader's
// sessions (they run with TimeZone=UTC). Accepted:
//
//	2024-01-02                        midnight
//	2024-01-02 03:04                  'T' or 't' instead of the space(s) too
//	2024-01-02 03:04:05
//	2024-01-02 03:04:05.123456789     more than 6 digits: rounded as PostgreSQL does
//	... 03:04:05Z                     also z, UTC, +HH, +HHMM, +HH:MM, +HH:MM:SS
//	                                  (±15:59:59 at most), after optional spaces
//	... BC                            after a space, at the end: years before 1 AD
//	infinity, -infinity               any case
//
// with white space around, 1- or 2-digit month, day, hour, minute and
// second, and a year of 4 to 7 digits. 24:00:00 is the next midnight, as
// in PostgreSQL; a leap second (:60) is rejected. Everything else
// PostgreSQL might accept (named zones, "now", "epoch", textual months,
// Julian days, 2-digit years) is rejected with a reason, never guessed.
//
// Values PostgreSQL accepts past 294246-12-31 do not fit in int64 Unix
// micros and are rejected here (the codecs, which count from 2000, accept
// PostgreSQL's whole range).
func ParseTimestamp(text []byte) (micros int64, err error) {
	return unixTimestamp(text, true)
}

// ParseLocalTimestamp is ParseTimestamp for timestamp without time zone:
// a zone in the text is ignored, as PostgreSQL ignores it for that type.
func ParseLocalTimestamp(text []byte) (micros int64, err error) {
	return unixTimestamp(text, false)
}

func unixTimestamp(text []byte, withTZ bool) (int64, error) {
	typ := "timestamp without time zone"
	if withTZ {
		typ = "timestamp with time zone"
	}
	t, reason := parsePGTimestamp(text, withTZ)
	if reason != "" {
		return 0, valueError(typ, text, reason)
	}
	switch {
	case t == math.MaxInt64:
		return InfinityMicros, nil
	case t == math.MinInt64:
		return NegInfinityMicros, nil
	case t >= math.MaxInt64-epochMicros:
		return 0, valueError(typ, text, "out of range for Unix microseconds")
	}
	return t + epochMicros, nil
}

// ParseDate reads a date spelled YYYY-MM-DD (4 to 7 year digits, 1- or
// 2-digit month and day, optional " BC", white space around) or
// infinity/-infinity, and returns days since 1970-01-01 (InfinityDays and
// NegInfinityDays for the infinities). A time of day is rejected (date_in
// would drop it silently).
func ParseDate(text []byte) (days int32, err error) {
	d, reason := parsePGDate(text)
	if reason != "" {
		return 0, valueError("date", text, reason)
	}
	switch d {
	case math.MaxInt32:
		return InfinityDays, nil
	case math.MinInt32:
		return NegInfinityDays, nil
	}
	return d + epochDays, nil
}

// maxDateTimeLen bounds the text of a timestamp; PostgreSQL itself rejects
// spellings much longer than its 128-byte MAXDATELEN.
const maxDateTimeLen = 100

// dateScanner reads the fields of a date or timestamp.
type dateScanner struct {
	s []byte
	i int
}

// digits reads at least min and at most max decimal digits as an int.
func (p *dateScanner) digits(min, max int) (int, bool) {
	v, n := 0, 0
	for n < max && p.i < len(p.s) && isDigit(p.s[p.i]) {
		v = v*10 + int(p.s[p.i]-'0')
		p.i++
		n++
	}
	return v, n >= min
}

func (p *dateScanner) byte(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *dateScanner) spaces() int {
	n := 0
	for p.i < len(p.s) && isSpace(p.s[p.i]) {
		p.i++
		n++
	}
	return n
}

func (p *dateScanner) done() bool { return p.i == len(p.s) }

// bc reads an optional " BC" suffix (at least one space, any case) and
// reports whether it was there; anything else left over is an error.
func (p *dateScanner) bc() (bc, ok bool) {
	if p.done() {
		return false, true
	}
	if p.spaces() == 0 {
		return false, false
	}
	rest := p.s[p.i:]
	if equalFold(rest, "bc") {
		p.i = len(p.s)
		return true, true
	}
	return false, false
}

// ymd reads YYYY-MM-DD; checkDate validates it once BC is known.
func (p *dateScanner) ymd() (y int64, m, d int, reason string) {
	yy, ok := p.digits(4, 7)
	if !ok || !p.byte('-') {
		return 0, 0, 0, "not in YYYY-MM-DD form"
	}
	m, ok1 := p.digits(1, 2)
	ok2 := p.byte('-')
	d, ok3 := p.digits(1, 2)
	if !ok1 || !ok2 || !ok3 {
		return 0, 0, 0, "not in YYYY-MM-DD form"
	}
	return int64(yy), m, d, ""
}

// checkDate applies BC and validates the date as ValidateDate and
// IS_VALID_JULIAN do; it returns the astronomical year.
func checkDate(y int64, m, d int, bc bool) (int64, string) {
	if y == 0 {
		return 0, "year 0 does not exist"
	}
	if bc {
		y = 1 - y
	}
	if m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return 0, "no such date"
	}
	if y < julianMinYear || y == julianMinYear && m < julianMinMonth || y >= julianMaxYear {
		return 0, "out of range"
	}
	return y, ""
}

// parsePGDate parses a date (see ParseDate) to PostgreSQL days.
func parsePGDate(text []byte) (int32, string) {
	s := trimSpace(text)
	switch {
	case equalFold(s, "infinity"):
		return math.MaxInt32, ""
	case equalFold(s, "-infinity"):
		return math.MinInt32, ""
	case len(s) > maxDateTimeLen:
		return 0, "too long"
	}
	p := dateScanner{s: s}
	y, m, d, reason := p.ymd()
	if reason != "" {
		return 0, reason
	}
	bc, ok := p.bc()
	if !ok {
		return 0, "not a date (only YYYY-MM-DD [BC] is accepted)"
	}
	if y, reason = checkDate(y, m, d, bc); reason != "" {
		return 0, reason
	}
	days := daysFromCivil(y, m, d) - epochDays
	if days < minPGDays || days >= endPGDays {
		return 0, "out of range"
	}
	return int32(days), ""
}

// parsePGTimestamp parses a timestamp (see ParseTimestamp) to PostgreSQL
// micros; with withTZ a zone is applied, else ignored.
func parsePGTimestamp(text []byte, withTZ bool) (int64, string) {
	s := trimSpace(text)
	switch {
	case equalFold(s, "infinity"):
		return math.MaxInt64, ""
	case equalFold(s, "-infinity"):
		return math.MinInt64, ""
	case len(s) > maxDateTimeLen:
		return 0, "too long"
	}
	p := dateScanner{s: s}
	y, m, d, reason := p.ymd()
	if reason != "" {
		return 0, reason
	}
	var tod, zone int64 // micros of the day; zone offset east of UTC in seconds
	mark := p.i
	if p.byte('T') || p.byte('t') || p.spaces() > 0 && p.i < len(p.s) && isDigit(p.s[p.i]) {
		if tod, reason = p.timeOfDay(); reason != "" {
			return 0, reason
		}
		mark = p.i
		if z, found, ok := p.zone(); !ok {
			return 0, "invalid time zone (accepted: Z, UTC, ±HH, ±HHMM, ±HH:MM, ±HH:MM:SS)"
		} else if found {
			zone = z
			mark = p.i
		}
	}
	p.i = mark
	bc, ok := p.bc()
	if !ok {
		return 0, "not an ISO 8601 timestamp"
	}
	if y, reason = checkDate(y, m, d, bc); reason != "" {
		return 0, reason
	}
	days := daysFromCivil(y, m, d) - epochDays
	// A zone or 24:00 moves the value by less than a day either way; past
	// that the value is out of range, and the product below cannot overflow.
	if days < minPGDays-1 || days > endPGTimestamp/86400 {
		return 0, "out of range"
	}
	t := days*microsPerDay + tod
	if withTZ {
		t -= zone * 1000000
	}
	if t < minPGMicros || t >= endPGMicros {
		return 0, "out of range"
	}
	return t, ""
}

// timeOfDay reads HH:MM[:SS[.fraction]] and returns micros since midnight
// (24:00:00 included).
func (p *dateScanner) timeOfDay() (int64, string) {
	h, ok1 := p.digits(1, 2)
	ok2 := p.byte(':')
	mi, ok3 := p.digits(1, 2)
	if !ok1 || !ok2 || !ok3 {
		return 0, "invalid time of day"
	}
	sec, fsec := 0, int64(0)
	if p.byte(':') {
		var ok bool
		if sec, ok = p.digits(1, 2); !ok {
			return 0, "invalid time of day"
		}
		if p.byte('.') {
			start := p.i - 1
			for p.i < len(p.s) && isDigit(p.s[p.i]) {
				p.i++
			}
			if p.i == start+1 {
				return 0, "invalid fraction of a second"
			}
			fsec = fracMicros(p.s[start:p.i])
		}
	}
	if h > 24 || mi > 59 || sec > 59 || h == 24 && (mi > 0 || sec > 0 || fsec > 0) {
		return 0, "time of day out of range"
	}
	return (int64(h)*3600+int64(mi)*60+int64(sec))*1000000 + fsec, ""
}

// fracMicros converts ".ddd" to microseconds as PostgreSQL does: with up
// to six digits exactly; with more, rint(strtod(".ddd") * 1e6) in double
// precision (round half to even on the product), which may give 1000000.
func fracMicros(frac []byte) int64 {
	digits := frac[1:]
	if len(digits) <= 6 {
		var us int64
		for _, c := range digits {
			us = us*10 + int64(c-'0')
		}
		for range 6 - len(digits) {
			us *= 10
		}
		return us
	}
	f, _ := strconv.ParseFloat(unsafe.String(unsafe.SliceData(frac), len(frac)), 64)
	return int64(math.RoundToEven(f * 1e6))
}

// zone reads an optional zone after optional spaces. found is false (and
// nothing consumed) when none is there; ok is false for a malformed one.
func (p *dateScanner) zone() (secs int64, found, ok bool) {
	start := p.i
	p.spaces()
	if p.done() {
		p.i = start
		return 0, false, true
	}
	switch c := p.s[p.i]; c {
	case 'Z', 'z':
		p.i++
		return 0, true, true
	case 'U', 'u':
		if len(p.s)-p.i >= 3 && equalFold(p.s[p.i:p.i+3], "utc") {
			p.i += 3
			return 0, true, true
		}
	case '+', '-':
		p.i++
		h, okh := p.digits(2, 2)
		if !okh {
			return 0, true, false
		}
		m, sec := 0, 0
		if p.i < len(p.s) && isDigit(p.s[p.i]) {
			if m, okh = p.digits(2, 2); !okh {
				return 0, true, false
			}
		} else if p.byte(':') {
			if m, okh = p.digits(2, 2); !okh {
				return 0, true, false
			}
			if p.byte(':') {
				if sec, okh = p.digits(2, 2); !okh {
					return 0, true, false
				}
			}
		}
		if h > 15 || m > 59 || sec > 59 {
			return 0, true, false
		}
		off := int64(h*3600 + m*60 + sec)
		if c == '-' {
			off = -off
		}
		return off, true, true
	}
	p.i = start
	return 0, false, true
}
