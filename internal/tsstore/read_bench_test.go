package tsstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/rra"
)

// BenchmarkFetchArchives: one Fetch of n series of 360 one-minute slots
// each (6 h), as a render request over a glob reads them.
func BenchmarkFetchArchives(b *testing.B) {
	for _, n := range []int{200, 2000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			ctx := context.Background()
			c := &clock{now: time.Unix(base+6*3600, 0)}
			cfg := testConfig(b, c)
			cfg.Raw = nil
			cfg.Rules = []rra.Rule{rule(b, `.`, "60s", "", "60s:1d")}
			cfg.MaxMemory = 1 << 30
			s := open(b, newPool(b), cfg)
			names := make([]string, n)
			pts := make([]ingest.Point, 0, n*360)
			for i := range n {
				names[i] = fmt.Sprintf("bench.s%d", i)
				for k := range 360 {
					pts = append(pts, ingest.Point{Name: names[i], Value: float64(k), Time: (base + int64(k)*60) * 1e6})
				}
			}
			if err := s.Add(ctx, pts); err != nil {
				b.Fatal(err)
			}
			if err := s.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				got, err := s.Fetch(ctx, names, base, base+6*3600, 0)
				if err != nil || len(got) != n {
					b.Fatalf("%d series, %v", len(got), err)
				}
			}
		})
	}
}
