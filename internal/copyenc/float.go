package copyenc

import (
	"math"
	"strconv"
	"unsafe"
)

// parseFloat reads a double precision (or, with is32, a real) as
// float8in/float4in do for decimal input: optional white space around
// [+-] digits [. digits] [e [+-] digits], or one of NaN, Infinity, inf
// (signed but for NaN, any case).
//
// The decimal is rounded once, to nearest, to the target precision, which
// is what the C library's strtod/strtof used by PostgreSQL do (a real is
// not rounded through a double). Like PostgreSQL, a value too large for the
// type is an error, and so is a non-zero value so small that it rounds to
// zero; -0 stays -0. Hexadecimal floats, digit underscores and NaN
// payloads, which some libraries accept, are rejected.
func parseFloat(text []byte, is32 bool) (float64, string) {
	s := trimSpace(text)
	if v, ok := floatSpecial(s); ok {
		return v, ""
	}
	nonzero, ok := scanDecimal(s)
	if !ok {
		return 0, "not a number"
	}
	if !is32 {
		if v, exact := exactFloat64(s); exact {
			return v, ""
		}
	}
	bits := 64
	if is32 {
		bits = 32
	}
	// The string aliases text only for the call: ParseFloat keeps it only
	// in its error, which is dropped here.
	v, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(s), len(s)), bits)
	if err != nil || (v == 0 && nonzero) {
		if is32 {
			return 0, "out of range for type real"
		}
		return 0, "out of range for type double precision"
	}
	return v, ""
}

// float64Pow10 holds the powers of ten that are exact in a float64.
var float64Pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// exactFloat64 converts a syntactically valid decimal whose digits, as an
// integer m, are at most 2^53 and whose power of ten e is within ±22: then
// m and 10^|e| are exact doubles, and the single IEEE multiplication or
// division m·10^e is the correctly rounded result (the common case of
// sensor data, a few times faster than the general algorithm). It reports
// false for anything else.
func exactFloat64(s []byte) (float64, bool) {
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		s = s[1:]
	}
	var m uint64
	exp, nd := 0, 0
	seenPoint := false
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			seenPoint = true
			continue
		}
		if !isDigit(c) {
			break
		}
		if m == 0 && c == '0' {
			if seenPoint {
				exp--
			}
			continue
		}
		nd++
		if nd > 16 {
			return 0, false
		}
		m = m*10 + uint64(c-'0')
		if seenPoint {
			exp--
		}
	}
	if i < len(s) { // exponent: (e|E) [+-] digits, already validated
		i++
		eneg := false
		if s[i] == '+' || s[i] == '-' {
			eneg = s[i] == '-'
			i++
		}
		e := 0
		for ; i < len(s); i++ {
			if e > 1000 {
				return 0, false
			}
			e = e*10 + int(s[i]-'0')
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if m > 1<<53 {
		return 0, false
	}
	f := float64(m)
	switch {
	case m == 0:
	case exp >= 0 && exp < len(float64Pow10):
		f *= float64Pow10[exp]
	case exp < 0 && -exp < len(float64Pow10):
		f /= float64Pow10[-exp]
	default:
		return 0, false
	}
	if neg {
		f = -f
	}
	return f, true
}

// PostgreSQL's NaNs (the C library's NAN): float8in and float4in store
// these bits, so the same text gives the same stored bits here.
const (
	nan64 = 0x7ff8000000000000
	nan32 = 0x7fc00000
)

// floatSpecial recognizes the spellings of NaN and the infinities that
// float8in accepts on every platform.
func floatSpecial(s []byte) (float64, bool) {
	if len(s) < 3 || len(s) > 9 {
		return 0, false
	}
	sign := 1
	body := s
	switch s[0] {
	case '+':
		body = s[1:]
	case '-':
		sign, body = -1, s[1:]
	}
	switch {
	case len(body) == len(s) && equalFold(body, "nan"):
		return math.Float64frombits(nan64), true
	case equalFold(body, "infinity"), equalFold(body, "inf"):
		return math.Inf(sign), true
	}
	return 0, false
}

// scanDecimal checks that s is [+-] digits [. digits] [(e|E) [+-] digits]
// with at least one mantissa digit, and reports whether a mantissa digit
// is non-zero.
func scanDecimal(s []byte) (nonzero, ok bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && isDigit(s[i]); i++ {
		digits++
		nonzero = nonzero || s[i] != '0'
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && isDigit(s[i]); i++ {
			digits++
			nonzero = nonzero || s[i] != '0'
		}
	}
	if digits == 0 {
		return false, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return false, false
		}
	}
	return nonzero, i == len(s)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// equalFold reports whether s equals the lower-case ASCII word, ignoring
// ASCII case.
func equalFold(s []byte, word string) bool {
	if len(s) != len(word) {
		return false
	}
	for i := range len(s) {
		if lower(s[i]) != word[i] {
			return false
		}
	}
	return true
}
