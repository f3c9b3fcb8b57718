package copyenc

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// allCodecs returns every scalar codec and the array codec of each.
func allCodecs(t testing.TB) map[string]Codec {
	m := map[string]Codec{}
	for _, oid := range []uint32{oidBool, oidInt2, oidInt4, oidInt8, oidFloat4, oidFloat8, oidNumeric, oidText,
		oidVarchar, oidBpchar, oidName, oidUUID, oidJSON, oidJSONB, oidTimestamp, oidTimestamptz, oidDate} {
		b, _ := builtinOf(oid)
		c, _ := Lookup(TypeInfo{OID: oid})
		a, _ := Lookup(TypeInfo{OID: b.arrayOID, ElemOID: oid})
		if c == nil || a == nil {
			t.Fatalf("oid %d", oid)
		}
		m[b.name] = c
		m[b.name+"[]"] = a
	}
	return m
}

// unescapeCopy undoes COPY text escaping (the subset the writers emit).
func unescapeCopy(t testing.TB, b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '\t' || c == '\n' || c == '\r' {
			t.Fatalf("unescaped %q in COPY text %q", c, b)
		}
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i == len(b) {
			t.Fatalf("lone backslash at the end of %q", b)
		}
		switch b[i] {
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case '\\':
			out = append(out, '\\')
		default:
			t.Fatalf("unexpected escape \\%c in %q", b[i], b)
		}
	}
	return out
}

var fuzzSeeds = []string{
	"", " ", "0", "-0", "+1", "12", " 42 ", "9223372036854775808", "1.5", ".5", "1.", "1e10", "1.5e-3", "-1E+5",
	"NaN", "Infinity", "-inf", "1e400", "5e-324", "0x1p3", "1_000", "t", "off", "yes", "tr",
	"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "{A0EEBC999C0B4EF8BB6D6BB9BD380A11}",
	"2024-01-02", "2024-01-02 03:04:05.123456789+05:30", "0044-03-15 12:00:00 BC", "2024-02-30", "infinity",
	"294276-12-31 23:59:59.999999", "2024-01-01 24:00", "1969-12-31T23:59:59Z",
	`{"a":[1,2,{"b":null}]}`, `"\ud83d\ude00"`, `"\u0000"`, "日本語", "a\x00b", "\xff",
	"{}", "{1,2}", "{{1,2},{3,NULL}}", `{"a b","c\"d",NULL,"NULL"}`, "{{},{}}", "[0:1]={1,2}", `{a\ ,\,}`,
	"{{{{{{1}}}}}}", "{1.5e3,NaN,-0}", `{"2024-01-02 03:04:05+02",infinity}`, "{t,f,NULL}",
}

// FuzzCodecs checks every codec on arbitrary input: no panics, dst
// untouched on error, a well-formed field on success, and text COPY
// agreeing with binary COPY: the canonical text AppendText writes parses
// back to the same binary value.
func FuzzCodecs(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	codecs := allCodecs(f)
	prefix := []byte{0xAA, 0xBB}
	f.Fuzz(func(t *testing.T, in string) {
		for name, c := range codecs {
			bin, errB := c.AppendBinary(bytes.Clone(prefix), []byte(in))
			txt, errT := c.AppendText(bytes.Clone(prefix), []byte(in))
			if (errB == nil) != (errT == nil) {
				t.Fatalf("%s %q: binary error %v, text error %v", name, in, errB, errT)
			}
			if errB != nil {
				if !IsValueError(errB) || !IsValueError(errT) {
					t.Fatalf("%s %q: errors %T %T", name, in, errB, errT)
				}
				if !bytes.Equal(bin, prefix) || !bytes.Equal(txt, prefix) {
					t.Fatalf("%s %q: dst changed on error", name, in)
				}
				continue
			}
			if !bytes.HasPrefix(bin, prefix) || !bytes.HasPrefix(txt, prefix) {
				t.Fatalf("%s %q: prefix clobbered", name, in)
			}
			payload := onlyField(t, bin[len(prefix):])
			if strings.HasSuffix(name, "[]") {
				decodeArray(t, payload)
			}
			canon := unescapeCopy(t, txt[len(prefix):])
			again, err := c.AppendBinary(nil, canon)
			if err != nil {
				t.Fatalf("%s %q: canonical text %q rejected: %v", name, in, canon, err)
			}
			if !bytes.Equal(again, bin[len(prefix):]) {
				t.Fatalf("%s %q: canonical text %q encodes to % x, input to % x", name, in, canon, again, bin[len(prefix):])
			}
		}
	})
}

