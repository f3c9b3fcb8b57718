package copyenc

import (
	"encoding/hex"
	"math"
	"strconv"
)

// TextWriter appends rows in COPY's text format: fields separated by a
// tab, NULL as \N, backslash, newline, carriage return and tab escaped
// with a backslash, and a newline after each row.
//
// Typed values are spelled so that PostgreSQL reads back exactly the value
// written: floats in the shortest form that round-trips, timestamps as
// "YYYY-MM-DD HH:MM:SS[.ffffff]+00" (the zone is ignored by timestamp
// without time zone, so one spelling serves both types), years before 1 AD
// with PostgreSQL's " BC" suffix.
//
// The buffer is owned by the writer, as for BinaryWriter. Not safe for
// concurrent use.
type TextWriter struct {
	buf  []byte
	left int  // fields still to come in the current row
	mid  bool // a field of the current row has been written
}

// NewTextWriter returns a writer whose buffer starts with capacity bytes.
func NewTextWriter(capacity int) *TextWriter {
	return &TextWriter{buf: make([]byte, 0, max(capacity, 0))}
}

// Bytes returns the rows written so far.
func (w *TextWriter) Bytes() []byte { return w.buf }

// Len returns len(Bytes()).
func (w *TextWriter) Len() int { return len(w.buf) }

// Reset empties the buffer, keeping its capacity.
func (w *TextWriter) Reset() { w.buf, w.left, w.mid = w.buf[:0], 0, false }

// Truncate drops everything after the first n bytes (n <= Len()), and with
// it any row in progress.
func (w *TextWriter) Truncate(n int) { w.buf, w.left, w.mid = w.buf[:n], 0, false }

// AppendRows appends whole rows written by another TextWriter (a row
// encoded on another goroutine and routed to this buffer), ending any
// row in progress.
func (w *TextWriter) AppendRows(rows []byte) {
	w.buf, w.left, w.mid = append(w.buf, rows...), 0, false
}

// BeginRow starts a row of n fields; the row's newline is written after
// its n-th field.
func (w *TextWriter) BeginRow(n int) {
	w.left, w.mid = n, false
	if n <= 0 {
		w.buf = append(w.buf, '\n')
	}
}

// sep writes the delimiter before every field but the first.
func (w *TextWriter) sep() {
	if w.mid {
		w.buf = append(w.buf, '\t')
	}
	w.mid = true
}

// end counts a field and ends the row after its last one.
func (w *TextWriter) end() {
	w.left--
	if w.left == 0 {
		w.buf = append(w.buf, '\n')
		w.mid = false
	}
}

// Field parses text with c and appends the field; on error nothing is
// appended and the row should be dropped with Truncate.
func (w *TextWriter) Field(c Codec, text []byte) error {
	n := len(w.buf)
	if w.mid {
		w.buf = append(w.buf, '\t')
	}
	b, err := c.AppendText(w.buf, text)
	if err != nil {
		w.buf = w.buf[:n]
		return err
	}
	w.buf, w.mid = b, true
	w.end()
	return nil
}

// Null writes a NULL field.
func (w *TextWriter) Null() {
	w.sep()
	w.buf = append(w.buf, '\\', 'N')
	w.end()
}

// Bool writes a boolean.
func (w *TextWriter) Bool(v bool) {
	w.sep()
	if v {
		w.buf = append(w.buf, 't')
	} else {
		w.buf = append(w.buf, 'f')
	}
	w.end()
}

// Int2 writes a smallint.
func (w *TextWriter) Int2(v int16) { w.Int8(int64(v)) }

// Int4 writes an integer.
func (w *TextWriter) Int4(v int32) { w.Int8(int64(v)) }

// Int8 writes a bigint.
func (w *TextWriter) Int8(v int64) {
	w.sep()
	w.buf = strconv.AppendInt(w.buf, v, 10)
	w.end()
}

