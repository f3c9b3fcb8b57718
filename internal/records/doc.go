// Package records reads the delimited input of the bulk loader (`pgts
// load TABLE FILE...`): CSV, PostgreSQL's COPY text format and TSV, as a
// stream of records whose fields are byte slices, each record with the
// input lines it spans. Open opens a file or stdin and undoes gzip or zstd
// compression, detected by magic bytes.
//
// Glossary:
//
//	record      one row of input: fields separated by the delimiter, ended
//	            by a line end (or by the end of the input)
//	field       the decoded content of one column of a record: quotes
//	            removed (CSV), escapes decoded (text)
//	raw field   the field's bytes as they appear in the input
//	NULL        a field whose raw form is the Null spelling (Options.Null)
//	line        a physical input line; line numbers are 1-based
//	line end    LF or CRLF; or CR for input whose first line ends in a
//	            lone CR (see "Line ends" below)
//	record error a refusal of one record (RecordError); reading goes on
//	            with the next record
//
// The rules are PostgreSQL's own (COPY FROM as of version 15), so that
// `pgts load` accepts and refuses the same input as `COPY` and decodes it
// to the same values, with the differences listed here. PostgreSQL aborts
// the whole COPY on the first malformed line; this reader refuses that
// record alone and goes on with the next one.
//
// # CSV
//
// As COPY ... (FORMAT csv): a quote character opens a quoted section
// anywhere in a field and the next unescaped quote closes it, so `a"b,c"d`
// is the single field `ab,cd`, and text after a closing quote (`"ab"cd`)
// belongs to the field (`abcd`). Inside quotes the delimiter and line
// ends are data and Escape (by default the quote itself, as in RFC 4180:
// `""`) escapes a following quote or escape character; outside quotes
// nothing is escaped. A field is NULL when it has no quote at all and its
// raw form equals Null: with the default Null "", an unquoted empty field
// is NULL while a quoted "" is the empty string. A quote left open at the
// end of the input is one record error covering the lines from the
// record's start to the end. Options.Strict adds RFC 4180's rules as
// record errors (a quote must open a field and be followed by a delimiter
// or a line end); record boundaries do not change.
//
// The line `\.` alone (at the start of a record, followed by a line end)
// ends the data: the rest of the input is not read. Anywhere else, and
// when it is the very last line of the input without a line end, `\.` is
// data. A one-column value `\.` must therefore be quoted, which is what
// PostgreSQL's COPY TO and Go's encoding/csv do.
//
// # Text
//
// As COPY ... (FORMAT text): fields are separated by the delimiter (tab by
// default) and a backslash escapes the byte after it: \b \f \n \r \t \v
// are the control characters, \ followed by one to three octal digits is
// the byte of that value (modulo 256: \777 is 0xFF), \x followed by one or
// two hex digits is the byte of that value (\x not followed by a hex digit
// is "x"), and any other byte after a backslash but a period stands for
// itself (\\ is a backslash, \<delimiter> the delimiter, a backslash
// before a line end makes the line end data). The NULL test compares the raw field, before
// decoding: `\N` is NULL, `\\N` is the text `\N`. Decoded bytes are not
// checked (an escape may produce any byte, including 0x00 or invalid
// UTF-8): checking them is the column codecs' job, as it is the server's.
//
// `\.` followed by a line end ends the data, and the text before it on the
// same line is the last record (PostgreSQL 15 does the same). `\.` at the
// very end of the input also ends the data (PostgreSQL 15 refuses it).
// `\.` followed by anything else is a record error ("end-of-copy marker
// corrupt"), and so is a backslash that is the last byte of the input.
//
// # TSV
//
// Tab-separated values (IANA text/tab-separated-values): the delimiter
// separates fields and a line end ends the record; nothing else is
// special. There is no quoting and no escaping, so a field cannot contain
// the delimiter or a line feed; a carriage return not followed by a line
// feed is data. NULL is a raw field equal to Null (`\N` by default). There
// is no end-of-data marker. Lines end in LF or CRLF.
//
// # Line ends
//
// LF and CRLF line ends may be mixed (PostgreSQL requires every line to
// end as the first does). CSV and text input whose first line ends in a
// lone CR is read with CR line ends throughout, as PostgreSQL does. In
// CSV and text, outside quotes, a carriage return that is not followed by
// a line feed is a record error in LF/CRLF input, and so is a line feed in
// CR input.
// The last record may lack a line end. An empty line is a record of one
// empty field, as in PostgreSQL: NULL in CSV with the default Null, the
// empty string in text; the loader then reports a field count mismatch
// unless the target has one column.
//
// Line numbers count physical lines, so a CSV record with a quoted line
// break starts on Line and ends on EndLine > Line.
//
// # Parallel reading
//
// Reader.Split hands the rest of a Reader's input to a Splitter, which
// cuts it into Chunks at record boundaries; chunk readers (NewChunkReader,
// Reset) parse the chunks on any goroutines and give, chunk after chunk,
// exactly the records, lines, offsets and record errors of one Reader.
//
// # Limits
//
// Every buffer is bounded: input is read through a fixed window, a record
// longer than Options.MaxRecordBytes (raw bytes, line end excluded) or
// with more than Options.MaxFields fields is a record error, and the
// reader skips to its end without storing it.
package records
