package copyenc

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFastFloatAgrees compares the plain-decimal fast path with the full
// parser on random decimals around its limits: digit counts up to 20,
// fraction lengths up to 24, leading and trailing zeros, signs.
func TestFastFloatAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	fast := 0
	for range 200_000 {
		b.Reset()
		switch r.IntN(4) {
		case 0:
			b.WriteByte('-')
		case 1:
			b.WriteByte('+')
		}
		for range r.IntN(3) {
			b.WriteByte('0')
		}
		for range r.IntN(12) {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		if r.IntN(5) > 0 {
			b.WriteByte('.')
			for range r.IntN(25) {
				b.WriteByte(byte('0' + r.IntN(10)))
			}
		}
		in := b.String()
		for _, is32 := range []bool{false, true} {
			v, ok := fastFloat([]byte(in), is32)
			if !ok {
				continue
			}
			fast++
			want, reason := parseFloatFull([]byte(in), is32)
			if reason != "" || math.Float64bits(v) != math.Float64bits(want) {
				t.Fatalf("%q (real %v): fast path %v, full parser %v (%s)", in, is32, v, want, reason)
			}
		}
	}
	if fast < 100_000 {
		t.Fatalf("the fast path answered only %d of 400,000", fast)
	}
}
