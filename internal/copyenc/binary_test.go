package copyenc

import (
	"bytes"
	"math"
	"testing"
)

func TestBinaryHeaderTrailer(t *testing.T) {
	// COPY's binary file format: 11-byte signature, int32 flags, int32
	// header extension length; the trailer is an int16 -1.
	wantHeader := mustHex("5047434f50590aff0d0a00 00000000 00000000")
	if !bytes.Equal(BinaryHeader, wantHeader) {
		t.Errorf("BinaryHeader = % x, want % x", BinaryHeader, wantHeader)
	}
	if !bytes.Equal(BinaryTrailer, []byte{0xff, 0xff}) {
		t.Errorf("BinaryTrailer = % x", BinaryTrailer)
	}
}

func TestBinaryWriterFields(t *testing.T) {
	// Expected payloads are PostgreSQL's own *send output (e.g.
	// timestamptz_send('1969-12-31 23:59:59.999999Z') = fffca2fec4c81fff).
	tests := []struct {
		name  string
		write func(w *BinaryWriter)
		want  string
	}{
		{"null", func(w *BinaryWriter) { w.Null() }, "ffffffff"},
		{"true", func(w *BinaryWriter) { w.Bool(true) }, "00000001 01"},
		{"false", func(w *BinaryWriter) { w.Bool(false) }, "00000001 00"},
		{"int2", func(w *BinaryWriter) { w.Int2(-2) }, "00000002 fffe"},
		{"int4", func(w *BinaryWriter) { w.Int4(math.MinInt32) }, "00000004 80000000"},
		{"int8", func(w *BinaryWriter) { w.Int8(0x0102030405060708) }, "00000008 0102030405060708"},
		{"float4", func(w *BinaryWriter) { w.Float4(1.5) }, "00000004 3fc00000"},
		{"float4 -0", func(w *BinaryWriter) { w.Float4(float32(math.Copysign(0, -1))) }, "00000004 80000000"},
		{"float4 NaN", func(w *BinaryWriter) { w.Float4(float32(math.NaN())) }, "00000004 7fc00000"},
		{"float8", func(w *BinaryWriter) { w.Float8(0.1) }, "00000008 3fb999999999999a"},
		{"float8 -0", func(w *BinaryWriter) { w.Float8(math.Copysign(0, -1)) }, "00000008 8000000000000000"},
		{"float8 NaN", func(w *BinaryWriter) { w.Float8(math.NaN()) }, "00000008 7ff8000000000000"},
		{"float8 -Inf", func(w *BinaryWriter) { w.Float8(math.Inf(-1)) }, "00000008 fff0000000000000"},
		{"timestamp epoch", func(w *BinaryWriter) { w.Timestamp(0) }, "00000008 fffca2fec4c82000"},
		{"timestamp before 1970", func(w *BinaryWriter) { w.Timestamp(-1) }, "00000008 fffca2fec4c81fff"},
		{"timestamp 2000", func(w *BinaryWriter) { w.Timestamp(946684800_000000 + 1_000000) }, "00000008 00000000000f4240"},
		{"timestamp infinity", func(w *BinaryWriter) { w.Timestamp(InfinityMicros) }, "00000008 7fffffffffffffff"},
		{"timestamp -infinity", func(w *BinaryWriter) { w.Timestamp(NegInfinityMicros) }, "00000008 8000000000000000"},
		{"timestamp too small", func(w *BinaryWriter) { w.Timestamp(math.MinInt64 + 1) }, "00000008 8000000000000001"},
		{"date epoch", func(w *BinaryWriter) { w.Date(0) }, "00000004 ffffd533"},
		{"date 2000", func(w *BinaryWriter) { w.Date(10957) }, "00000004 00000000"},
		{"date infinity", func(w *BinaryWriter) { w.Date(InfinityDays) }, "00000004 7fffffff"},
		{"date -infinity", func(w *BinaryWriter) { w.Date(NegInfinityDays) }, "00000004 80000000"},
		{"date too small", func(w *BinaryWriter) { w.Date(math.MinInt32 + 5) }, "00000004 80000001"},
		{"text", func(w *BinaryWriter) { w.Text([]byte("hé")) }, "00000003 68c3a9"},
		{"empty text", func(w *BinaryWriter) { w.Text(nil) }, "00000000"},
		{"string", func(w *BinaryWriter) { w.String("a\tb") }, "00000003 610962"},
		{"uuid", func(w *BinaryWriter) {
			w.UUID([16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11})
		}, "00000010 a0eebc999c0b4ef8bb6d6bb9bd380a11"},
		{"json", func(w *BinaryWriter) { w.JSON([]byte(`{"a":1}`)) }, "00000007 7b2261223a317d"},
		{"jsonb", func(w *BinaryWriter) { w.JSONB([]byte(`{"a":1}`)) }, "00000008 01 7b2261223a317d"},
		{"row", func(w *BinaryWriter) { w.BeginRow(2); w.Int2(1); w.Null() }, "0002 00000002 0001 ffffffff"},
	}
	for _, tt := range tests {
		w := NewBinaryWriter(0)
		tt.write(w)
		if want := mustHex(tt.want); !bytes.Equal(w.Bytes(), want) {
			t.Errorf("%s: % x, want % x", tt.name, w.Bytes(), want)
		}
		if w.Len() != len(w.Bytes()) {
			t.Errorf("%s: Len %d != len(Bytes) %d", tt.name, w.Len(), len(w.Bytes()))
		}
	}
}

