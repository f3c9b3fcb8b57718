package copyenc

import (
	"encoding/binary"
	"math"
)

// BinaryHeader starts a binary COPY stream: the 11-byte signature
// "PGCOPY\n\377\r\n\0", int32 flags (0: no OIDs) and int32 header
// extension length (0). The caller writes it before the first row of each
// COPY, so a batch of rows can be split at any row boundary. Read only.
var BinaryHeader = []byte{'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0377, '\r', '\n', 0, 0, 0, 0, 0, 0, 0, 0, 0}

// BinaryTrailer ends a binary COPY stream: int16 -1 in place of a field
// count. Read only.
var BinaryTrailer = []byte{0xff, 0xff}

// Infinite timestamps and dates. PostgreSQL stores infinity as the largest
// and -infinity as the smallest value of the type; these constants are
// those values in this package's units, and the writers send them as
// PostgreSQL's own infinities (not shifted by the epoch difference).
const (
	InfinityMicros    int64 = math.MaxInt64 // timestamp 'infinity'
	NegInfinityMicros int64 = math.MinInt64 // timestamp '-infinity'
	InfinityDays      int32 = math.MaxInt32 // date 'infinity'
	NegInfinityDays   int32 = math.MinInt32 // date '-infinity'
)

// PostgreSQL counts from 2000-01-01; this package's callers from 1970-01-01.
const (
	epochDays   = 10957                    // days from 1970-01-01 to 2000-01-01
	epochMicros = epochDays * 86400_000000 // the same in microseconds
)

// pgMicros converts Unix micros to PostgreSQL's timestamp representation.
// A value too small to convert is out of PostgreSQL's range anyway; it is
// mapped to one the server rejects ("timestamp out of range"), never to a
// valid timestamp.
func pgMicros(micros int64) int64 {
	switch {
	case micros == InfinityMicros:
		return math.MaxInt64
	case micros == NegInfinityMicros:
		return math.MinInt64
	case micros < math.MinInt64+epochMicros:
		return math.MinInt64 + 1
	}
	return micros - epochMicros
}

// pgDays converts Unix days to PostgreSQL's date representation, like
// pgMicros.
func pgDays(days int32) int32 {
	switch {
	case days == InfinityDays:
		return math.MaxInt32
	case days == NegInfinityDays:
		return math.MinInt32
	case days < math.MinInt32+epochDays:
		return math.MinInt32 + 1
	}
	return days - epochDays
}

// BinaryWriter appends rows in PostgreSQL's binary COPY tuple format: per
// row an int16 field count, then per field an int32 byte length (-1 for
// NULL) and the big-endian payload of the type's send format. It writes
// neither BinaryHeader nor BinaryTrailer.
//
// The buffer is owned by the writer: Bytes is valid until the next call
// that writes, Truncate or Reset. Not safe for concurrent use. In steady
// state (after Reset, with the buffer grown) writing a row allocates
// nothing.
type BinaryWriter struct {
	buf []byte
}

// NewBinaryWriter returns a writer whose buffer starts with capacity bytes.
func NewBinaryWriter(capacity int) *BinaryWriter {
	return &BinaryWriter{buf: make([]byte, 0, max(capacity, 0))}
}

// Bytes returns the rows written so far.
func (w *BinaryWriter) Bytes() []byte { return w.buf }

// Len returns len(Bytes()); record it after each row to split a batch at
// row boundaries or to Truncate a row that failed half way.
func (w *BinaryWriter) Len() int { return len(w.buf) }

// Reset empties the buffer, keeping its capacity.
func (w *BinaryWriter) Reset() { w.buf = w.buf[:0] }

// Truncate drops everything after the first n bytes (n <= Len()).
func (w *BinaryWriter) Truncate(n int) { w.buf = w.buf[:n] }

// AppendRows appends whole rows written by another BinaryWriter (a row
// encoded on another goroutine and routed to this buffer).
func (w *BinaryWriter) AppendRows(rows []byte) { w.buf = append(w.buf, rows...) }

// BeginRow starts a row of n fields (PostgreSQL allows at most 1600).
func (w *BinaryWriter) BeginRow(n int) {
	w.buf = binary.BigEndian.AppendUint16(w.buf, uint16(n))
}

// Field parses text with c and appends the field; on error nothing is
// appended and the row should be dropped with Truncate.
func (w *BinaryWriter) Field(c Codec, text []byte) error {
	b, err := c.AppendBinary(w.buf, text)
	if err != nil {
		return err
	}
	w.buf = b
	return nil
}

// Null writes a NULL field.
func (w *BinaryWriter) Null() { w.buf = append(w.buf, 0xff, 0xff, 0xff, 0xff) }

// Bool writes a boolean.
func (w *BinaryWriter) Bool(v bool) {
	b := byte(0)
	if v {
		b = 1
	}
	w.buf = append(w.buf, 0, 0, 0, 1, b)
}

// Int2 writes a smallint.
func (w *BinaryWriter) Int2(v int16) {
	w.buf = append(w.buf, 0, 0, 0, 2, byte(uint16(v)>>8), byte(v))
}

// Int4 writes an integer.
func (w *BinaryWriter) Int4(v int32) {
	w.buf = append(w.buf, 0, 0, 0, 4)
	w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(v))
}

