// Package copyenc encodes rows for PostgreSQL's COPY FROM STDIN, in the binary
// format (the fast path) and in the text format (the fallback for column
// types the binary encoder does not know), and parses text fields into the
// typed values of a column.
//
// Glossary:
//
//	field writer  appends one row's fields, in column order, to a buffer
//	              (BinaryWriter, TextWriter)
//	codec         parses the text form of one column type and writes it
//	              (Lookup; TextPassthrough for types without one)
//	micros        microseconds since 1970-01-01 00:00:00 UTC (Unix epoch)
//	days          days since 1970-01-01 (Unix epoch)
//	infinity      InfinityMicros / NegInfinityMicros, InfinityDays /
//	              NegInfinityDays: PostgreSQL's ±infinity timestamps and dates
//	canonical     the spelling a codec's AppendText writes: the parsed value
//	              spelled back ("1.5e3" → "1500"), so text and binary COPY
//	              store the same value
//
// PostgreSQL's own binary epoch is 2000-01-01; the conversion happens inside
// the binary writer, so callers always speak Unix time.
//
// A batch is split into COPY streams at row boundaries: the caller records
// Len() after each row and wraps any run of whole rows in BinaryHeader and
// BinaryTrailer.
//
// The codecs accept what PostgreSQL 13 to 17 accept for the common
// spellings of each type, and reject, with a reason, anything they cannot
// read exactly as the server would: a value is never guessed. A round-trip
// test loads the same literals through binary COPY, canonical text COPY
// and the server's own input functions and compares the results.
//
// Assumptions about the session that loads the rows: TimeZone is UTC (a
// timestamptz without a zone is read as UTC) and client_encoding is UTF8.
package copyenc

// FieldWriter appends the fields of rows, in column order, in one COPY
// format. A row is BeginRow followed by exactly n field calls. Values are
// the caller's responsibility to be valid for the column (e.g. UTF-8 text);
// the writers do not validate.
//
// Implementations are not safe for concurrent use.
type FieldWriter interface {
	// BeginRow starts a row of n fields.
	BeginRow(n int)
	Null()
	Bool(v bool)
	Int2(v int16)
	Int4(v int32)
	Int8(v int64)
	Float4(v float32)
	Float8(v float64)
	// Timestamp writes a timestamp or timestamptz in micros (UTC).
	Timestamp(micros int64)
	// Date writes a date in days since the Unix epoch.
	Date(days int32)
	// Text writes text, varchar, char or name; v must be valid UTF-8.
	Text(v []byte)
	// String is Text for a string, without a copy.
	String(v string)
	// UUID writes a 16-byte UUID.
	UUID(v [16]byte)
	// JSON writes a json value (v must be valid JSON).
	JSON(v []byte)
	// JSONB writes a jsonb value (v must be valid JSON).
	JSONB(v []byte)
}
