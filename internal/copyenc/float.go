package copyenc

import (
	"math"
	"strconv"
	"unsafe"
)

// parseFloat reads a double precision (or, with is32, a real) as
// float8in/float4in do with glibc's strtod/strtof: optional white space
// around [+-] digits [. digits] [e [+-] digits], a hexadecimal float
// ("0x1.8p3", "0x10"), or Infinity, inf, NaN, NaN(payload) — any case,
// any of them signed (a signed NaN keeps its sign bit, a payload its
// bits, as the C library stores them).
//
// The decimal is rounded once, to nearest, to the target precision, which
// is what the C library's strtod/strtof do (a real is not rounded through
// a double). Like PostgreSQL, a value too large for the type is an error,
// and so is a non-zero value so small that it rounds to zero; -0 stays -0.
func parseFloat(text []byte, is32 bool) (float64, string) {
	if v, ok := fastFloat(text, is32); ok {
		return v, ""
	}
	return parseFloatFull(text, is32)
}

// parseFloatFull is parseFloat without its fast path.
func parseFloatFull(text []byte, is32 bool) (float64, string) {
	s := trimSpace(text)
	if v, ok := floatSpecial(s, is32); ok {
		return v, ""
	}
	if v, reason, ok := parseHexFloat(s, is32); ok {
		return v, reason
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
		return 0, rangeReason(is32)
	}
	return v, ""
}

func rangeReason(is32 bool) string {
	if is32 {
		return "out of range for type real"
	}
	return "out of range for type double precision"
}

// parseHexFloat reads strtod's hexadecimal form, [+-]0x hex [. hex]
// [p [+-] digits]; ok is false when s is not one.
func parseHexFloat(s []byte, is32 bool) (float64, string, bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if i+1 >= len(s) || s[i] != '0' || s[i+1] != 'x' && s[i+1] != 'X' {
		return 0, "", false
	}
	j := i + 2
	digits, nonzero := 0, false
	for ; j < len(s); j++ {
		c := s[j]
		if _, ok := unhex(c); ok {
			digits++
			nonzero = nonzero || c != '0'
		} else if c != '.' {
			break
		}
	}
	if digits == 0 || bytesCount(s[i+2:j], '.') > 1 {
		return 0, "not a number", true
	}
	var buf [64]byte
	b := buf[:0]
	b = append(b, s[:j]...)
	if j < len(s) && (s[j] == 'p' || s[j] == 'P') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		start := k
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k == start || k != len(s) {
			return 0, "not a number", true
		}
		b = append(b, s[j:]...)
	} else if j != len(s) {
		return 0, "not a number", true
	} else {
		b = append(b, 'p', '0')
	}
	bits := 64
	if is32 {
		bits = 32
	}
	v, err := strconv.ParseFloat(string(b), bits)
	if err != nil || v == 0 && nonzero {
		return 0, rangeReason(is32), true
	}
	return v, "", true
}

func bytesCount(s []byte, c byte) int {
	n := 0
	for _, x := range s {
		if x == c {
			n++
		}
	}
	return n
}

// fastFloat reads, in one pass, the plain decimals most data holds —
// [+-] digits [. digits], nothing around, at least one digit — whose
// significant digits, as an integer m, are exact in the target type (m ≤
// 2^53 for a double, 2^24 for a real) and whose fraction has at most 22
// digits (10 for a real): then m and the power of ten are exact, and one
// IEEE division is the correctly rounded value, as parseFloatFull gives
// it. ok is false for anything else, which parseFloatFull then decides;
// it never rejects.
func fastFloat(s []byte, is32 bool) (float64, bool) {
	i, neg := 0, false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg, i = s[0] == '-', 1
	}
	// Leading zeros count among the 19 digits m holds: a spelling with
	// more is left to the full parser.
	var m uint64
	start := i
	for ; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			break
		}
		m = m*10 + uint64(d)
	}
	digits, frac := i-start, 0
	if i < len(s) && s[i] == '.' {
		i++
		start = i
		for ; i < len(s); i++ {
			d := s[i] - '0'
			if d > 9 {
				break
			}
			m = m*10 + uint64(d)
		}
		frac = i - start
		digits += frac
	}
	if i != len(s) || digits == 0 || digits > 19 {
		return 0, false
	}
	var f float64
	if is32 {
		if m > 1<<24 || frac > 10 {
			return 0, false
		}
		v := float32(m)
		if frac > 0 {
			v /= float32(float64Pow10[frac])
		}
		f = float64(v)
	} else {
		if m > 1<<53 || frac >= len(float64Pow10) {
			return 0, false
		}
		f = float64(m)
		if frac > 0 {
			f /= float64Pow10[frac]
		}
	}
	if neg {
		f = -f
	}
	return f, true
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

// floatSpecial recognizes the spellings of the infinities and NaN that
// glibc's strtod accepts: [+-] (inf | infinity | nan | nan(chars)), any
// case. A NaN's sign and a numeric payload (strtoull base 0 of chars)
// are kept in its bits, as glibc keeps them.
func floatSpecial(s []byte, is32 bool) (float64, bool) {
	if len(s) < 3 {
		return 0, false
	}
	neg := false
	body := s
	switch s[0] {
	case '+':
		body = s[1:]
	case '-':
		neg, body = true, s[1:]
	}
	switch {
	case equalFold(body, "infinity"), equalFold(body, "inf"):
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case len(body) < 3 || !equalFold(body[:3], "nan"):
		return 0, false
	}
	var payload uint64
	if rest := body[3:]; len(rest) > 0 {
		if rest[0] != '(' || rest[len(rest)-1] != ')' {
			return 0, false
		}
		seq := rest[1 : len(rest)-1]
		for _, c := range seq {
			if !isAlnum(c) && c != '_' {
				return 0, false
			}
		}
		payload, _ = strtoullBase0(seq)
	}
	if is32 {
		// a double whose conversion to float gives these float bits
		b := uint64(nan64) | (payload&(1<<22-1))<<29
		if neg {
			b |= 1 << 63
		}
		return math.Float64frombits(b), true
	}
	b := uint64(nan64) | payload&(1<<51-1)
	if neg {
		b |= 1 << 63
	}
	return math.Float64frombits(b), true
}

// strtoullBase0 reads all of s as C's strtoull with base 0 (0x hex, 0
// octal, else decimal); 0 when s is not such a number in full.
func strtoullBase0(s []byte) (uint64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	var v uint64
	for _, c := range s {
		d, ok := unhex(c)
		if !ok || uint64(d) >= base {
			return 0, false
		}
		if v > (1<<64-1-uint64(d))/base {
			v = 1<<64 - 1
			continue
		}
		v = v*base + uint64(d)
	}
	return v, true
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
