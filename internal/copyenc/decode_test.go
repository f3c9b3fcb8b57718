package copyenc

// Test-only decoders of the binary COPY format, written from the *_send
// functions' layouts, to check what the encoders produce.

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"testing"
)

// splitField splits one binary COPY field off b.
func splitField(t testing.TB, b []byte) (payload []byte, null bool, rest []byte) {
	t.Helper()
	if len(b) < 4 {
		t.Fatalf("field shorter than its length word: % x", b)
	}
	n := int32(binary.BigEndian.Uint32(b))
	if n == -1 {
		return nil, true, b[4:]
	}
	if n < 0 || int(n) > len(b)-4 {
		t.Fatalf("field length %d with %d bytes left", n, len(b)-4)
	}
	return b[4 : 4+n], false, b[4+n:]
}

// onlyField returns the payload of b, which must hold exactly one field.
func onlyField(t testing.TB, b []byte) []byte {
	t.Helper()
	p, null, rest := splitField(t, b)
	if null || len(rest) != 0 {
		t.Fatalf("want one non-NULL field, got null=%v and %d bytes after it", null, len(rest))
	}
	return p
}

// decodeNumeric renders a numeric_send payload the way numeric_out does.
func decodeNumeric(t testing.TB, p []byte) string {
	t.Helper()
	if len(p) < 8 {
		t.Fatalf("numeric payload of %d bytes", len(p))
	}
	ndigits := int(binary.BigEndian.Uint16(p))
	weight := int(int16(binary.BigEndian.Uint16(p[2:])))
	sign := binary.BigEndian.Uint16(p[4:])
	dscale := int(binary.BigEndian.Uint16(p[6:]))
	if len(p) != 8+2*ndigits {
		t.Fatalf("numeric payload of %d bytes for %d digits", len(p), ndigits)
	}
	switch sign {
	case numericNaN:
		return "NaN"
	case numericPInf:
		return "Infinity"
	case numericNInf:
		return "-Infinity"
	case numericPos, numericNeg:
	default:
		t.Fatalf("numeric sign %#x", sign)
	}
	digits := make([]int, ndigits)
	for i := range digits {
		digits[i] = int(binary.BigEndian.Uint16(p[8+2*i:]))
		if digits[i] > 9999 {
			t.Fatalf("numeric digit %d", digits[i])
		}
	}
	if ndigits > 0 && (digits[0] == 0 || digits[ndigits-1] == 0) {
		t.Errorf("numeric has leading or trailing zero digits: %v", digits)
	}
	// decimal digit of weight w (10^w)
	dec := func(w int) byte {
		g := w / 4
		if w < 0 && w%4 != 0 {
			g--
		}
		i := weight - g
		if i < 0 || i >= ndigits {
			return '0'
		}
		d := digits[i]
		for range w - 4*g {
			d /= 10
		}
		return byte('0' + d%10)
	}
	var b strings.Builder
	if sign == numericNeg {
		b.WriteByte('-')
	}
	top := 4*weight + 3
	if ndigits == 0 || top < 0 {
		b.WriteByte('0')
	} else {
		for top > 0 && dec(top) == '0' {
			top--
		}
		for w := top; w >= 0; w-- {
			b.WriteByte(dec(w))
		}
	}
	if dscale > 0 {
		b.WriteByte('.')
		for w := -1; w >= -dscale; w-- {
			b.WriteByte(dec(w))
		}
	}
	// digits hidden by dscale would be truncated by numeric_recv: forbid them
	if ndigits > 0 && 4*(weight-ndigits+1) < -dscale {
		lastW := 4 * (weight - ndigits + 1)
		for w := lastW; w < -dscale; w++ {
			if dec(w) != '0' {
				t.Errorf("numeric digit of weight %d hidden by dscale %d", w, dscale)
			}
		}
	}
	return b.String()
}

// decodeArray parses an array_send payload into its dimensions and the
// element payloads (nil for NULL).
func decodeArray(t testing.TB, p []byte) (elemOID uint32, dims []int, elems [][]byte) {
	t.Helper()
	if len(p) < 12 {
		t.Fatalf("array payload of %d bytes", len(p))
	}
	ndim := int(binary.BigEndian.Uint32(p))
	flags := binary.BigEndian.Uint32(p[4:])
	elemOID = binary.BigEndian.Uint32(p[8:])
	p = p[12:]
	n := 1
	if ndim == 0 {
		n = 0
	}
	for range ndim {
		d, lb := int(binary.BigEndian.Uint32(p)), int32(binary.BigEndian.Uint32(p[4:]))
		if int64(lb)+int64(d)-1 > 1<<31-1 {
			t.Errorf("lower bound %d with %d elements", lb, d)
		}
		dims = append(dims, d)
		n *= d
		p = p[8:]
	}
	hasNull := false
	for range n {
		e, null, rest := splitField(t, p)
		hasNull = hasNull || null
		if null {
			e = nil
		} else if e == nil {
			e = []byte{}
		}
		elems = append(elems, e)
		p = rest
	}
	if len(p) != 0 {
		t.Errorf("%d bytes after the last element", len(p))
	}
	if want := map[bool]uint32{false: 0, true: 1}[hasNull]; flags != want {
		t.Errorf("has-null flag %d, want %d", flags, want)
	}
	return elemOID, dims, elems
}

// decodeScalar renders a scalar payload of kind k in a comparable form.
func decodeScalar(t testing.TB, k kind, p []byte) string {
	t.Helper()
	switch k {
	case kindBool:
		return fmt.Sprint(p[0] == 1)
	case kindInt2:
		return fmt.Sprint(int16(binary.BigEndian.Uint16(p)))
	case kindInt4:
		return fmt.Sprint(int32(binary.BigEndian.Uint32(p)))
	case kindInt8, kindTimestamp, kindTimestamptz:
		return fmt.Sprint(int64(binary.BigEndian.Uint64(p)))
	case kindDate:
		return fmt.Sprint(int32(binary.BigEndian.Uint32(p)))
	case kindFloat4:
		return fmt.Sprint(math.Float32frombits(binary.BigEndian.Uint32(p)))
	case kindFloat8:
		return fmt.Sprint(math.Float64frombits(binary.BigEndian.Uint64(p)))
	case kindNumeric:
		return decodeNumeric(t, p)
	case kindUUID:
		return hex.EncodeToString(p)
	}
	return string(p)
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}
