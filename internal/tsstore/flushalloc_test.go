package tsstore

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/rra"
)

// TestFlushReusesSeriesBuffers: in the steady state of series that keep
// sending (a point every 2 s, a flush every 10 s), a flush allocates
// little per series: the updates and states it takes go into a few large
// blocks, each series keeps its buffers for its next points instead
// of allocating them again after every flush, and the flush keeps its
// own lists (each allocation brings the
// next collection nearer, and each collection marks every series). Once
// the series stop, the next flushes free those buffers: nothing is left
// pending.
func TestFlushReusesSeriesBuffers(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t)
	const n = 4000
	c := clock{now: time.Unix(base, 0)}
	cfg := DefaultConfig()
	cfg.Rules = []rra.Rule{rule(t, `.`, "10s", "", "10s:6h", "1m:7d", "1h:1y")}
	cfg.FlushInterval = time.Hour
	cfg.MaxMemory = 1 << 30
	cfg.Now = c.Now
	s := open(t, pool, cfg)
	keys := names(n, "alloc.s%05d")
	pts := make([]ingest.Point, 0, n)
	sec := int64(base + 1800) // the second half of an hour
	interval := func() {
		for range 10 {
			pts = pts[:0]
			for i, k := range keys {
				if (int64(i)+sec)%2 == 0 {
					pts = append(pts, ingest.Point{Name: k, Value: float64((int64(i)*7 + sec) % 1000), Time: sec * 1e6})
				}
			}
			c.now = time.Unix(sec, 0)
			if err := s.Add(ctx, pts); err != nil {
				t.Fatal(err)
			}
			sec++
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		interval()
	}
	const flushes = 6
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for range flushes {
		interval()
	}
	runtime.ReadMemStats(&m1)
	per := float64(m1.Mallocs-m0.Mallocs) / (n * flushes)
	bytes := float64(m1.TotalAlloc-m0.TotalAlloc) / (n * flushes)
	t.Logf("%.2f allocations, %.0f bytes a series a flush interval", per, bytes)
	if per > 0.5 {
		t.Errorf("%.2f allocations a series a flush interval, want at most 0.5", per)
	}
	// What is left is the copies of the closed slots and the statements'
	// parameters (encoded, then copied by pgx): the flush's items and
	// orders are kept from flush to flush.
	if bytes > 320 {
		t.Errorf("%.0f bytes allocated a series a flush interval, want at most 320", bytes)
	}
	if st := s.Stats(); st.Slots == 0 {
		t.Fatal("no slot written")
	}
	// The series stop: two flushes later nothing is pending.
	for range 2 {
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if st := s.Stats(); st.Bytes != 0 || st.Unflushed != 0 {
		t.Errorf("after the series stopped: %d bytes pending, %d series unflushed, want none", st.Bytes, st.Unflushed)
	}
}
