package copyenc

// This file reads dates and timestamps the way PostgreSQL's datetime
// input does (ParseDateTime, then DecodeDateTime, in
// src/backend/utils/adt/datetime.c of PostgreSQL 15): the text is split
// into fields (numbers, words, times, dates, signed offsets), and each
// field is interpreted by its shape and by which fields came before. The
// quirks are PostgreSQL's and are kept on purpose: the differential test
// (difftest_test.go) holds this code to the server's answers.

import (
	"math"
	"strconv"
	"unsafe"
)

// Field kinds of the tokenizer (DTK_* of ParseDateTime).
const (
	ftNumber uint8 = iota + 1
	ftString
	ftDate
	ftTime
	ftTZ
	ftSpecial
)

// Field-type bits of DecodeDateTime's masks (the values of datetime.h, so
// that the same combinations collide).
const (
	fReserv     = 0
	fMonth      = 1
	fYear       = 2
	fDay        = 3
	fTZ         = 5
	fDTZ        = 6
	fDynTZ      = 7
	fIgnore     = 8
	fAMPM       = 9
	fHour       = 10
	fMinute     = 11
	fSecond     = 12
	fMillisec   = 13
	fMicrosec   = 14
	fDOY        = 15
	fDOW        = 16
	fUnits      = 17
	fADBC       = 18
	fISOTime    = 23
	fDTZMod     = 28
	fUnknown    = 31
	mDate       = 1<<fYear | 1<<fMonth | 1<<fDay
	mAllSecs    = 1<<fSecond | 1<<fMillisec | 1<<fMicrosec
	mTime       = 1<<fHour | 1<<fMinute | mAllSecs
	maxDateLen  = 128
	maxDateFlds = 25
)

// Values of RESERV and UNITS keywords (DTK_* values).
const (
	dtkDate = 2 + iota
	dtkEpoch
	dtkLate
	dtkEarly
	dtkNow
	dtkToday
	dtkTomorrow
	dtkYesterday
	dtkZulu
	dtkUnitYear
	dtkUnitMonth
	dtkUnitDay
	dtkUnitHour
	dtkUnitMinute
	dtkUnitSecond
	dtkUnitJulian
	dtkUnitTime
	dtkUnitOther // dow, doy, isodow, isoyear: never valid in a value
)

type keyword struct {
	typ, val int
}

// keywords is datetktbl: the words a date or timestamp may contain.
var keywords = map[string]keyword{
	"-infinity": {fReserv, dtkEarly}, "ad": {fADBC, 0}, "allballs": {fReserv, dtkZulu},
	"am": {fAMPM, amAM}, "at": {fIgnore, 0}, "bc": {fADBC, 1},
	"d": {fUnits, dtkUnitDay}, "dow": {fUnits, dtkUnitOther}, "doy": {fUnits, dtkUnitOther},
	"dst": {fDTZMod, 3600}, "epoch": {fReserv, dtkEpoch}, "h": {fUnits, dtkUnitHour},
	"infinity": {fReserv, dtkLate}, "isodow": {fUnits, dtkUnitOther}, "isoyear": {fUnits, dtkUnitOther},
	"j": {fUnits, dtkUnitJulian}, "jd": {fUnits, dtkUnitJulian}, "julian": {fUnits, dtkUnitJulian},
	"m": {fUnits, dtkUnitMonth}, "mm": {fUnits, dtkUnitMinute}, "now": {fReserv, dtkNow},
	"on": {fIgnore, 0}, "pm": {fAMPM, amPM}, "s": {fUnits, dtkUnitSecond},
	"t": {fISOTime, dtkUnitTime}, "today": {fReserv, dtkToday}, "tomorrow": {fReserv, dtkTomorrow},
	"y": {fUnits, dtkUnitYear}, "yesterday": {fReserv, dtkYesterday},
	"jan": {fMonth, 1}, "january": {fMonth, 1}, "feb": {fMonth, 2}, "february": {fMonth, 2},
	"mar": {fMonth, 3}, "march": {fMonth, 3}, "apr": {fMonth, 4}, "april": {fMonth, 4},
	"may": {fMonth, 5}, "jun": {fMonth, 6}, "june": {fMonth, 6}, "jul": {fMonth, 7},
	"july": {fMonth, 7}, "aug": {fMonth, 8}, "august": {fMonth, 8}, "sep": {fMonth, 9},
	"sept": {fMonth, 9}, "september": {fMonth, 9}, "oct": {fMonth, 10}, "october": {fMonth, 10},
	"nov": {fMonth, 11}, "november": {fMonth, 11}, "dec": {fMonth, 12}, "december": {fMonth, 12},
	"sun": {fDOW, 0}, "sunday": {fDOW, 0}, "mon": {fDOW, 1}, "monday": {fDOW, 1},
	"tue": {fDOW, 2}, "tues": {fDOW, 2}, "tuesday": {fDOW, 2}, "wed": {fDOW, 3},
	"wednesday": {fDOW, 3}, "weds": {fDOW, 3}, "thu": {fDOW, 4}, "thur": {fDOW, 4},
	"thurs": {fDOW, 4}, "thursday": {fDOW, 4}, "fri": {fDOW, 5}, "friday": {fDOW, 5},
	"sat": {fDOW, 6}, "saturday": {fDOW, 6},
}

