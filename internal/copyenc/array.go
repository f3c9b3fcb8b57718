package copyenc

import (
	"encoding/binary"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Arrays are read in PostgreSQL's literal syntax and sent in array_send's
// binary format:
//
//	'{{1,2},{3,NULL}}'  →  int32 ndim 2, int32 has-null 1, uint32 element oid 23,
//	                       per dimension int32 size and int32 lower bound (2,1) (2,1),
//	                       then the elements in row-major order, each an int32
//	                       length (-1 for NULL) and the element's send format.
//
// '{}' is the empty array: ndim 0 and nothing after the element oid.
const (
	maxArrayDims  = 6         // MAXDIM
	maxArrayItems = 1<<27 - 1 // MaxArraySize: MaxAllocSize / sizeof(Datum)
	// maxScratch bounds the unescaping buffers kept for reuse.
	maxScratch = 64 << 10
)

// arrayCodec is the codec of an array of a built-in type, with any number
// of dimensions up to 6. Each array literal's dimensions are its own; the
// lower bounds are 1 unless the literal gives them ('[0:2]={...}').
type arrayCodec struct {
	name    string
	elemOID uint32
	elem    *scalarCodec
	scratch sync.Pool // *[]byte: unescaped elements
}

func newArrayCodec(name string, elemOID uint32, elem *scalarCodec) *arrayCodec {
	return &arrayCodec{name: name, elemOID: elemOID, elem: elem}
}

// AppendBinary implements Codec.
func (c *arrayCodec) AppendBinary(dst, text []byte) ([]byte, error) {
	out, reason := c.appendBinary(dst, text)
	if reason != "" {
		return dst, valueError(c.name, text, reason)
	}
	return out, nil
}

// AppendText implements Codec: the literal is re-spelled with each element
// in its canonical form (as array_out would quote it), then escaped.
func (c *arrayCodec) AppendText(dst, text []byte) ([]byte, error) {
	start := len(dst)
	out, reason := c.appendCanonical(dst, text)
	if reason != "" {
		return dst, valueError(c.name, text, reason)
	}
	return escapeInPlace(out, start), nil
}

func (c *arrayCodec) appendBinary(dst, text []byte) ([]byte, string) {
	if !utf8.Valid(text) { // the server checks the whole literal's encoding first
		return dst, "invalid UTF-8"
	}
	a, reason := newArrayScanner(text)
	if reason != "" {
		return dst, reason
	}
	start := len(dst)
	dst = growLen(dst, 16+8*a.ndim) // filled in at the end
	hasNull := false
	for a.ndim > 0 {
		tok, e, reason := a.next()
		if reason != "" {
			return dst[:start], reason
		}
		if tok == tokEnd {
			break
		}
		if tok != tokElem {
			continue
		}
		if e.null {
			dst = append(dst, 0xff, 0xff, 0xff, 0xff)
			hasNull = true
			continue
		}
		v, buf := c.element(e)
		var r string
		dst, r = c.elem.appendBinary(dst, v)
		if r != "" {
			reason = elemReason(v, r)
		}
		c.release(buf)
		if reason != "" {
			return dst[:start], reason
		}
	}
	if r := a.checkBounds(); r != "" {
		return dst[:start], r
	}
	if len(dst)-start-4 > maxFieldLen {
		return dst[:start], "longer than 1 GB"
	}
	h := dst[start:]
	binary.BigEndian.PutUint32(h[0:], uint32(len(dst)-start-4))
	binary.BigEndian.PutUint32(h[4:], uint32(a.ndim))
	flags := uint32(0)
	if hasNull {
		flags = 1
	}
	binary.BigEndian.PutUint32(h[8:], flags)
	binary.BigEndian.PutUint32(h[12:], c.elemOID)
	for k := range a.ndim {
		binary.BigEndian.PutUint32(h[16+8*k:], uint32(a.dims[k]))
		binary.BigEndian.PutUint32(h[20+8*k:], uint32(a.lbound(k)))
	}
	return dst, ""
}

func (c *arrayCodec) appendCanonical(dst, text []byte) ([]byte, string) {
	if !utf8.Valid(text) {
		return dst, "invalid UTF-8"
	}
	a, reason := newArrayScanner(text)
	if reason != "" {
		return dst, reason
	}
	if a.ndim == 0 {
		if r := a.checkBounds(); r != "" {
			return dst, r
		}
		return append(dst, '{', '}'), ""
	}
	start := len(dst)
	if a.explicit > 0 {
		for k := range a.explicit {
			lb := int64(a.lbounds[k])
			dst = append(dst, '[')
			dst = strconv.AppendInt(dst, lb, 10)
			dst = append(dst, ':')
			dst = strconv.AppendInt(dst, lb+int64(a.edims[k])-1, 10)
			dst = append(dst, ']')
		}
		dst = append(dst, '=')
	}
	comma := false
	for {
		tok, e, reason := a.next()
		if reason != "" {
			return dst[:start], reason
		}
		switch tok {
		case tokEnd:
			if r := a.checkBounds(); r != "" {
				return dst[:start], r
			}
			return dst, ""
		case tokOpen:
			if comma {
				dst = append(dst, ',')
			}
			dst, comma = append(dst, '{'), false
			continue
		case tokClose:
			dst, comma = append(dst, '}'), true
			continue
		}
		if comma {
			dst = append(dst, ',')
		}
		comma = true
		if e.null {
			dst = append(dst, "NULL"...)
			continue
		}
		v, buf := c.element(e)
		p := len(dst)
		var r string
		dst, r = c.elem.appendCanonical(dst, v)
		if r != "" {
			reason = elemReason(v, r)
		}
		c.release(buf)
		if reason != "" {
			return dst[:start], reason
		}
		dst = quoteArrayElem(dst, p)
	}
}

// element returns the text of a non-NULL element, unescaped into a pooled
// buffer (returned, to release) when it has backslashes.
func (c *arrayCodec) element(e arrayElem) ([]byte, *[]byte) {
	if !e.escaped {
		return e.raw, nil
	}
	buf, _ := c.scratch.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	b := (*buf)[:0]
	for i := 0; i < len(e.raw); i++ {
		if e.raw[i] == '\\' {
			i++ // the scanner guarantees a character follows
		}
		b = append(b, e.raw[i])
	}
	*buf = b
	return b, buf
}

func (c *arrayCodec) release(buf *[]byte) {
	if buf != nil && cap(*buf) <= maxScratch {
		c.scratch.Put(buf)
	}
}

func elemReason(v []byte, reason string) string {
	return "element " + strconv.Quote(quotePrefix(v)) + ": " + reason
}

// quoteArrayElem double-quotes the element written at dst[p:] when
// array_in would otherwise misread it (empty, NULL in any case, or
// containing braces, quotes, commas, backslashes or white space),
// escaping quotes and backslashes.
func quoteArrayElem(dst []byte, p int) []byte {
	el := dst[p:]
	need := len(el) == 0 || equalFold(el, "null")
	esc := 0
	for _, ch := range el {
		switch {
		case ch == '"' || ch == '\\':
			esc++
			need = true
		case ch == '{' || ch == '}' || ch == ',' || isSpace(ch):
			need = true
		}
	}
	if !need {
		return dst
	}
	end := len(dst)
	dst = growLen(dst, esc+2)
	j := len(dst) - 1
	dst[j] = '"'
	for i := end - 1; i >= p; i-- {
		ch := dst[i]
		j--
		dst[j] = ch
		if ch == '"' || ch == '\\' {
			j--
			dst[j] = '\\'
		}
	}
	dst[p] = '"'
	return dst
}

type arrayToken uint8

const (
	tokEnd arrayToken = iota
	tokOpen
	tokClose
	tokElem
)

// arrayElem is one element of a literal: its text without the quotes and
// with backslashes still in (escaped tells whether there are any).
type arrayElem struct {
	raw     []byte
	escaped bool
	null    bool // unquoted, unescaped NULL in any case
}

// arrayScanner walks an array literal, checking that it is rectangular.
type arrayScanner struct {
	s      []byte
	i      int
	ndim   int // depth of the elements (0: the empty array)
	depth  int // braces open
	after  bool
	items  int
	counts [maxArrayDims]int // items so far in the open brace at each depth
	dims   [maxArrayDims]int // size of each dimension, once known
	// explicit dimensions ('[lo:hi]={...}'), as array_in reads them
	explicit int
	lbounds  [maxArrayDims]int32
	edims    [maxArrayDims]int64
}

// lbound is dimension k's lower bound.
func (a *arrayScanner) lbound(k int) int32 {
	if a.explicit > 0 {
		return a.lbounds[k]
	}
	return 1
}

// checkBounds compares explicit dimensions with the braces' (after the
// whole literal was read) and checks that upper bounds fit an int32.
func (a *arrayScanner) checkBounds() string {
	if a.explicit == 0 {
		return ""
	}
	if a.explicit != a.ndim {
		return "array dimensions incompatible with array literal"
	}
	for k := range a.explicit {
		if a.edims[k] != int64(a.dims[k]) {
			return "array dimensions incompatible with array literal"
		}
		if int64(a.lbounds[k])+a.edims[k]-1 > 1<<31-1 {
			return "array upper bound is too large"
		}
	}
	return ""
}

// dimensions reads array_in's optional "[lo:hi][...]=" prefix and
// returns the index after it.
func (a *arrayScanner) dimensions(s []byte) (int, string) {
	i := 0
	for {
		i = skipSpace(s, i)
		if i >= len(s) || s[i] != '[' {
			break
		}
		i++
		if a.explicit >= maxArrayDims {
			return i, "more than 6 dimensions"
		}
		num := func() int {
			q := i
			for q < len(s) && (isDigit(s[q]) || s[q] == '-' || s[q] == '+') {
				q++
			}
			return q
		}
		q := num()
		if q == i {
			return i, "missing array dimension value"
		}
		lb := int32(1)
		if q < len(s) && s[q] == ':' {
			lb = cAtoi(s[i:q])
			i = q + 1
			if q = num(); q == i {
				return i, "missing array dimension value"
			}
		}
		if q >= len(s) || s[q] != ']' {
			return i, `missing "]" in array dimensions`
		}
		ub := cAtoi(s[i:q])
		i = q + 1
		if ub < lb {
			return i, "upper bound cannot be less than lower bound"
		}
		a.lbounds[a.explicit] = lb
		a.edims[a.explicit] = int64(ub) - int64(lb) + 1
		a.explicit++
	}
	if a.explicit > 0 {
		if i >= len(s) || s[i] != '=' {
			return i, `missing assignment operator "=" after array dimensions`
		}
		i = skipSpace(s, i+1)
	}
	return i, ""
}

// cAtoi is C's atoi: an optionally signed run of digits, saturating as
// strtol does, truncated to int.
func cAtoi(s []byte) int32 {
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	v, _ := atol(s)
	if neg {
		if v == 1<<63-1 {
			return 0 // LONG_MIN's low 32 bits
		}
		v = -v
	}
	return int32(v)
}

// newArrayScanner checks the start of the literal and finds the number of
// dimensions: the depth of the first element.
func newArrayScanner(s []byte) (arrayScanner, string) {
	a := arrayScanner{s: s}
	i, reason := a.dimensions(s)
	if reason != "" {
		return a, reason
	}
	if i == len(s) || s[i] != '{' {
		return a, `array literal must start with "{"`
	}
	a.i = i
	depth := 0
	for i < len(s) && s[i] == '{' {
		depth++
		i = skipSpace(s, i+1)
	}
	switch {
	case depth > maxArrayDims:
		return a, "more than 6 dimensions"
	case i == len(s):
		return a, "unterminated array literal"
	case s[i] == '}':
		if depth != 1 {
			return a, "empty sub-array"
		}
		if skipSpace(s, i+1) != len(s) {
			return a, `junk after the closing "}"`
		}
		return a, "" // '{}': ndim 0
	}
	a.ndim = depth
	return a, ""
}

func skipSpace(s []byte, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// next returns the next token of the literal, or a reason it is malformed.
func (a *arrayScanner) next() (arrayToken, arrayElem, string) {
	for {
		a.i = skipSpace(a.s, a.i)
		if a.i == len(a.s) {
			if a.depth == 0 && a.after {
				return tokEnd, arrayElem{}, ""
			}
			return 0, arrayElem{}, "unterminated array literal"
		}
		c := a.s[a.i]
		if a.depth == 0 {
			if a.after {
				return 0, arrayElem{}, `junk after the closing "}"`
			}
			a.i++
			a.depth, a.counts[0] = 1, 0
			return tokOpen, arrayElem{}, ""
		}
		if a.after { // after an element or a sub-array
			switch c {
			case ',':
				a.i++
				a.after = false
				continue
			case '}':
				a.i++
				d := a.depth - 1
				switch n := a.counts[d]; {
				case a.dims[d] == 0:
					a.dims[d] = n
				case a.dims[d] != n:
					return 0, arrayElem{}, "sub-arrays have different sizes"
				}
				a.depth--
				if a.depth > 0 {
					a.counts[a.depth-1]++
				}
				return tokClose, arrayElem{}, ""
			}
			return 0, arrayElem{}, `expected "," or "}" after an element`
		}
		switch {
		case c == '{':
			if a.depth >= a.ndim {
				return 0, arrayElem{}, "sub-array where an element is expected"
			}
			a.i++
			a.depth++
			a.counts[a.depth-1] = 0
			return tokOpen, arrayElem{}, ""
		case c == '}':
			return 0, arrayElem{}, "empty sub-array or missing element"
		case c == ',':
			return 0, arrayElem{}, "missing element"
		case a.depth != a.ndim:
			return 0, arrayElem{}, "element where a sub-array is expected"
		}
		e, reason := a.element()
		if reason != "" {
			return 0, arrayElem{}, reason
		}
		a.items++
		if a.items > maxArrayItems {
			return 0, arrayElem{}, "too many elements"
		}
		a.counts[a.depth-1]++
		a.after = true
		return tokElem, e, ""
	}
}

// element reads a quoted or unquoted element at a.i.
func (a *arrayScanner) element() (arrayElem, string) {
	s := a.s
	var e arrayElem
	if s[a.i] == '"' {
		j := a.i + 1
		for ; j < len(s) && s[j] != '"'; j++ {
			if s[j] == '\\' {
				e.escaped = true
				j++
				if j == len(s) {
					break
				}
			}
		}
		if j >= len(s) {
			return e, "unterminated quoted element"
		}
		e.raw = s[a.i+1 : j]
		a.i = j + 1
		return e, ""
	}
	j, end := a.i, a.i
	for j < len(s) {
		ch := s[j]
		switch {
		case ch == '\\':
			if j+1 == len(s) {
				return e, "unterminated array literal"
			}
			e.escaped = true
			j += 2
			end = j // an escaped character is kept, white space included
			continue
		case ch == ',' || ch == '}':
		case ch == '{' || ch == '"':
			return e, "unexpected " + strconv.QuoteRune(rune(ch)) + " in an unquoted element"
		default:
			j++
			if !isSpace(ch) {
				end = j
			}
			continue
		}
		break
	}
	e.raw = s[a.i:end]
	e.null = !e.escaped && equalFold(e.raw, "null")
	a.i = j
	return e, ""
}