// decimalRE is the decimal syntax float8in, numeric_in (and this package)
// accept, white space aside.
var decimalRE = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// numericRE is numeric_in's decimal syntax: as decimalRE, with white
// space allowed after the e (its exponent is read by strtol).
var numericRE = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][ \t\n\v\f\r]*[+-]?[0-9]+)?$`)

// FuzzNumeric compares the numeric codec with math/big: the decoded
// binary value equals the input's exact value, with numeric_in's dscale.
func FuzzNumeric(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("1234567890123456789012345678901234567890.0987654321")
	f.Add("-0.000000000000000000000000000000000000001234e-20")
	f.Add("99999999.9999e4")
	f.Fuzz(func(t *testing.T, in string) {
		n, reason := parseNumeric([]byte(in))
		s := string(trimSpace([]byte(in)))
		if !numericRE.MatchString(s) {
			if reason == "" && n.sign != numericNaN && n.sign != numericPInf && n.sign != numericNInf {
				t.Fatalf("%q accepted as %v", in, n)
			}
			return
		}
		s = strings.Join(strings.Fields(s), "") // numeric_in's strtol skips white space after the e
		mant, exp, _ := strings.Cut(strings.ToLower(s), "e")
		e := 0
		if exp != "" {
			v, err := strconv.Atoi(exp)
			if err != nil || v > numericMaxExp || v < -numericMaxExp {
				if reason == "" {
					t.Fatalf("%q: exponent %q accepted", in, exp)
				}
				return
			}
			e = v
		}
		_, frac, _ := strings.Cut(mant, ".")
		dscale := max(len(frac)-e, 0)
		if dscale > numericMaxDscale || len(mant)+e > 4*numericMaxWeight {
			return // limits: tested in TestNumericCodec
		}
		if reason != "" {
			t.Fatalf("%q rejected: %s", in, reason)
		}
		out := n.appendBinary(nil)
		text := decodeNumeric(t, onlyField(t, out))
		gotScale := 0
		if i := strings.IndexByte(text, '.'); i >= 0 {
			gotScale = len(text) - i - 1
		}
		if gotScale != dscale {
			t.Fatalf("%q: decoded %q, want dscale %d", in, text, dscale)
		}
		want, ok1 := new(big.Rat).SetString(s)
		got, ok2 := new(big.Rat).SetString(text)
		if !ok1 || !ok2 || want.Cmp(got) != 0 {
			t.Fatalf("%q decodes to %q", in, text)
		}
		if string(n.appendText(nil)) != text {
			t.Fatalf("%q: text %q, decoded binary %q", in, n.appendText(nil), text)
		}
	})
}

// FuzzFloat compares float8 and float4 parsing with math/big's correctly
// rounded conversion, and checks the text spelling round-trips.
func FuzzFloat(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("1.000000059604644775390625000000000001")
	f.Add("2.4703282292062328e-324")
	f.Fuzz(func(t *testing.T, in string) {
		s := string(trimSpace([]byte(in)))
		for _, bits := range []uint{64, 32} {
			v, reason := parseFloat([]byte(in), bits == 32)
			if reason != "" && decimalRE.MatchString(s) && !strings.Contains(reason, "out of range") {
				t.Fatalf("%q (%d bits) rejected: %s", in, bits, reason)
			}
			// 4096 bits hold any short decimal closely enough that rounding
			// it again to 24 or 53 bits is the correctly rounded result.
			if decimalRE.MatchString(s) && len(s) <= 200 && smallExponent(s) {
				ref, _, err := big.ParseFloat(s, 10, 4096, big.ToNearestEven)
				if err == nil {
					var want float64
					if bits == 64 {
						want, _ = ref.Float64()
					} else {
						w, _ := ref.Float32()
						want = float64(w)
					}
					outOfRange := math.IsInf(want, 0) || want == 0 && ref.Sign() != 0
					switch {
					case reason != "" && !outOfRange:
						t.Fatalf("%q (%d bits) rejected as out of range, big says %v", in, bits, want)
					case reason == "" && outOfRange:
						t.Fatalf("%q (%d bits) = %v, big says out of range", in, bits, v)
					case reason == "" && math.Float64bits(want) != math.Float64bits(v):
						t.Fatalf("%q (%d bits) = %v, big says %v", in, bits, v, want)
					}
				}
			}
			if reason != "" {
				continue
			}
			again, reason := parseFloat(appendFloatText(nil, v, int(bits)), bits == 32)
			if reason != "" || math.Float64bits(again) != math.Float64bits(v) && !(math.IsNaN(v) && math.IsNaN(again)) {
				t.Fatalf("%q (%d bits): %v spelled %q reads back as %v (%s)", in, bits, v, appendFloatText(nil, v, int(bits)), again, reason)
			}
		}
	})
}

// FuzzFastFloat checks that the plain-decimal fast path gives the bits
// the full parser gives whenever it answers (the full parser is checked
// against math/big by FuzzFloat and against the server by
// TestDifferential).
func FuzzFastFloat(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, s := range []string{"0.45", "-12.5", "+.5", "7.", "-0", "-0.000", "9007199254740993", "9007199254740992.0",
		"0.0000000000000000000001", "16777217", "1677721.7", "0.1", "-3.4028235", "00000000000000000000001.5", "1.2.3", ".", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, is32 := range []bool{false, true} {
			v, ok := fastFloat([]byte(in), is32)
			if !ok {
				continue
			}
			want, reason := parseFloatFull([]byte(in), is32)
			if reason != "" {
				t.Fatalf("%q (real %v): fast path %v, full parser refuses: %s", in, is32, v, reason)
			}
			if math.Float64bits(v) != math.Float64bits(want) {
				t.Fatalf("%q (real %v): fast path %v (%#x), full parser %v (%#x)", in, is32, v, math.Float64bits(v), want, math.Float64bits(want))
			}
		}
	})
}

// smallExponent reports whether a decimal's exponent is within ±10000,
// where math/big represents it without underflow.
func smallExponent(s string) bool {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return true
	}
	e, err := strconv.Atoi(s[i+1:])
	return err == nil && e >= -10000 && e <= 10000
}

// FuzzInt compares integer parsing with strconv and checks the binary
// round trip.
func FuzzInt(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	intRE := regexp.MustCompile(`^[+-]?[0-9]+$`)
	f.Fuzz(func(t *testing.T, in string) {
		s := string(trimSpace([]byte(in)))
		for _, k := range []struct {
			kind kind
			bits int
		}{{kindInt2, 16}, {kindInt4, 32}, {kindInt8, 64}} {
			v, reason := parseInt([]byte(in), k.kind)
			want, err := strconv.ParseInt(s, 10, k.bits)
			if !intRE.MatchString(s) {
				if reason == "" {
					t.Fatalf("%q accepted as %d", in, v)
				}
				continue
			}
			if (err == nil) != (reason == "") || err == nil && v != want {
				t.Fatalf("%q (%d bits) = %d, %q; strconv %d, %v", in, k.bits, v, reason, want, err)
			}
			if reason != "" {
				continue
			}
			p := onlyField(t, appendIntField(nil, v, k.kind))
			var got int64
			switch k.bits {
			case 16:
				got = int64(int16(binary.BigEndian.Uint16(p)))
			case 32:
				got = int64(int32(binary.BigEndian.Uint32(p)))
			default:
				got = int64(binary.BigEndian.Uint64(p))
			}
			if got != v {
				t.Fatalf("%q: encoded %d decodes to %d", in, v, got)
			}
		}
	})
}

// isoRE is a strict ISO 8601 subset for an independent reference parse.
var isoRE = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})?$`)

