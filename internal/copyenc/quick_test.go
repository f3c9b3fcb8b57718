package copyenc

import (
	"bytes"
	"testing"
)

// quickCodecs are the codecs with a quick reader, by the reader.
var quickCodecs = []struct {
	q   Quick
	oid uint32
}{{QuickInt2, oidInt2}, {QuickInt4, oidInt4}, {QuickInt8, oidInt8}, {QuickFloat4, oidFloat4}, {QuickFloat8, oidFloat8}}

// checkQuick: what AppendQuick writes for text is what Field writes, and
// it writes nothing when it declines.
func checkQuick(t *testing.T, q Quick, c Codec, text string) (taken bool) {
	t.Helper()
	quick := NewBinaryWriter(0)
	quick.buf = append(quick.buf, 7) // a row already begun
	if !quick.AppendQuick(q, []byte(text)) {
		if quick.Len() != 1 {
			t.Fatalf("quick %d declined %q but wrote %x", q, text, quick.Bytes())
		}
		return false
	}
	full := NewBinaryWriter(0)
	full.buf = append(full.buf, 7)
	if err := full.Field(c, []byte(text)); err != nil {
		t.Fatalf("quick %d took %q, which the codec refuses: %v", q, text, err)
	}
	if !bytes.Equal(quick.Bytes(), full.Bytes()) {
		t.Fatalf("quick %d wrote %x for %q, the codec %x", q, quick.Bytes(), text, full.Bytes())
	}
	return true
}

func TestQuick(t *testing.T) {
	for _, qc := range quickCodecs {
		c, ok := Lookup(TypeInfo{OID: qc.oid})
		if !ok || QuickOf(c) != qc.q {
			t.Fatalf("oid %d: QuickOf = %d, want %d", qc.oid, QuickOf(c), qc.q)
		}
	}
	for _, oid := range []uint32{oidNumeric, oidText, oidTimestamptz, oidBool} {
		c, _ := Lookup(TypeInfo{OID: oid})
		if q := QuickOf(c); q != QuickNone {
			t.Errorf("oid %d has quick reader %d", oid, q)
		}
	}
	cases := []struct {
		q     Quick
		text  string
		taken bool
	}{
		{QuickInt2, "9999", true}, {QuickInt2, "-9999", true}, {QuickInt2, "+0", true}, {QuickInt2, "-0", true},
		{QuickInt2, "10000", false}, {QuickInt2, "32767", false}, {QuickInt2, "00001", false},
		{QuickInt4, "999999999", true}, {QuickInt4, "-123456789", true}, {QuickInt4, "2147483647", false},
		{QuickInt4, "-2147483648", false}, {QuickInt4, "99999999999", false},
		{QuickInt8, "999999999999999999", true}, {QuickInt8, "-999999999999999999", true},
		{QuickInt8, "9223372036854775807", false}, {QuickInt8, "9223372036854775808", false},
		{QuickInt4, "", false}, {QuickInt4, "-", false}, {QuickInt4, "+", false}, {QuickInt4, " 1", false},
		{QuickInt4, "1 ", false}, {QuickInt4, "1a", false}, {QuickInt4, "0x1", false}, {QuickInt4, "1.0", false},
		{QuickFloat8, "21.5", true}, {QuickFloat8, "-0.0", true}, {QuickFloat8, "1e3", false},
		{QuickFloat8, "NaN", false}, {QuickFloat8, " 1", false}, {QuickFloat4, "0.1", true},
		{QuickFloat4, "16777217", false},
	}
	for _, tc := range cases {
		var c Codec
		for _, qc := range quickCodecs {
			if qc.q == tc.q {
				c, _ = Lookup(TypeInfo{OID: qc.oid})
			}
		}
		if got := checkQuick(t, tc.q, c, tc.text); got != tc.taken {
			t.Errorf("quick %d %q: taken %v, want %v", tc.q, tc.text, got, tc.taken)
		}
	}
}

// FuzzQuick: for any text, each quick reader writes what the codec's
// Field writes, or declines and writes nothing.
func FuzzQuick(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, s := range []string{"9999", "-32768", "2147483647", "999999999999999999", "0.1", "16777216.5", "-0"} {
		f.Add(s)
	}
	codecs := make([]Codec, len(quickCodecs))
	for i, qc := range quickCodecs {
		codecs[i], _ = Lookup(TypeInfo{OID: qc.oid})
	}
	f.Fuzz(func(t *testing.T, text string) {
		for i, qc := range quickCodecs {
			checkQuick(t, qc.q, codecs[i], text)
		}
	})
}
