package copyenc

import "testing"

// hotInputs are typical fields of the hot column types.
var hotInputs = []struct {
	name string
	oid  uint32
	text string
}{
	{"timestamptz", oidTimestamptz, "2024-03-15 12:34:56.789012+00"},
	{"timestamptz no zone", oidTimestamptz, "2024-03-15 12:34:56.789012"},
	{"float8", oidFloat8, "23.456789012345"},
	{"float8 short", oidFloat8, "0.45"},
	{"int4", oidInt4, "1234567"},
	{"text", oidText, "device_000123 in room 42"},
	{"numeric", oidNumeric, "12345.6789"},
	{"int4[]", 0, "{1,2,3,4,5,6,7,8}"},
}

func hotCodec(tb testing.TB, oid uint32, name string) Codec {
	if oid != 0 {
		return mustLookup(tb, oid)
	}
	c, _ := Lookup(TypeInfo{OID: 1007, ElemOID: oidInt4, Name: name})
	return c
}

func BenchmarkCodecBinary(b *testing.B) {
	for _, in := range hotInputs {
		b.Run(in.name, func(b *testing.B) {
			c := hotCodec(b, in.oid, in.name)
			text := []byte(in.text)
			buf := make([]byte, 0, 256)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = c.AppendBinary(buf[:0], text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCodecText(b *testing.B) {
	for _, in := range hotInputs {
		b.Run(in.name, func(b *testing.B) {
			c := hotCodec(b, in.oid, in.name)
			text := []byte(in.text)
			buf := make([]byte, 0, 256)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = c.AppendText(buf[:0], text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBinaryWriterRow encodes a parsed 4-column row (time, id,
// value, tag) through the FieldWriter methods, as generators do.
func BenchmarkBinaryWriterRow(b *testing.B) {
	w := NewBinaryWriter(1 << 16)
	tag := []byte("device_000123")
	b.SetBytes(int64(2 + 12 + 8 + 12 + 4 + len(tag)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if w.Len() > 1<<15 {
			w.Reset()
		}
		w.BeginRow(4)
		w.Timestamp(1710506096_789012 + int64(i))
		w.Int4(int32(i))
		w.Float8(23.456789)
		w.Text(tag)
	}
}

// BenchmarkBinaryWriterFields parses and encodes the same row from text
// fields, as the file loader does.
func BenchmarkBinaryWriterFields(b *testing.B) {
	w := NewBinaryWriter(1 << 16)
	codecs := []Codec{mustLookup(b, oidTimestamptz), mustLookup(b, oidInt4), mustLookup(b, oidFloat8), mustLookup(b, oidText)}
	fields := [][]byte{[]byte("2024-03-15 12:34:56.789012+00"), []byte("1234567"), []byte("23.456789"), []byte("device_000123")}
	n := 0
	for _, f := range fields {
		n += len(f) + 1
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		if w.Len() > 1<<15 {
			w.Reset()
		}
		w.BeginRow(len(fields))
		for i, f := range fields {
			if err := w.Field(codecs[i], f); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkTextWriterRow(b *testing.B) {
	w := NewTextWriter(1 << 16)
	tag := []byte("device_000123")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if w.Len() > 1<<15 {
			w.Reset()
		}
		w.BeginRow(4)
		w.Timestamp(1710506096_789012 + int64(i))
		w.Int4(int32(i))
		w.Float8(23.456789)
		w.Text(tag)
	}
}

// TestHotPathAllocs pins the zero-allocation claim of the hot codecs and
// the writers.
func TestHotPathAllocs(t *testing.T) {
	for _, in := range hotInputs {
		c := hotCodec(t, in.oid, in.name)
		text := []byte(in.text)
		buf := make([]byte, 0, 256)
		if n := testing.AllocsPerRun(100, func() { buf, _ = c.AppendBinary(buf[:0], text) }); n != 0 {
			t.Errorf("%s AppendBinary: %v allocs", in.name, n)
		}
		if n := testing.AllocsPerRun(100, func() { buf, _ = c.AppendText(buf[:0], text) }); n != 0 {
			t.Errorf("%s AppendText: %v allocs", in.name, n)
		}
	}
	escaped, _ := Lookup(TypeInfo{OID: 1009, ElemOID: oidText})
	buf := make([]byte, 0, 256)
	lit := []byte(`{"a\"b",c}`)
	if n := testing.AllocsPerRun(100, func() { buf, _ = escaped.AppendBinary(buf[:0], lit) }); n != 0 {
		t.Errorf("escaped array elements: %v allocs", n)
	}
	bw, tw := NewBinaryWriter(1<<12), NewTextWriter(1<<12)
	for _, w := range []FieldWriter{bw, tw} {
		if n := testing.AllocsPerRun(100, func() {
			bw.Reset()
			tw.Reset()
			w.BeginRow(6)
			w.Timestamp(1710506096_789012)
			w.Int4(1)
			w.Float8(2.5)
			w.String("x\ty")
			w.UUID([16]byte{1})
			w.Null()
		}); n != 0 {
			t.Errorf("%T: %v allocs per row", w, n)
		}
	}
}

// BenchmarkDateTimeSpellings reads timestamptz spellings off the ISO fast
// path, and zone-less values in a DST zone (the session zone's offset is
// looked up per value).
func BenchmarkDateTimeSpellings(b *testing.B) {
	ny, err := NewZones(ZonesConfig{Session: "America/New_York", Abbrevs: utcAbbrevs})
	if err != nil {
		b.Fatal(err)
	}
	for _, in := range []struct {
		name string
		z    *Zones
		text string
	}{
		{"iso-utc", UTC(), "2024-03-15 12:34:56.789012+00"},
		{"iso-newyork", ny, "2024-03-15 12:34:56.789012"},
		{"textual-month", UTC(), "Fri Mar 15 12:34:56.789 2024 +05:30"},
		{"zone-name", ny, "2024-03-15 12:34:56 America/New_York"},
		{"julian", UTC(), "J2460385.5"},
	} {
		b.Run(in.name, func(b *testing.B) {
			c, _ := LookupIn(TypeInfo{OID: oidTimestamptz}, in.z)
			text := []byte(in.text)
			buf := make([]byte, 0, 64)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = c.AppendBinary(buf[:0], text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