// FuzzTimestamp compares ParseTimestamp with the time package on a strict
// ISO subset, and checks that the text spelling of every accepted value
// reads back to the same micros, through the binary encoding too.
func FuzzTimestamp(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("2024-02-29T23:59:59.999999-11:30")
	f.Add("1900-01-01 00:00:00.000001+15:00")
	codec := mustLookup(f, oidTimestamptz)
	f.Fuzz(func(t *testing.T, in string) {
		micros, err := ParseTimestamp([]byte(in))
		if m := isoRE.FindStringSubmatch(in); m != nil {
			atoi := func(s string) int { v, _ := strconv.Atoi(s); return v }
			y, mo, d := atoi(m[1]), atoi(m[2]), atoi(m[3])
			h, mi, sec := atoi(m[4]), atoi(m[5]), atoi(m[6])
			us := 0
			if m[7] != "" {
				us = atoi((m[7][1:] + "00000")[:6])
			}
			off := 0
			if z := m[8]; len(z) == 6 {
				off = atoi(z[1:3])*3600 + atoi(z[4:6])*60
				if z[0] == '-' {
					off = -off
				}
			}
			tm := time.Date(y, time.Month(mo), d, h, mi, sec, us*1000, time.UTC)
			day := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
			valid := y >= 1 && day.Year() == y && int(day.Month()) == mo && day.Day() == d &&
				(h < 24 || h == 24 && mi == 0 && sec == 0 && us == 0) && mi < 60 && sec < 60 &&
				off/3600 <= 15 && off/3600 >= -15 && atoi(m[8][min(len(m[8]), 4):]) < 60
			if valid != (err == nil) {
				t.Fatalf("%q: reference valid=%v, ParseTimestamp err=%v", in, valid, err)
			}
			if valid && micros != tm.UnixMicro()-int64(off)*1e6 {
				t.Fatalf("%q = %d, want %d", in, micros, tm.UnixMicro()-int64(off)*1e6)
			}
		}
		if err != nil {
			return
		}
		spelled := appendPGTimestampText(nil, pgMicros(micros))
		again, err := ParseTimestamp(spelled)
		if err != nil || again != micros {
			t.Fatalf("%q = %d spelled %q reads back as %d, %v", in, micros, spelled, again, err)
		}
		out, err := codec.AppendBinary(nil, []byte(in))
		if err != nil {
			t.Fatalf("%q: ParseTimestamp accepts, the codec rejects: %v", in, err)
		}
		if got := int64(binary.BigEndian.Uint64(onlyField(t, out))); got != pgMicros(micros) {
			t.Fatalf("%q: binary %d, want %d", in, got, pgMicros(micros))
		}
	})
}

