package ingest

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func nan() float64 { return math.NaN() }

func TestParseInt(t *testing.T) {
	cases := []string{"0", "-0", "+7", "123", "-123", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "-9223372036854775809", "99999999999999999999", "000000000000000000000042",
		"", "-", "+", "1a", " 1", "1 ", "0x10", "1_000", "1.0", "١"}
	for _, s := range cases {
		want, werr := strconv.ParseInt(s, 10, 64)
		got, ok := ParseInt([]byte(s))
		if ok != (werr == nil) || (ok && got != want) {
			t.Errorf("ParseInt(%q) = %d, %v; strconv says %d, %v", s, got, ok, want, werr)
		}
	}
}

func FuzzParseInt(f *testing.F) {
	for _, s := range []string{"0", "-9223372036854775808", "9223372036854775808", "+00012", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, werr := strconv.ParseInt(s, 10, 64)
		got, ok := ParseInt([]byte(s))
		if ok != (werr == nil) || (ok && got != want) {
			t.Fatalf("ParseInt(%q) = %d, %v; strconv says %d, %v", s, got, ok, want, werr)
		}
	})
}

func TestParseValue(t *testing.T) {
	for s, want := range map[string]float64{"1": 1, "-1.5": -1.5, "+2": 2, "1e3": 1000, "0x1p-2": 0.25,
		"1.7976931348623157e308": math.MaxFloat64, "4.9e-324": 5e-324, "1e-400": 0, "1_0": 10} {
		got, err := ParseValue([]byte(s))
		if err != nil || got != want {
			t.Errorf("ParseValue(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "nan", "NaN", "inf", "-Infinity", "1e400", "-1e400", "abc", "1,5", " 1"} {
		if _, err := ParseValue([]byte(s)); !errors.Is(err, ErrValue) {
			t.Errorf("ParseValue(%q) = %v, want ErrValue", s, err)
		}
	}
	if f, ok := ParseFloat([]byte("1e400")); !ok || !math.IsInf(f, 1) {
		t.Errorf("ParseFloat(1e400) = %v, %v", f, ok)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = ParseValue([]byte("12345.678")) }); n != 0 {
		t.Errorf("ParseValue allocates %v times", n)
	}
}

func TestCheckValue(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if err := CheckValue(v); !errors.Is(err, ErrValue) {
			t.Errorf("CheckValue(%v) = %v", v, err)
		}
	}
	if err := CheckValue(math.MaxFloat64); err != nil {
		t.Error(err)
	}
}

// TestParsePlainDecimalIsStrconvs: the fast path for plain decimals
// gives strconv's float64, bit for bit (the sign of zero included), and
// leaves everything else to strconv.
func TestParsePlainDecimalIsStrconvs(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 1))
	check := func(s string) {
		t.Helper()
		got, ok := ParseFloat([]byte(s))
		want, err := strconv.ParseFloat(s, 64)
		if wantOK := err == nil || errors.Is(err, strconv.ErrRange); ok != wantOK || ok && math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("ParseFloat(%q) = %v (%x), %v; strconv %v (%x), %v", s, got, math.Float64bits(got), ok, want, math.Float64bits(want), err)
		}
	}
	for _, s := range []string{"0", "-0", "+0", "-0.0", "0.", ".5", "-.5", ".", "-", "+", "", "1.2.3", "12a", "1e5",
		"999999999999999", "9999999999999999", "0.000000000000001", "123456789012345.", "1.00000000000000",
		"42", "4.2", "0.1", "0.3", "1732689600.123456", "00000000000000000001", "1_0", " 1", "1 "} {
		check(s)
	}
	for range 200_000 {
		n := 1 + r.IntN(17)
		b := make([]byte, 0, n+2)
		switch r.IntN(4) {
		case 0:
			b = append(b, '-')
		case 1:
			b = append(b, '+')
		}
		dot := r.IntN(n + 2)
		for i := range n {
			if i == dot {
				b = append(b, '.')
			}
			b = append(b, byte('0'+r.IntN(10)))
		}
		check(string(b))
	}
}
