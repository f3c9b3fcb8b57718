package copyenc

// isSpace reports whether c is white space as C's isspace sees it in the
// "C" locale; PostgreSQL's input functions skip these around a value.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// trimSpace drops isSpace bytes from both ends.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// parseInt reads a smallint, integer or bigint as int2in/int4in/int8in do:
// optional white space around an optionally signed run of decimal digits.
// The non-decimal prefixes and digit underscores that PostgreSQL 16 added
// are rejected, since older servers reject them too.
func parseInt(text []byte, k kind) (int64, string) {
	s := trimSpace(text)
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) == 0 {
		return 0, "not an integer"
	}
	var limit uint64 // largest magnitude allowed
	var rangeErr string
	switch k {
	case kindInt2:
		limit, rangeErr = 1<<15-1, "out of range for type smallint"
	case kindInt4:
		limit, rangeErr = 1<<31-1, "out of range for type integer"
	default:
		limit, rangeErr = 1<<63-1, "out of range for type bigint"
	}
	if neg {
		limit++
	}
	var u uint64
	overflow := false
	for _, c := range s {
		d := uint64(c - '0')
		if d > 9 {
			return 0, "not an integer"
		}
		if u > (limit-d)/10 {
			overflow = true // keep scanning: a syntax error wins
			continue
		}
		u = u*10 + d
	}
	if overflow {
		return 0, rangeErr
	}
	if neg {
		return int64(-u), ""
	}
	return int64(u), ""
}