// FuzzFixedTimestamp checks that the fixed-offset ISO path agrees with
// the scanner and the general reader wherever it accepts, in a DST
// session zone, with and without time zone.
func FuzzFixedTimestamp(f *testing.F) {
	for _, s := range []string{"2024-03-10 02:30:00", "2024-11-03T01:30:00.5", "2024-02-29 23:59:59.999999", "2023-02-29 00:00:00",
		"0000-01-01 00:00:00", "9999-12-31 23:59:59", "2024-01-02 24:00:00", "2024-01-02 23:60:00", "2024-01-02 23:59:60",
		"2024-01-02 03:04:05.", "2024-01-02 03:04:05.1234567", "2024-01-02 03:04:05Z", "2024-01-02 03:04:05+01", "+024-01-02 03:04:05",
		"2024-01-02 03:04:05+00", "2024-01-02 03:04:05.123-05:30", "2024-01-02 03:04:05+15:59", "2024-01-02 03:04:05+16",
		"2024-01-02 03:04:05.+00", "2024-01-02 03:04:05.1234567+00", "2024-01-02 03:04:05+0530", "2024-01-02 03:04:05-05:"} {
		f.Add(s)
	}
	z := newYork(f, "America/New_York")
	f.Fuzz(func(t *testing.T, in string) {
		for _, withTZ := range []bool{true, false} {
			fixed, ok := z.fixedTimestamp([]byte(in), withTZ)
			if !ok {
				continue
			}
			scanned, sok := z.scanTimestamp([]byte(in), withTZ)
			slow, reason := z.slowTimestamp([]byte(in), withTZ)
			if !sok || scanned != fixed || reason != "" || slow != fixed {
				t.Fatalf("%q withTZ=%v: fixed %d, scanner %d (%v), general reader %d %q", in, withTZ, fixed, scanned, sok, slow, reason)
			}
		}
	})
}