const (
	amAM = 0
	amPM = 1
	hr24 = 2
)

// dtFields holds the tokenizer's output in a fixed buffer, as
// ParseDateTime's workbuf (MAXDATELEN + MAXDATEFIELDS bytes): longer
// input is refused exactly where PostgreSQL refuses it. It lives on the
// caller's stack.
type dtFields struct {
	buf   [maxDateLen + maxDateFlds]byte
	n     int
	start [maxDateFlds]uint8
	end   [maxDateFlds]uint8
	typ   [maxDateFlds]uint8
	nf    int
}

func (f *dtFields) field(i int) []byte { return f.buf[f.start[i]:f.end[i]] }

func (f *dtFields) put(c byte) bool {
	if f.n+1 >= len(f.buf) {
		return false
	}
	f.buf[f.n] = c
	f.n++
	return true
}

func isAlnum(c byte) bool { return isDigit(c) || isAlpha(c) }

// isPunct is C's ispunct for ASCII.
func isPunct(c byte) bool { return c > ' ' && c < 0x7f && !isAlnum(c) }

// tokenize is ParseDateTime: false means a malformed string.
func (f *dtFields) tokenize(s []byte) bool {
	i := 0
	at := func(k int) byte {
		if k < len(s) {
			return s[k]
		}
		return 0
	}
	for i < len(s) {
		c := s[i]
		if isSpace(c) {
			i++
			continue
		}
		if c == 0 || f.nf >= maxDateFlds {
			return false
		}
		f.start[f.nf] = uint8(f.n)
		var t uint8
		switch {
		case isDigit(c):
			for isDigit(at(i)) {
				if !f.put(s[i]) {
					return false
				}
				i++
			}
			switch d := at(i); {
			case d == ':':
				t = ftTime
				for d := at(i); isDigit(d) || d == ':' || d == '.'; d = at(i) {
					if !f.put(d) {
						return false
					}
					i++
				}
			case d == '-' || d == '/' || d == '.':
				if !f.put(d) {
					return false
				}
				i++
				if isDigit(at(i)) {
					t = ftDate
					if d == '.' {
						t = ftNumber
					}
					for isDigit(at(i)) {
						if !f.put(s[i]) {
							return false
						}
						i++
					}
					if at(i) == d {
						t = ftDate
						for e := at(i); isDigit(e) || e == d; e = at(i) {
							if !f.put(e) {
								return false
							}
							i++
						}
					}
				} else {
					t = ftDate
					for e := at(i); isAlnum(e) || e == d; e = at(i) {
						if !f.put(lower(e)) {
							return false
						}
						i++
					}
				}
			default:
				t = ftNumber
			}
		case c == '.':
			if !f.put(c) {
				return false
			}
			i++
			for isDigit(at(i)) {
				if !f.put(s[i]) {
					return false
				}
				i++
			}
			t = ftNumber
		case isAlpha(c):
			t = ftString
			for isAlpha(at(i)) {
				if !f.put(lower(s[i])) {
					return false
				}
				i++
			}
			isDate := false
			switch d := at(i); {
			case d == '-' || d == '/' || d == '.':
				isDate = true
			case d == '+' || isDigit(d):
				_, known := keywords[string(f.buf[f.start[f.nf]:f.n])]
				isDate = !known
			}
			if isDate {
				t = ftDate
				for {
					if !f.put(lower(at(i))) {
						return false
					}
					i++
					e := at(i)
					if !(e == '+' || e == '-' || e == '/' || e == '_' || e == '.' || e == ':' || isAlnum(e)) {
						break
					}
				}
			}
		case c == '+' || c == '-':
			if !f.put(c) {
				return false
			}
			i++
			for isSpace(at(i)) {
				i++
			}
			switch d := at(i); {
			case isDigit(d):
				t = ftTZ
				for e := at(i); isDigit(e) || e == ':' || e == '.' || e == '-'; e = at(i) {
					if !f.put(e) {
						return false
					}
					i++
				}
			case isAlpha(d):
				t = ftSpecial
				for isAlpha(at(i)) {
					if !f.put(lower(s[i])) {
						return false
					}
					i++
				}
			default:
				return false
			}
		case isPunct(c):
			i++
			continue
		default:
			return false
		}
		f.end[f.nf] = uint8(f.n)
		f.typ[f.nf] = t
		f.n++ // the NUL terminator's place in workbuf
		f.nf++
	}
	return true
}

