package records

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// fuzzOptions picks options of format f from the bits of sel.
func fuzzOptions(f Format, sel byte) Options {
	o := DefaultOptions(f)
	switch f {
	case CSV:
		if sel&1 != 0 {
			o.Escape = '\\'
		}
		if sel&2 != 0 {
			o.Null = "NA"
		}
		if sel&4 != 0 {
			o.Delimiter, o.Quote, o.Escape = ';', '\'', '\''
			if sel&1 != 0 {
				o.Escape = '"'
			}
		}
		o.Strict = sel&8 != 0
	default:
		if sel&1 != 0 {
			o.Delimiter = '|'
		}
		switch sel >> 1 & 3 {
		case 1:
			o.Null = ""
		case 2:
			o.Null = "NULL"
		}
	}
	if sel&16 != 0 {
		o.Header = true
	}
	if sel&32 != 0 {
		o.MaxRecordBytes, o.MaxFields = 8, 3
	}
	return o
}

// fuzzReader checks, for any input: no panic, Next ends, offsets strictly
// increase, lines never go back, the result does not depend on how the
// input is cut into reads; and, without the options the reference does
// not model, that it agrees with the reference reader.
func fuzzReader(t *testing.T, f Format, data []byte, sel byte) {
	o := fuzzOptions(f, sel)
	variants(t, string(data), o)
	if !o.Strict && !o.Header {
		differential(t, data, o)
	}
}

var fuzzSeeds = []string{
	"", "a", "\n", "\r", "\r\n", "a,b\nc,d\n", "a,b\r\nc,d\r\n", "a\rb\r",
	"\"a,b\",\"c\"\"d\"\n", "\"multi\nline\",x\r\n", "a\"b,c\"d\n", "\"ab\"cd\n",
	"\"unterminated\n", "\\.\n", "a\n\\.\nb\n", "\\.", "a\n\\.\r\nb", "\\.\rx",
	"a\tb\n", "\\N\t\\\\N\t\\x41\\101\\777\\xg\n", "a\\\nb\n", "a\\", "a\t3\\.14\n",
	"a\\.\n", "NA,,\"\"\n", "'a;b';'it''s'\n", "\"a\\\"b\"\n", "x\na\rb\n", "\n\n\n",
	"0123456789,0123456789\n", "a,b,c,d,e,f\n", "\"\"\"\"\n", "a\t\\\r\n",
}

func FuzzCSV(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s), byte(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, sel byte) { fuzzReader(t, CSV, data, sel) })
}

func FuzzText(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s), byte(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, sel byte) { fuzzReader(t, Text, data, sel) })
}

func FuzzTSV(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s), byte(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, sel byte) { fuzzReader(t, TSV, data, sel) })
}

// splitRecords makes records of fields from data: 0x01 separates records,
// 0x02 fields.
func splitRecords(data []byte) [][]string {
	var recs [][]string
	for _, r := range bytes.Split(data, []byte{1}) {
		recs = append(recs, strings.Split(string(r), "\x02"))
	}
	return recs
}

// FuzzCSVRoundTrip writes records with encoding/csv and with a writer
// quoting every field (custom quote and escape, CRLF), and reads them
// back: the same fields.
func FuzzCSVRoundTrip(f *testing.F) {
	for _, s := range []string{"", "a\x02b", "a\x01b\x02", "\\.", "\\.\x02x", "\"\x02,\x02\r\n\x02\n", " x \x01\x01", "a\"b\x02'\\"} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, custom bool) {
		recs := splitRecords(data)
		var buf bytes.Buffer
		o := DefaultOptions(CSV)
		if custom {
			o.Delimiter, o.Quote, o.Escape = ';', '\'', '\\'
			for _, rec := range recs {
				for i, field := range rec {
					if i > 0 {
						buf.WriteByte(';')
					}
					buf.WriteByte('\'')
					for _, c := range []byte(field) {
						if c == '\'' || c == '\\' {
							buf.WriteByte('\\')
						}
						buf.WriteByte(c)
					}
					buf.WriteByte('\'')
				}
				buf.WriteString("\r\n")
			}
		} else {
			w := csv.NewWriter(&buf)
			if err := w.WriteAll(recs); err != nil {
				t.Skip(err) // a field encoding/csv refuses
			}
		}
		o.MaxRecordBytes = MaxMaxRecordBytes
		o.MaxFields = MaxMaxFields
		r, err := NewReader(bytes.NewReader(buf.Bytes()), o)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range recs {
			rec, err := r.Next()
			if err != nil {
				t.Fatalf("record %d of %q: %v", i+1, buf.Bytes(), err)
			}
			got := make([]string, len(rec.Fields))
			for j, f := range rec.Fields {
				got[j] = string(f)
				if rec.Null[j] && (custom || want[j] != "") {
					t.Fatalf("record %d of %q: field %d is NULL, want %q", i+1, buf.Bytes(), j+1, want[j])
				}
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
				t.Fatalf("record %d of %q = %q, want %q", i+1, buf.Bytes(), got, want)
			}
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("after %d records of %q: %v, want io.EOF", len(recs), buf.Bytes(), err)
		}
	})
}