// Float4 writes a real.
func (w *TextWriter) Float4(v float32) {
	w.sep()
	w.buf = appendFloatText(w.buf, float64(v), 32)
	w.end()
}

// Float8 writes a double precision.
func (w *TextWriter) Float8(v float64) {
	w.sep()
	w.buf = appendFloatText(w.buf, v, 64)
	w.end()
}

// Timestamp writes a timestamp or timestamptz given in Unix micros.
func (w *TextWriter) Timestamp(micros int64) {
	w.sep()
	w.buf = appendPGTimestampText(w.buf, pgMicros(micros))
	w.end()
}

// Date writes a date given in Unix days.
func (w *TextWriter) Date(days int32) {
	w.sep()
	w.buf = appendPGDateText(w.buf, pgDays(days))
	w.end()
}

// Text writes text, varchar, char or name.
func (w *TextWriter) Text(v []byte) {
	w.sep()
	w.buf = appendEscaped(w.buf, v)
	w.end()
}

// String is Text for a string.
func (w *TextWriter) String(v string) {
	w.sep()
	w.buf = appendEscaped(w.buf, v)
	w.end()
}

// UUID writes a uuid.
func (w *TextWriter) UUID(v [16]byte) {
	w.sep()
	w.buf = appendUUIDText(w.buf, v)
	w.end()
}

// JSON writes a json value.
func (w *TextWriter) JSON(v []byte) { w.Text(v) }

// JSONB writes a jsonb value.
func (w *TextWriter) JSONB(v []byte) { w.Text(v) }

// copyEscape maps each byte that COPY text format must escape to the
// letter following the backslash; 0 means the byte goes as is.
var copyEscape = [256]byte{'\\': '\\', '\n': 'n', '\r': 'r', '\t': 't'}

// appendEscaped appends s escaped for COPY text format.
func appendEscaped[S ~string | ~[]byte](dst []byte, s S) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		if e := copyEscape[s[i]]; e != 0 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', e)
			start = i + 1
		}
	}
	return append(dst, s[start:]...)
}

// escapeInPlace escapes dst[from:] for COPY text format, in place.
func escapeInPlace(dst []byte, from int) []byte {
	n := 0
	for _, c := range dst[from:] {
		if copyEscape[c] != 0 {
			n++
		}
	}
	if n == 0 {
		return dst
	}
	end := len(dst)
	dst = growLen(dst, n)
	j := len(dst)
	for i := end - 1; i >= from; i-- {
		c := dst[i]
		if e := copyEscape[c]; e != 0 {
			j -= 2
			dst[j], dst[j+1] = '\\', e
		} else {
			j--
			dst[j] = c
		}
	}
	return dst
}

// growLen extends dst by n bytes (contents of the new bytes unspecified).
func growLen(dst []byte, n int) []byte {
	if cap(dst)-len(dst) >= n {
		return dst[:len(dst)+n]
	}
	return append(dst, make([]byte, n)...)
}

func appendIntText(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }

// appendFloatText spells v the way float8in/float4in read back exactly:
// the shortest decimal that round-trips at the given bit size, and
// NaN, Infinity, -Infinity.
func appendFloatText(dst []byte, v float64, bits int) []byte {
	switch {
	case math.IsNaN(v):
		return append(dst, "NaN"...)
	case math.IsInf(v, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(v, -1):
		return append(dst, "-Infinity"...)
	}
	return strconv.AppendFloat(dst, v, 'g', -1, bits)
}

// appendUUIDText spells u as 8-4-4-4-12 lower-case hex digits.
func appendUUIDText(dst []byte, u [16]byte) []byte {
	dst = hex.AppendEncode(dst, u[0:4])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, u[4:6])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, u[6:8])
	dst = append(dst, '-')
	dst = hex.AppendEncode(dst, u[8:10])
	dst = append(dst, '-')
	return hex.AppendEncode(dst, u[10:16])
}

var _ FieldWriter = (*TextWriter)(nil)
