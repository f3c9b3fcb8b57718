package tsstore

import (
	"context"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/rra"
)

// TestFlushHoldsShardLocksBriefly: a flush takes the shards' series a
// run of at most lockRun at a time, releasing the shard's lock between
// runs, when it gathers what they have to write, frees the buffers of
// the quiet ones and settles what it wrote. A receiver's point waits
// for its shard's lock: held for all of a shard's series (15,600 of
// them at 1,000,000 series), every flush stalled the receivers for as
// long as it gathered, a point at a time reaching the shard being
// gathered.
func TestFlushHoldsShardLocksBriefly(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t)
	const n = shards * 3 * lockRun // about three runs a shard
	c := clock{now: time.Unix(base, 0)}
	cfg := DefaultConfig()
	cfg.Rules = []rra.Rule{rule(t, `.`, "10s", "", "10s:6h", "1m:7d")}
	cfg.FlushInterval = time.Hour
	cfg.MaxMemory = 1 << 30
	cfg.Now = c.Now
	s := open(t, pool, cfg)
	keys := names(n, "lock.s%06d")
	pts := make([]ingest.Point, len(keys))
	// Three flushes: the first registers the series and writes their
	// states, the second writes the slots the next points close and
	// keeps their buffers, the third (the series quiet) frees them.
	for round := range 3 {
		if round < 2 {
			sec := int64(base + 10*round)
			c.now = time.Unix(sec, 0)
			for i, k := range keys {
				pts[i] = ingest.Point{Name: k, Value: float64(i + round), Time: sec * 1e6}
			}
			if err := s.Add(ctx, pts); err != nil {
				t.Fatal(err)
			}
		}
		s.flushRunMax.Store(0)
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		got := s.flushRunMax.Load()
		t.Logf("flush %d: at most %d series under one hold of a shard's lock", round+1, got)
		if got == 0 {
			t.Fatalf("flush %d handled no series", round+1)
		}
		if got > lockRun {
			t.Errorf("flush %d held a shard's lock for %d series, want at most %d", round+1, got, lockRun)
		}
	}
	if st := s.Stats(); st.Slots < n || st.Series != n {
		t.Errorf("%d slots written for %d series, want at least one a series", st.Slots, st.Series)
	}
}