// Int8 writes a bigint.
func (w *BinaryWriter) Int8(v int64) {
	w.buf = append(w.buf, 0, 0, 0, 8)
	w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(v))
}

// Float4 writes a real (IEEE 754: infinities and -0 included; any NaN is
// sent as PostgreSQL's NaN).
func (w *BinaryWriter) Float4(v float32) { w.buf = appendFloat4Field(w.buf, v) }

// Float8 writes a double precision.
func (w *BinaryWriter) Float8(v float64) { w.buf = appendFloat8Field(w.buf, v) }

// Timestamp writes a timestamp or timestamptz given in Unix micros;
// InfinityMicros and NegInfinityMicros write ±infinity.
func (w *BinaryWriter) Timestamp(micros int64) {
	w.buf = append(w.buf, 0, 0, 0, 8)
	w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(pgMicros(micros)))
}

// Date writes a date given in Unix days; InfinityDays and NegInfinityDays
// write ±infinity.
func (w *BinaryWriter) Date(days int32) {
	w.buf = append(w.buf, 0, 0, 0, 4)
	w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(pgDays(days)))
}

// Text writes text, varchar, char or name (v must be valid UTF-8 without
// NUL, shorter than 1 GiB).
func (w *BinaryWriter) Text(v []byte) {
	w.buf = appendInt32(w.buf, int32(len(v)))
	w.buf = append(w.buf, v...)
}

// String is Text for a string.
func (w *BinaryWriter) String(v string) {
	w.buf = appendInt32(w.buf, int32(len(v)))
	w.buf = append(w.buf, v...)
}

// UUID writes a uuid.
func (w *BinaryWriter) UUID(v [16]byte) {
	w.buf = append(w.buf, 0, 0, 0, 16)
	w.buf = append(w.buf, v[:]...)
}

// JSON writes a json value (its text, as is).
func (w *BinaryWriter) JSON(v []byte) { w.Text(v) }

// jsonbVersion is the only jsonb binary format version (jsonb_recv).
const jsonbVersion = 1

// JSONB writes a jsonb value: the version byte 1, then the JSON text.
func (w *BinaryWriter) JSONB(v []byte) {
	w.buf = appendInt32(w.buf, int32(len(v)+1))
	w.buf = append(w.buf, jsonbVersion)
	w.buf = append(w.buf, v...)
}

func appendInt32(dst []byte, v int32) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(v))
}

func appendInt64(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v))
}

// appendFloat4Field appends a real field; every NaN is sent as
// PostgreSQL's own NaN.
func appendFloat4Field(dst []byte, v float32) []byte {
	bits := math.Float32bits(v)
	if v != v {
		bits = nan32
	}
	dst = append(dst, 0, 0, 0, 4)
	return binary.BigEndian.AppendUint32(dst, bits)
}

// appendFloat8Field appends a double precision field, NaN as for float4.
func appendFloat8Field(dst []byte, v float64) []byte {
	bits := math.Float64bits(v)
	if v != v {
		bits = nan64
	}
	dst = append(dst, 0, 0, 0, 8)
	return binary.BigEndian.AppendUint64(dst, bits)
}

// appendIntField appends an int2, int4 or int8 field; v is in range.
func appendIntField(dst []byte, v int64, k kind) []byte {
	switch k {
	case kindInt2:
		return append(dst, 0, 0, 0, 2, byte(uint16(v)>>8), byte(v))
	case kindInt4:
		dst = append(dst, 0, 0, 0, 4)
		return binary.BigEndian.AppendUint32(dst, uint32(v))
	}
	dst = append(dst, 0, 0, 0, 8)
	return binary.BigEndian.AppendUint64(dst, uint64(v))
}

var _ FieldWriter = (*BinaryWriter)(nil)