// pgTm is struct pg_tm's fields that input uses.
type pgTm struct {
	year, mon, mday, hour, min, sec, yday int
	fsec                                  int64
}

// strtoint is PostgreSQL's strtoint: strtol's prefix of optional sign and
// digits; rangeErr when it does not fit an int32; n is 0 when no digits.
func strtoint(s []byte) (v int, n int, rangeErr bool) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var u uint64
	for i < len(s) && isDigit(s[i]) {
		if u < 1<<40 {
			u = u*10 + uint64(s[i]-'0')
		}
		i++
	}
	if i == start {
		return 0, 0, false
	}
	if neg {
		if u > 1<<31 {
			return 0, i, true
		}
		return -int(u), i, false
	}
	if u > 1<<31-1 {
		return 0, i, true
	}
	return int(u), i, false
}

// atoi is C's atoi on a run of digits: strtol saturating at LONG_MAX,
// then truncated to int.
func atoi(s []byte) int {
	v, _ := atol(s)
	return int(int32(v))
}

func atol(s []byte) (int64, int) {
	var u uint64
	i := 0
	sat := false
	for i < len(s) && isDigit(s[i]) {
		d := uint64(s[i] - '0')
		if u > (1<<63-1-d)/10 {
			sat = true
		} else {
			u = u*10 + d
		}
		i++
	}
	if sat {
		return 1<<63 - 1, i
	}
	return int64(u), i
}

// strtodFrac is strtod on text starting with '.': it reads '.' digits
// and reports the value and bytes read (0 when there are no digits,
// which strtod treats as no conversion).
func strtodFrac(s []byte) (float64, int) {
	i := 1
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == 1 {
		return 0, 0
	}
	return fracValue(s[:i]), i
}

// fracValue converts ".ddd" to a double as strtod does (correctly
// rounded).
func fracValue(frac []byte) float64 {
	var u uint64
	n := 0
	for _, c := range frac[1:] {
		if n == 19 {
			return slowFrac(frac)
		}
		u = u*10 + uint64(c-'0')
		n++
	}
	if u < 1<<53 && n < len(float64Pow10) {
		return float64(u) / float64Pow10[n]
	}
	return slowFrac(frac)
}

// rintMicros is rint(frac * 1000000) cast to int32, as fsec_t holds it.
func rintMicros(f float64) int64 { return int64(int32(roundEven(f * 1e6))) }

// parseFraction is ParseFractionalSecond: the whole rest must be read;
// a lone "." is zero.
func parseFraction(s []byte) (int64, bool) {
	if len(s) == 1 {
		return 0, true
	}
	f, n := strtodFrac(s)
	if n == 0 || n != len(s) {
		return 0, false
	}
	return rintMicros(f), true
}

func roundEven(f float64) float64 { return math.RoundToEven(f) }

func slowFrac(frac []byte) float64 {
	f, _ := strconv.ParseFloat(unsafe.String(unsafe.SliceData(frac), len(frac)), 64)
	return f
}