func TestBinaryWriterTruncateReset(t *testing.T) {
	w := NewBinaryWriter(64)
	w.BeginRow(1)
	w.Int4(7)
	keep := w.Len()
	w.BeginRow(2)
	w.Int4(8)
	if err := w.Field(mustLookup(t, oidInt4), []byte("x")); err == nil {
		t.Fatal("Field accepted x for an integer")
	}
	if w.Len() != keep+2+8 {
		t.Fatalf("a failed Field changed the buffer: len %d", w.Len())
	}
	w.Truncate(keep)
	if want := mustHex("0001 00000004 00000007"); !bytes.Equal(w.Bytes(), want) {
		t.Fatalf("after Truncate: % x", w.Bytes())
	}
	c := cap(w.Bytes())
	w.Reset()
	if w.Len() != 0 || cap(w.Bytes()) != c {
		t.Fatalf("Reset: len %d cap %d (was %d)", w.Len(), cap(w.Bytes()), c)
	}
	if NewBinaryWriter(-1).Len() != 0 {
		t.Fatal("negative capacity")
	}
}

func TestBinaryWriterField(t *testing.T) {
	w := NewBinaryWriter(0)
	w.BeginRow(3)
	for _, f := range []struct {
		oid  uint32
		text string
	}{{oidInt8, " -42 "}, {oidTimestamptz, "2000-01-01 00:00:01Z"}, {oidText, "x"}} {
		if err := w.Field(mustLookup(t, f.oid), []byte(f.text)); err != nil {
			t.Fatal(err)
		}
	}
	want := mustHex("0003 00000008 ffffffffffffffd6 00000008 00000000000f4240 00000001 78")
	if !bytes.Equal(w.Bytes(), want) {
		t.Fatalf("% x, want % x", w.Bytes(), want)
	}
}

func TestEpochConversions(t *testing.T) {
	if epochMicros != 946684800_000000 {
		t.Fatalf("epochMicros = %d", epochMicros)
	}
	if got := daysFromCivil(2000, 1, 1); got != epochDays {
		t.Fatalf("2000-01-01 is day %d since 1970, want %d", got, epochDays)
	}
	for _, m := range []int64{0, -1, 1, InfinityMicros - 1, math.MinInt64 + epochMicros} {
		if got := pgMicros(m); got != m-epochMicros {
			t.Errorf("pgMicros(%d) = %d", m, got)
		}
	}
	for _, d := range []int32{0, -1, math.MaxInt32 - 1, math.MinInt32 + epochDays} {
		if got := pgDays(d); got != d-epochDays {
			t.Errorf("pgDays(%d) = %d", d, got)
		}
	}
}

func mustLookup(t testing.TB, oid uint32) Codec {
	t.Helper()
	c, ok := Lookup(TypeInfo{OID: oid})
	if !ok {
		t.Fatalf("no codec for oid %d", oid)
	}
	return c
}
