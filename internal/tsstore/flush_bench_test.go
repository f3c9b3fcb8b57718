package tsstore

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/bench"
	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/rra"
)

// The flush benchmarks run the daemon's steady state at a small scale:
// flushSeries series of the retentions (10s:6h, 1m:7d, 1h:1y),
// a point every 2 s each, a flush every 10 s of their clock, as `pgts
// bench serve --series 300000 --rates 150000` does. An iteration is one
// flush interval: the points of 10 s, then the flush, in the second half
// of an hour (every archive's latest slot is written at every flush in
// Graphite consolidation). Besides the time,
// they report what a point costs in CPU, the benchmark process's and the
// PostgreSQL server's, and the bytes of state and slots written:
//
//	go test -run '^$' -bench 'Flush(Graphite|RRD)' -benchtime 30x ./internal/tsstore
const flushSeries = 20_000

func BenchmarkFlushGraphite(b *testing.B) { benchFlush(b, "") }

func BenchmarkFlushRRD(b *testing.B) { benchFlush(b, "20s") }

func benchFlush(b *testing.B, heartbeat string) {
	ctx := context.Background()
	if os.Getenv("PGTS_HEAP_PROFILE") != "" {
		runtime.MemProfileRate = 4096
	}
	pool := newPool(b)
	postmaster := postmasterOf(b, pool)
	c := clock{now: time.Unix(base, 0)}
	cfg := DefaultConfig()
	cfg.Rules = []rra.Rule{rule(b, `.`, "10s", heartbeat, "10s:6h", "1m:7d", "1h:1y")}
	cfg.FlushInterval = time.Hour // flushed by the benchmark
	cfg.MaxMemory = 1 << 30
	cfg.Now = c.Now
	s := open(b, pool, cfg)
	keys := names(flushSeries, "bench.s%06d")
	pts := make([]ingest.Point, 0, flushSeries)
	sec := int64(base)
	// interval adds 10 s of points (each series one every 2 s, spread
	// over the seconds) and flushes.
	interval := func() {
		for range 10 {
			pts = pts[:0]
			for i, k := range keys {
				if (int64(i)+sec)%2 == 0 {
					v := float64((int64(i)*7+sec)%1000) / 10
					pts = append(pts, ingest.Point{Name: k, Value: v, Time: sec * 1e6})
				}
			}
			c.now = time.Unix(sec, 0)
			if err := s.Add(ctx, pts); err != nil {
				b.Fatal(err)
			}
			sec++
		}
		if err := s.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
	// Warm up into steady state: 36 minutes of three points a minute, so
	// that the hour has enough known minutes (xff 0.5) for its slot to be
	// written at every flush, as it is after the first half of every hour;
	// then two minutes at the full rate.
	for m := range int64(36) {
		pts = pts[:0]
		for _, k := range keys {
			for _, at := range []int64{0, 10, 20} {
				pts = append(pts, ingest.Point{Name: k, Value: float64(m), Time: (sec + 60*m + at) * 1e6})
			}
		}
		c.now = time.Unix(sec+60*m+20, 0)
		if err := s.Add(ctx, pts); err != nil {
			b.Fatal(err)
		}
		if m%6 == 5 {
			if err := s.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	sec += 36 * 60
	for range 12 {
		interval()
	}
	rra0 := rraDataStats(b, pool)
	st0, slots0 := s.Stats(), s.Stats().Slots
	self0, srv0 := bench.SelfTimes(), bench.ServerTimes(postmaster)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		interval()
	}
	b.StopTimer()
	self, srv := bench.SelfTimes().Sub(self0), bench.ServerTimes(postmaster).Sub(srv0)
	st := s.Stats()
	rra1 := rraDataStats(b, pool)
	if upd := rra1.upd - rra0.upd; upd > 0 {
		b.ReportMetric(float64(rra1.hot-rra0.hot)/float64(upd)*100, "hot-%-of-row-updates")
	}
	b.ReportMetric(float64(rra1.bytes-rra0.bytes)/float64(b.N), "rra_data-growth-B/flush")
	b.Logf("pgts.rra_data: %d live rows, %d bytes (%d more than before the timed flushes); over those %d updates, %d of them HOT",
		rra1.live, rra1.bytes, rra1.bytes-rra0.bytes, rra1.upd-rra0.upd, rra1.hot-rra0.hot)
	points := float64(st.Added - st0.Added)
	b.ReportMetric(self.CPUSeconds/points*1e6, "self-µs/point")
	b.ReportMetric(srv.CPUSeconds/points*1e6, "server-µs/point")
	b.ReportMetric(float64(srv.WriteBytes)/points, "server-written-B/point")
	b.ReportMetric(float64(st.Slots-slots0)/points, "slots/point")
	var stateBytes int64
	if err := pool.QueryRow(ctx, `SELECT coalesce(sum(octet_length(st)), 0) FROM pgts.ds_state, unnest(states) st`).Scan(&stateBytes); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(stateBytes)/flushSeries, "state-bytes/series")
	if f := os.Getenv("PGTS_HEAP_PROFILE"); f != "" {
		runtime.GC()
		w, err := os.Create(f)
		if err != nil {
			b.Fatal(err)
		}
		_ = pprof.WriteHeapProfile(w)
		w.Close()
	}
	live := liveHeap()
	b.ReportMetric(float64(s.Stats().Bytes+s.Stats().SeriesBytes)/float64(live), "accounted/live-heap")
	b.Logf("accounted %d bytes, live heap %d bytes", s.Stats().Bytes+s.Stats().SeriesBytes, live)
	b.Log(fmt.Sprintf("%.0f points, %d slots, self %.2f s, server %.2f s", points, st.Slots-slots0, self.CPUSeconds, srv.CPUSeconds))
}

// rraTableStats are pgts.rra_data's counters and size.
type rraTableStats struct{ upd, hot, live, bytes int64 }

// rraDataStats reads pgts.rra_data's update counters and size. A backend
// reports its counters to the statistics when idle, at most once a
// second, and when it exits: the pool's connections are closed first
// (their backends gone), and the store opens new ones as it needs them.
func rraDataStats(b *testing.B, pool *pgxpool.Pool) rraTableStats {
	ctx := context.Background()
	pool.Reset()
	var r rraTableStats
	for {
		var others int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&others); err != nil {
			b.Fatal(err)
		}
		if others == 0 {
			break
		}
		runtime.Gosched()
	}
	if err := pool.QueryRow(ctx, `SELECT n_tup_upd, n_tup_hot_upd, n_live_tup, pg_table_size(relid) FROM pg_stat_user_tables WHERE relid = 'pgts.rra_data'::regclass`).Scan(&r.upd, &r.hot, &r.live, &r.bytes); err != nil {
		b.Fatal(err)
	}
	return r
}

// postmasterOf returns the pid of the server behind pool, whose CPU the
// benchmarks read with their backends'.
func postmasterOf(b *testing.B, pool *pgxpool.Pool) int {
	b.Helper()
	var backend int
	if err := pool.QueryRow(context.Background(), "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		b.Fatal(err)
	}
	return bench.PostmasterOf(backend)
}
