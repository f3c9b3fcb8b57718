package copyenc

import "encoding/binary"

// PostgreSQL's numeric is a sign, a weight, a display scale and base-10000
// digits ("NBASE" digits of 4 decimal digits each):
//
//	12345.678  →  digits 1 | 2345 | 6780   weight 1   dscale 3
//	           =  1·10000¹ + 2345·10000⁰ + 6780·10000⁻¹
//
// The weight is the power of 10000 of the first digit; leading and
// trailing zero digits are not stored, and zero has no digits. The display
// scale (dscale) is the number of decimal digits after the point that the
// value is shown with, trailing zeros included: numeric_in gives "1.50"
// dscale 2 and "1.5e-3" dscale 4. The binary format (numeric_send) is
// int16 ndigits, int16 weight, uint16 sign, uint16 dscale, then ndigits
// int16 digits.
const (
	numericPos  = 0x0000
	numericNeg  = 0x4000
	numericNaN  = 0xC000
	numericPInf = 0xD000 // PostgreSQL 14 and later
	numericNInf = 0xF000

	numericMaxDscale = 0x3FFF // NUMERIC_DSCALE_MAX
	numericMaxWeight = 0x7FFF // int16 weight
	// numericMaxExp bounds the exponent of "1.5e10" spellings as
	// set_var_from_str does (INT_MAX / 2, exclusive); the result must then
	// still fit the weight and dscale fields.
	numericMaxExp = 1<<30 - 1
)

// numeric is a parsed numeric value; its digits are read from the input
// text, so it is valid only while the text is.
type numeric struct {
	sign    uint16 // numericPos, numericNeg or a special value
	mant    []byte // the mantissa as written, without sign: "0012.3400"
	point   int    // index of '.' in mant, or len(mant)
	first   int    // index (among digits, '.' skipped) of the first non-zero digit
	last    int    // index of the last non-zero digit; last < first for zero
	dweight int    // decimal exponent of the first non-zero digit
	dscale  int
}

// digit returns the k-th decimal digit of the mantissa ('.' skipped).
func (n *numeric) digit(k int) byte {
	if k >= n.point {
		k++
	}
	return n.mant[k] - '0'
}

// digitAtWeight returns the decimal digit of weight w (10^w), 0 outside
// the significant digits.
func (n *numeric) digitAtWeight(w int) byte {
	k := n.first + n.dweight - w
	if k < n.first || k > n.last {
		return 0
	}
	return n.digit(k)
}

// parseNumeric reads a numeric as numeric_in does: optional white space
// around [+-] digits [. digits] [(e|E) [+-] digits], or NaN, Infinity,
// inf (signed but for NaN, any case). The value is exact, with no digit
// limit beyond PostgreSQL's own (131072 before the point, 16383 after).
// Digit underscores and the non-decimal forms of PostgreSQL 16 are
// rejected, and so is white space after the 'e'. Infinity is a numeric
// from PostgreSQL 14 on; PostgreSQL 13 refuses it in binary as in text.
func parseNumeric(text []byte) (numeric, string) {
	s := trimSpace(text)
	n := numeric{first: -1, last: -2}
	if sign, ok := numericSpecial(s); ok {
		n.sign = sign
		return n, ""
	}
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		if s[0] == '-' {
			n.sign = numericNeg
		}
		s = s[1:]
	}
	i, ndig := 0, 0
	n.point = -1
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			if n.point >= 0 {
				return n, "not a number"
			}
			n.point = i
			continue
		}
		if !isDigit(c) {
			break
		}
		if c != '0' {
			if n.first < 0 {
				n.first = ndig
			}
			n.last = ndig
		}
		ndig++
	}
	if ndig == 0 {
		return n, "not a number"
	}
	n.mant = s[:i]
	if n.point < 0 {
		n.point = i
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		for i < len(s) && isSpace(s[i]) { // strtol skips white space
			i++
		}
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		start := i
		for ; i < len(s) && isDigit(s[i]); i++ {
			if exp <= numericMaxExp {
				exp = exp*10 + int(s[i]-'0')
			}
		}
		if i == start {
			return n, "not a number"
		}
		if exp >= numericMaxExp {
			return n, "value overflows numeric format"
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return n, "not a number"
	}
	intDigits := n.point
	fracDigits := ndig - intDigits
	n.dscale = max(fracDigits-exp, 0)
	if n.dscale > numericMaxDscale {
		return n, "value overflows numeric format"
	}
	if n.first < 0 { // zero: always positive
		n.sign = numericPos
		return n, ""
	}
	n.dweight = intDigits - 1 - n.first + exp
	if floorDiv(n.dweight, 4) > numericMaxWeight {
		return n, "value overflows numeric format"
	}
	return n, ""
}

