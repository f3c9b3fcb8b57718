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
	f, err := strconv.ParseFloat(bytesString(b), 64)
	if err != nil {
		if ne, isNum := err.(*strconv.NumError); isNum && ne.Err == strconv.ErrRange {
			return f, true
		}
		return 0, false
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