// FuzzEscape checks COPY text escaping against its inverse.
func FuzzEscape(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("a\tb\nc\rd\\e\\N")
	f.Fuzz(func(t *testing.T, s string) {
		esc := appendEscaped(nil, s)
		if got := unescapeCopy(t, esc); string(got) != s {
			t.Fatalf("%q escapes to %q, which unescapes to %q", s, esc, got)
		}
		w := NewTextWriter(0)
		w.BeginRow(2)
		w.String(s)
		w.Text([]byte(s))
		if want := string(esc) + "\t" + string(esc) + "\n"; string(w.Bytes()) != want {
			t.Fatalf("row %q, want %q", w.Bytes(), want)
		}
	})
}

// FuzzDateTime drives the datetime reader (tokenizer, field decoding,
// zones) in a DST session zone: the ISO fast path must agree with the
// general reader wherever it accepts, and every accepted timestamp's
// canonical spelling must read back to the same value. (What the server
// makes of the same text is the differential test's business.)
func FuzzDateTime(f *testing.F) {
	for _, s := range []string{"2024-03-10 02:30", "2024-11-03T01:30:00.5", "Jan 8 1999 4:05 PM EST", "1999-01-08 04:05:06 America/New_York",
		"J2451545.5", "19990108 040506-08", "epoch", "-infinity", "2024-01-02 23:59:60", "01/02/03 allballs", "1.2.3", "y2024m01d02",
		"2024-01-01 10:00 utc+3", "2024-01-01 10:00 EST5EDT1", "5874897-12-31 BC", "2024-01-02T10:00:00Z", "now", "12:00 2024-01-01"} {
		f.Add(s)
	}
	z := newYork(f, "America/New_York")
	f.Fuzz(func(t *testing.T, in string) {
		for _, withTZ := range []bool{true, false} {
			slowT, slowR := z.slowTimestamp([]byte(in), withTZ)
			if fastT, ok := z.fastTimestamp([]byte(in), withTZ); ok && (slowR != "" || slowT != fastT) {
				t.Fatalf("%q withTZ=%v: fast path %d, general reader %d %q", in, withTZ, fastT, slowT, slowR)
			}
			if slowR != "" {
				continue
			}
			spelled := appendPGTimestampText(nil, slowT)
			again, r := UTC().parsePGTimestamp(spelled, true)
			if r != "" || again != slowT {
				t.Fatalf("%q = %d spelled %q reads back as %d %q", in, slowT, spelled, again, r)
			}
		}
		_, _ = z.parsePGDate([]byte(in))
	})
}
