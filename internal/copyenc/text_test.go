package copyenc

import (
	"math"
	"testing"
)

func TestTextWriterRows(t *testing.T) {
	w := NewTextWriter(0)
	w.BeginRow(4)
	w.Int4(1)
	w.Null()
	w.String("a\tb\\c\nd\re")
	w.Bool(true)
	w.BeginRow(2)
	w.Float8(math.NaN())
	w.Text([]byte("é"))
	w.BeginRow(0)
	w.BeginRow(1)
	w.Date(0)
	want := "1\t\\N\ta\\tb\\\\c\\nd\\re\tt\n" + "NaN\té\n" + "\n" + "1970-01-01\n"
	if got := string(w.Bytes()); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestTextWriterValues(t *testing.T) {
	negZero := math.Copysign(0, -1)
	tests := []struct {
		name  string
		write func(w *TextWriter)
		want  string
	}{
		{"null", func(w *TextWriter) { w.Null() }, `\N`},
		{"false", func(w *TextWriter) { w.Bool(false) }, "f"},
		{"int2", func(w *TextWriter) { w.Int2(math.MinInt16) }, "-32768"},
		{"int4", func(w *TextWriter) { w.Int4(math.MaxInt32) }, "2147483647"},
		{"int8", func(w *TextWriter) { w.Int8(math.MinInt64) }, "-9223372036854775808"},
		{"float8 shortest", func(w *TextWriter) { w.Float8(0.1) }, "0.1"},
		{"float8 big", func(w *TextWriter) { w.Float8(1e300) }, "1e+300"},
		{"float8 -0", func(w *TextWriter) { w.Float8(negZero) }, "-0"},
		{"float8 inf", func(w *TextWriter) { w.Float8(math.Inf(1)) }, "Infinity"},
		{"float8 -inf", func(w *TextWriter) { w.Float8(math.Inf(-1)) }, "-Infinity"},
		{"float8 denormal", func(w *TextWriter) { w.Float8(5e-324) }, "5e-324"},
		{"float4 shortest", func(w *TextWriter) { w.Float4(0.1) }, "0.1"},
		{"float4 NaN", func(w *TextWriter) { w.Float4(float32(math.NaN())) }, "NaN"},
		{"timestamp epoch", func(w *TextWriter) { w.Timestamp(0) }, "1970-01-01 00:00:00+00"},
		{"timestamp micros", func(w *TextWriter) { w.Timestamp(-1) }, "1969-12-31 23:59:59.999999+00"},
		{"timestamp half second", func(w *TextWriter) { w.Timestamp(1_500000) }, "1970-01-01 00:00:01.5+00"},
		{"timestamp 1900", func(w *TextWriter) { w.Timestamp(-2203934399_500000) }, "1900-02-28 12:00:00.5+00"},
		{"timestamp leap day", func(w *TextWriter) { w.Timestamp(1709251199_123456) }, "2024-02-29 23:59:59.123456+00"},
		{"timestamp BC", func(w *TextWriter) { w.Timestamp(-63517780800_000000) }, "0044-03-15 12:00:00+00 BC"},
		{"timestamp 1 BC", func(w *TextWriter) { w.Timestamp(-62167219200_000000) }, "0001-01-01 00:00:00+00 BC"},
		{"timestamp 1 AD", func(w *TextWriter) { w.Timestamp(-62135596800_000000) }, "0001-01-01 00:00:00+00"},
		{"timestamp year 10000", func(w *TextWriter) { w.Timestamp(253402300800_000000) }, "10000-01-01 00:00:00+00"},
		{"timestamp infinity", func(w *TextWriter) { w.Timestamp(InfinityMicros) }, "infinity"},
		{"timestamp -infinity", func(w *TextWriter) { w.Timestamp(NegInfinityMicros) }, "-infinity"},
		{"date", func(w *TextWriter) { w.Date(19782) }, "2024-02-29"},
		{"date before 1970", func(w *TextWriter) { w.Date(-1) }, "1969-12-31"},
		{"date BC", func(w *TextWriter) { w.Date(-719163) }, "0001-12-31 BC"},
		{"date infinity", func(w *TextWriter) { w.Date(InfinityDays) }, "infinity"},
		{"date -infinity", func(w *TextWriter) { w.Date(NegInfinityDays) }, "-infinity"},
		{"uuid", func(w *TextWriter) {
			w.UUID([16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11})
		}, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{"json", func(w *TextWriter) { w.JSON([]byte(`{"a":"\\n"}`)) }, `{"a":"\\\\n"}`},
		{"jsonb", func(w *TextWriter) { w.JSONB([]byte("[1,\n2]")) }, `[1,\n2]`},
		{"unicode", func(w *TextWriter) { w.String("日本\u00a0語") }, "日本\u00a0語"},
	}
	for _, tt := range tests {
		w := NewTextWriter(0)
		w.BeginRow(1)
		tt.write(w)
		if got, want := string(w.Bytes()), tt.want+"\n"; got != want {
			t.Errorf("%s: %q, want %q", tt.name, got, want)
		}
	}
}

func TestTextWriterFieldAndTruncate(t *testing.T) {
	w := NewTextWriter(0)
	w.BeginRow(2)
	if err := w.Field(mustLookup(t, oidFloat8), []byte(" 1e3 ")); err != nil {
		t.Fatal(err)
	}
	if err := w.Field(mustLookup(t, oidText), []byte("a\\b")); err != nil {
		t.Fatal(err)
	}
	keep := w.Len()
	w.BeginRow(2)
	w.Int4(5)
	if err := w.Field(mustLookup(t, oidInt4), []byte("five")); err == nil {
		t.Fatal("accepted five")
	}
	if got := string(w.Bytes()[keep:]); got != "5" {
		t.Fatalf("a failed Field left %q", got)
	}
	w.Truncate(keep)
	w.BeginRow(1)
	w.Int4(6)
	if got, want := string(w.Bytes()), "1000\ta\\\\b\n6\n"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
	w.Reset()
	w.BeginRow(1)
	w.Null()
	if got := string(w.Bytes()); got != "\\N\n" {
		t.Fatalf("after Reset: %q", got)
	}
}

func TestEscapeInPlace(t *testing.T) {
	for _, s := range []string{"", "plain", "\\", "a\tb\nc\rd\\e", "\n\n\n", "tail\\"} {
		prefix := []byte("keep\t")
		got := escapeInPlace(append(prefix, s...), len(prefix))
		want := appendEscaped([]byte("keep\t"), s)
		if string(got) != string(want) {
			t.Errorf("%q: %q, want %q", s, got, want)
		}
	}
}
