package render

import (
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// Graphite-web is written in Python and Grafana, scripts and dashboards
// see Python's spelling of numbers in series names and bodies. These
// helpers reproduce it so names like "scale(a.b,2)" match byte for byte.

// pyRepr spells f as Python's repr(float) does: shortest round-trip digits,
// always a decimal point or exponent, exponent form below 1e-4 and from 1e16.
func pyRepr(f float64) string {
	var buf [32]byte
	return string(appendPyRepr(buf[:0], f))
}

// appendPyRepr appends pyRepr(f) to b without allocating (a render body
// spells up to millions of values).
func appendPyRepr(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "nan"...)
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	}
	if b, ok := appendShortDyadic(b, f); ok {
		return b
	}
	if a := math.Abs(f); a == 0 || a >= 1e-4 && a < 1e16 {
		// Fast path: the shortest decimal has an exponent in [-4, 16),
		// which Python spells without an exponent.
		return appendPoint(strconv.AppendFloat(b, f, 'f', -1, 64), len(b))
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d.ddde±XX
	k := len(e) - 1
	for e[k] != 'e' {
		k--
	}
	mant, exp := e[:k], 0
	for _, c := range e[k+2:] { // after the sign
		exp = exp*10 + int(c-'0')
	}
	if e[k+1] == '-' {
		exp = -exp
	}
	if exp < -4 || exp >= 16 {
		b = append(b, mant...)
		b = append(b, 'e')
		if exp < 0 {
			b, exp = append(b, '-'), -exp
		} else {
			b = append(b, '+')
		}
		if exp < 10 {
			b = append(b, '0')
		}
		return strconv.AppendInt(b, int64(exp), 10)
	}
	return appendPoint(strconv.AppendFloat(b, f, 'f', -1, 64), len(b))
}

// appendShortDyadic appends f's repr when f is an integer or a fraction
// m/2^p with p <= 10 (halves, quarters, ..., the values of counters,
// gauges and their averages over 2, 4 or 8 points) whose exact decimal
// has at most 15 significant digits: that decimal is the shortest that
// reads back as f, since two decimals of up to 15 digits never round to
// the same float64 (DBL_DIG), so it is Python's repr. Its size, from
// 2^-10 to below 1e15, is in Python's range without exponent. It spells
// the decimal from integers, without strconv's shortest search; ok is
// false for any other f.
func appendShortDyadic(b []byte, f float64) (_ []byte, ok bool) {
	u := math.Float64bits(f)
	exp := int(u >> 52 & 0x7ff)
	if exp == 0 || exp == 0x7ff {
		if f == 0 {
			if u>>63 != 0 {
				return append(b, "-0.0"...), true
			}
			return append(b, "0.0"...), true
		}
		return b, false // subnormal, infinite or NaN
	}
	if f >= 1e15 || f <= -1e15 {
		return b, false
	}
	mant := u&(1<<52-1) | 1<<52
	tz := bits.TrailingZeros64(mant)
	mant >>= tz
	e2 := exp - 1075 + tz // f = ±mant × 2^e2, mant odd
	if u>>63 != 0 {
		b = append(b, '-')
	}
	if e2 >= 0 { // an integer below 1e15
		b = strconv.AppendUint(b, mant<<e2, 10)
		return append(b, ".0"...), true
	}
	p := -e2
	if p > 10 || mant >= pow5Limit[p] {
		if u>>63 != 0 {
			b = b[:len(b)-1]
		}
		return b, false
	}
	// f = mant×5^p / 10^p exactly; mant×5^p is odd, so its last digit is
	// not 0 and the decimal needs all p places.
	var buf [20]byte
	digits := strconv.AppendUint(buf[:0], mant*pow5[p], 10)
	if n := len(digits); n > p {
		b = append(b, digits[:n-p]...)
		b = append(b, '.')
		return append(b, digits[n-p:]...), true
	}
	b = append(b, "0."...)
	for range p - len(digits) {
		b = append(b, '0')
	}
	return append(b, digits...), true
}

// pow5[p] is 5^p; pow5Limit[p] the least m with m×5^p >= 1e15 (more
// than 15 digits).
var pow5, pow5Limit = func() (p, l [11]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 5
	}
	for i := range l {
		l[i] = (1e15 + p[i] - 1) / p[i]
	}
	return p, l
}()

// appendPoint appends ".0" to b when b[from:] has no decimal point.
func appendPoint(b []byte, from int) []byte {
	for _, c := range b[from:] {
		if c == '.' {
			return b
		}
	}
	return append(b, ".0"...)
}

// pyG spells f as Python's "%g" does (6 significant digits).
func pyG(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

// appendPyJSONString appends s as a JSON string the way Python's json.dumps
// does: with ensureASCII every non-ASCII rune becomes \uXXXX (surrogate
// pairs above U+FFFF); '<', '>' and '&' are not escaped.
func appendPyJSONString(b []byte, s string, ensureASCII bool) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch c {
			case '"':
				b = append(b, '\\', '"')
			case '\\':
				b = append(b, '\\', '\\')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				if c < 0x20 {
					b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
				} else {
					b = append(b, c)
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if !ensureASCII && r != utf8.RuneError {
			b = utf8.AppendRune(b, r)
			continue
		}
		u := func(v rune) {
			b = append(b, '\\', 'u', hex[v>>12&15], hex[v>>8&15], hex[v>>4&15], hex[v&15])
		}
		if r > 0xFFFF {
			r -= 0x10000
			u(0xD800 + (r>>10)&0x3FF)
			u(0xDC00 + r&0x3FF)
		} else {
			u(r)
		}
	}
	return append(b, '"')
}

// appendPyJSONFloat appends a value as graphite-web's JSON does: NaN as
// null, infinities as ±1e9999 (which JSON parsers read back as infinity).
func appendPyJSONFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "null"...)
	case math.IsInf(f, 1):
		return append(b, "1e9999"...)
	case math.IsInf(f, -1):
		return append(b, "-1e9999"...)
	}
	return appendPyRepr(b, f)
}
