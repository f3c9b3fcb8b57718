package ingest

import (
	"fmt"
	"math"
	"strconv"
	"unsafe"
)

// ParseFloat parses b with strconv.ParseFloat's syntax (decimal or
// hexadecimal, optional sign, "inf" and "nan" in any case) without
// copying b. ok is false on a syntax error; a finite literal beyond the
// float64 range yields ±Inf with ok true.
func ParseFloat(b []byte) (f float64, ok bool) {
	if f, ok := parsePlainDecimal(b); ok {
		return f, true
	}
	f, err := strconv.ParseFloat(bytesString(b), 64)
	if err != nil {
		if ne, isNum := err.(*strconv.NumError); isNum && ne.Err == strconv.ErrRange {
			return f, true
		}
		return 0, false
	}
	return f, true
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// parsePlainDecimal parses the common form of a value, an optional sign,
// digits and an optional point and digits, at most 15 digits in all; ok
// is false for anything else, which strconv parses. With at most 15
// digits the digits are an integer m below 2^53 and the value m/10^k for
// k fraction digits; both are exact float64s and IEEE division rounds
// correctly, so the result is strconv's (Clinger's fast path), without
// strconv's general scanner (a twentieth of the daemon's CPU at 1 M
// series).
func parsePlainDecimal(b []byte) (float64, bool) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg, i = b[0] == '-', 1
	}
	var m uint64
	digits, frac, point := 0, 0, false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			m = m*10 + uint64(c-'0')
			digits++
			if point {
				frac++
			}
		case c == '.' && !point:
			point = true
		default:
			return 0, false
		}
	}
	if digits == 0 || digits > 15 {
		return 0, false
	}
	f := float64(m) / pow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

// ParseValue parses b as a sample value: a number in ParseFloat's
// syntax that is finite as a float64. NaN, infinities and literals
// beyond ±1.8e308 (such as 1e400) are refused. The error wraps ErrValue.
func ParseValue(b []byte) (float64, error) {
	f, ok := ParseFloat(b)
	switch {
	case !ok:
		return 0, fmt.Errorf("%w %s: not a number", ErrValue, Clip(b))
	case math.IsNaN(f):
		return 0, fmt.Errorf("%w %s: NaN is not a sample value", ErrValue, Clip(b))
	case math.IsInf(f, 0):
		return 0, fmt.Errorf("%w %s: not finite (beyond the float64 range)", ErrValue, Clip(b))
	}
	return f, nil
}

// CheckValue refuses a NaN or infinite sample value with an error
// wrapping ErrValue.
func CheckValue(f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("%w %v: not a finite number", ErrValue, f)
	}
	return nil
}

// ParseInt parses b as a base-10 int64 with an optional sign, without
// copying b. ok is false on a syntax error or overflow.
func ParseInt(b []byte) (int64, bool) {
	neg := false
	d := b
	if len(d) > 0 && (d[0] == '-' || d[0] == '+') {
		neg = d[0] == '-'
		d = d[1:]
	}
	for len(d) > 1 && d[0] == '0' {
		d = d[1:]
	}
	// Up to 19 digits fit a uint64 (10^19 - 1 < 2^64).
	if len(d) == 0 || len(d) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return -int64(n), true
	}
	if n > 1<<63-1 {
		return 0, false
	}
	return int64(n), true
}

// bytesString returns b as a string sharing b's bytes. The result must
// not outlive the call it is passed to, nor be kept by it: strconv's
// parse functions copy the input into the errors they return.
func bytesString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}
