package gen

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestAppendCivil(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	micros := []int64{minMicros, endMicros - 1, 0, -1, 951782400_000000 /* 2000-02-29 */, 4107542399_999999}
	for range 100_000 {
		micros = append(micros, minMicros+r.Int64N(endMicros-minMicros))
	}
	for _, m := range micros {
		want := time.UnixMicro(m).UTC().Format("2006-01-02 15:04:05.000000")
		if got := string(appendCivil(nil, m, ' ')); got != want {
			t.Fatalf("appendCivil(%d) = %q, want %q", m, got, want)
		}
	}
	if got := string(appendCivil([]byte("x"), 0, 'T')); got != "x1970-01-01T00:00:00.000000" {
		t.Errorf("appendCivil with T = %q", got)
	}
}

func TestCivilDays(t *testing.T) {
	for z := floorDiv(minMicros, microsPerDay); z < endMicros/microsPerDay; z += 13 {
		y, m, d := civilFromDays(z)
		if back := daysFromCivil(y, m, d); back != z {
			t.Fatalf("day %d → %d-%d-%d → %d", z, y, m, d, back)
		}
		if want := time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC).Unix() / 86400; want != z {
			t.Fatalf("day %d: %d-%02d-%02d is day %d", z, y, m, d, want)
		}
	}
}

// TestConditionsMicros checks the 28/336-day calendar against its civil
// spelling for every month start of the first 80 years.
func TestConditionsMicros(t *testing.T) {
	for mon := int64(0); mon < 80*12; mon++ {
		tt := mon*condMonth + 3*condDay + 4*3600 + 5*60 + 6
		want := time.Date(1970+int(mon/12), time.Month(1+mon%12), 4, 4, 5, 6, 0, time.UTC).UnixMicro()
		if got := conditionsMicros(tt); got != want {
			t.Fatalf("t=%d: %s, want %s", tt, formatMicros(got), formatMicros(want))
		}
	}
}

func TestFloorDiv(t *testing.T) {
	for _, c := range [][3]int64{{7, 2, 3}, {-7, 2, -4}, {-8, 2, -4}, {0, 5, 0}, {-1, 86400, -1}} {
		if got := floorDiv(c[0], c[1]); got != c[2] {
			t.Errorf("floorDiv(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}