// numericSpecial reads the special values numeric_in accepts: NaN
// (unsigned), and Infinity or inf with an optional sign, any case.
func numericSpecial(s []byte) (uint16, bool) {
	body, sign := s, uint16(numericPInf)
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		body = s[1:]
		if s[0] == '-' {
			sign = numericNInf
		}
	}
	switch {
	case len(body) == len(s) && equalFold(s, "nan"):
		return numericNaN, true
	case equalFold(body, "infinity"), equalFold(body, "inf"):
		return sign, true
	}
	return 0, false
}

// floorDiv is a / b rounded toward negative infinity (b > 0).
func floorDiv(a, b int) int {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

var pow10 = [4]uint16{1, 10, 100, 1000}

// appendBinary appends the binary COPY field (length + numeric_send
// payload). Special values are sent with weight and dscale 0, which
// numeric_recv ignores for them.
func (n *numeric) appendBinary(dst []byte) []byte {
	if n.first < 0 { // zero or a special value: no digits
		dscale := n.dscale
		if n.sign == numericPInf || n.sign == numericNInf {
			// numeric_send reads an infinity's dscale from its header
			// bits: 32; numeric_recv ignores it.
			dscale = 32
		}
		dst = appendInt32(dst, 8)
		return append(dst, 0, 0, 0, 0, byte(n.sign>>8), byte(n.sign), byte(dscale>>8), byte(dscale))
	}
	weight := floorDiv(n.dweight, 4)
	lastW := n.dweight - (n.last - n.first)
	ndigits := weight - floorDiv(lastW, 4) + 1
	dst = appendInt32(dst, int32(8+2*ndigits))
	dst = binary.BigEndian.AppendUint16(dst, uint16(ndigits))
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(weight)))
	dst = binary.BigEndian.AppendUint16(dst, n.sign)
	dst = binary.BigEndian.AppendUint16(dst, uint16(n.dscale))
	group, acc := weight, uint16(0)
	for k := n.first; k <= n.last; k++ {
		w := n.dweight - (k - n.first)
		g := floorDiv(w, 4)
		if g != group {
			dst = binary.BigEndian.AppendUint16(dst, acc)
			group, acc = g, 0
		}
		acc += uint16(n.digit(k)) * pow10[w-4*g]
	}
	return binary.BigEndian.AppendUint16(dst, acc)
}

// appendText appends the value as numeric_out spells it: the digits in
// plain notation with exactly dscale digits after the point.
func (n *numeric) appendText(dst []byte) []byte {
	switch n.sign {
	case numericNaN:
		return append(dst, "NaN"...)
	case numericPInf:
		return append(dst, "Infinity"...)
	case numericNInf:
		return append(dst, "-Infinity"...)
	case numericNeg:
		dst = append(dst, '-')
	}
	if n.first < 0 || n.dweight < 0 {
		dst = append(dst, '0')
	} else {
		for w := n.dweight; w >= 0; w-- {
			dst = append(dst, '0'+n.digitAtWeight(w))
		}
	}
	if n.dscale > 0 {
		dst = append(dst, '.')
		for w := -1; w >= -n.dscale; w-- {
			dst = append(dst, '0'+n.digitAtWeight(w))
		}
	}
	return dst
}