// textEscape writes a field as PostgreSQL's COPY TO does in text format.
func textEscape(buf *bytes.Buffer, field string, delim byte) {
	for _, c := range []byte(field) {
		switch c {
		case '\\', delim:
			buf.WriteByte('\\')
			buf.WriteByte(c)
		case '\b':
			buf.WriteString(`\b`)
		case '\f':
			buf.WriteString(`\f`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		case '\v':
			buf.WriteString(`\v`)
		default:
			buf.WriteByte(c)
		}
	}
}

// FuzzTextRoundTrip writes records in text format (a field "\x03" stands
// for NULL) and reads them back.
func FuzzTextRoundTrip(f *testing.F) {
	for _, s := range []string{"", "a\x02b", "\x03\x02\\N", "\\.", ".\x01\\", "\t\n\r\b\f\v\\|", "\x01\x01"} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, crlf bool) {
		recs := splitRecords(data)
		o := DefaultOptions(Text)
		o.MaxRecordBytes, o.MaxFields = MaxMaxRecordBytes, MaxMaxFields
		if crlf {
			o.Delimiter = '|'
		}
		var buf bytes.Buffer
		for _, rec := range recs {
			for i, field := range rec {
				if i > 0 {
					buf.WriteByte(o.Delimiter)
				}
				if field == "\x03" {
					buf.WriteString(`\N`)
				} else {
					textEscape(&buf, field, o.Delimiter)
				}
			}
			if crlf {
				buf.WriteString("\r\n")
			} else {
				buf.WriteString("\n")
			}
		}
		buf.WriteString("\\.\n")
		r, err := NewReader(bytes.NewReader(buf.Bytes()), o)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range recs {
			rec, err := r.Next()
			if err != nil {
				t.Fatalf("record %d of %q: %v", i+1, buf.Bytes(), err)
			}
			if len(rec.Fields) != len(want) {
				t.Fatalf("record %d of %q has %d fields, want %d", i+1, buf.Bytes(), len(rec.Fields), len(want))
			}
			for j, f := range rec.Fields {
				if rec.Null[j] != (want[j] == "\x03") || (!rec.Null[j] && string(f) != want[j]) {
					t.Fatalf("record %d of %q: field %d = %q (NULL %v), want %q", i+1, buf.Bytes(), j+1, f, rec.Null[j], want[j])
				}
			}
		}
		if _, err := r.Next(); err != io.EOF || !r.EndMarker() {
			t.Fatalf("after %d records of %q: %v, want io.EOF at the end marker", len(recs), buf.Bytes(), err)
		}
	})
}

// FuzzSplit checks that reading an input split into chunks of any size,
// after any number of records read sequentially, gives what reading it
// whole gives: records, line numbers, offsets, record errors, header, end
// marker and the error that ends it.
func FuzzSplit(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add([]byte(s), byte(i), byte(i%5), uint8(i%3))
	}
	f.Add([]byte("a,\"b\nc\"\r\nd,e\n\"\"\"x\ny\"\"\",z\n"), byte(0), byte(2), uint8(0))
	f.Add([]byte("a\\\nb\tc\\\\\nd\\.\n"), byte(64), byte(1), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, sel, size byte, peek uint8) {
		format := Format(sel >> 6 % 3)
		o := fuzzOptions(format, sel)
		r, err := newReader(bytes.NewReader(data), o, windowSize)
		if err != nil {
			t.Fatal(err)
		}
		want := readAll(t, r, len(data))
		got := readSplit(t, iotest.HalfReader(bytes.NewReader(data)), o, int(size)+1, int(peek%4))
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("%v input %q, options %+v, chunks of %d after %d records (-whole +split):\n%s", format, data, o, int(size)+1, peek%4, d)
		}
	})
}
