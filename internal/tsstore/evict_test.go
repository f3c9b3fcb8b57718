package tsstore

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/ingest"
)

// A budget far smaller than the series' state still takes every point:
// it bounds what is pending, the state of idle series is evicted after
// they are flushed and reloaded from pgts.ds_state with their next point,
// and the archives end up as those of a store that never evicted (RRD and
// Graphite consolidation, the 10 s and the 1 min archives).
func TestTinyMemoryKeepsEverySeries(t *testing.T) {
	ctx := context.Background()
	var c clock
	cfg := testConfig(t, &c)
	cfg.Rules = append(cfg.Rules, rule(t, `^g\.`, "10s", "", "10s:6h", "1m:7d", "1h:1y"))
	cfg.MaxMemory = 256 << 10 // the 4,000 series' state takes several times that
	refCfg := cfg
	refCfg.MaxMemory = 64 << 20
	s := open(t, newPool(t), cfg)
	ref := open(t, newPool(t), refCfg)
	series := append(names(2000, "a.tiny%04d"), names(2000, "g.tiny%04d")...)
	send := func(sec float64) {
		t.Helper()
		pts := make([]ingest.Point, 0, 500)
		for i, n := range series {
			pts = append(pts, pt(n, sec, float64(i)+sec))
			if len(pts) == cap(pts) {
				mustAdd(t, s, pts...)
				mustAdd(t, ref, pts...)
				pts = pts[:0]
			}
		}
		mustAdd(t, s, pts...)
		mustAdd(t, ref, pts...)
	}
	send(0)
	send(10)
	// Read before the first flush: that flush may already evict (the
	// states exceed the budget), and then the later figure would equal it.
	busy := s.Stats()
	mustFlush(t, s)
	// Idle through two flushes: every state is evicted (the keys alone
	// exceed the budget), and what stays is the keys and the index.
	mustFlush(t, s)
	mustFlush(t, s)
	if st := s.Stats(); st.Evicted-st.Reloaded != int64(len(series)) || st.SeriesBytes >= busy.SeriesBytes || st.Bytes != 0 {
		t.Fatalf("after idle flushes: %d states evicted, %d reloaded; %d series bytes (%d before), %d pending",
			st.Evicted, st.Reloaded, st.SeriesBytes, busy.SeriesBytes, st.Bytes)
	}
	send(20)
	send(30)
	mustFlush(t, s)
	mustFlush(t, ref)
	st := s.Stats()
	if st.Full != 0 || st.Added != int64(4*len(series)) || st.Reloaded < int64(len(series)) {
		t.Fatalf("stats: %+v", st)
	}
	var raw int64
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM raw_points`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if raw != int64(4*len(series)) {
		t.Fatalf("%d raw points stored, want %d", raw, 4*len(series))
	}
	for _, span := range [][2]int64{{base - 60, base + 100}, {base - 8*3600, base + 100}} {
		got, err := s.Fetch(ctx, series, span[0], span[1], 0)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ref.Fetch(ctx, series, span[0], span[1], 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(series) || len(want) != len(series) {
			t.Fatalf("fetched %d and %d series, want %d", len(got), len(want), len(series))
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.Name != w.Name || g.Start != w.Start || g.Step != w.Step || !sameValues(g.Values, w.Values) {
				t.Fatalf("%s from %d: got start %d step %d %v\nwant %s start %d step %d %v",
					g.Name, span[0]-base, g.Start-base, g.Step, g.Values, w.Name, w.Start-base, w.Step, w.Values)
			}
		}
	}
}

// Health says when points are refused for lack of memory, and stops
// saying it a flush interval after the last refusal.
func TestHealthSaysWhenRefusing(t *testing.T) {
	var c clock
	cfg := testConfig(t, &c)
	cfg.MaxMemory = minMemory
	var now atomic.Int64 // the flush loop reads the clock too
	now.Store(c.now.UnixMicro())
	cfg.Now = func() time.Time { return time.UnixMicro(now.Load()) }
	s := open(t, newPool(t), cfg)
	if err := s.Health(); err != nil {
		t.Fatalf("healthy store: %v", err)
	}
	pts := make([]ingest.Point, 5000)
	for i, n := range names(len(pts), "a.refused%d") {
		pts[i] = pt(n, 0, 1)
	}
	if n, err := s.TryAdd(pts); !errors.Is(err, ErrFull) || n == len(pts) {
		t.Fatalf("TryAdd took %d of %d: %v", n, len(pts), err)
	}
	if err := s.Health(); !errors.Is(err, ErrFull) {
		t.Fatalf("health while refusing: %v, want ErrFull", err)
	}
	mustFlush(t, s)
	now.Add(cfg.FlushInterval.Microseconds())
	if err := s.Health(); err != nil {
		t.Fatalf("health a flush interval later: %v", err)
	}
}
