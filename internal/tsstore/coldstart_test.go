package tsstore

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/ingest"
)

// TestColdStart sends 50,000 never-seen series at once from 4 writers with
// a budget too small to buffer them all: Add must wait for flushes, memory
// must stay under the budget, and every accepted point must be stored.
func TestColdStart(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t)
	var c clock
	cfg := testConfig(t, &c)
	cfg.MaxMemory = 26 << 20 // the series take about 22 MiB
	cfg.FlushInterval = 50 * time.Millisecond
	if testing.Verbose() {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	s := open(t, pool, cfg)
	const writers, perWriter, batch = 4, 12_500, 1000
	start := time.Now()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pts := make([]ingest.Point, 0, batch)
			for _, sec := range []float64{0, 10} {
				for i := range perWriter {
					pts = append(pts, pt(fmt.Sprintf("a.cold.w%d.s%05d", w, i), sec, float64(i)))
					if len(pts) == batch {
						if err := s.Add(ctx, pts); err != nil {
							t.Error(err)
							return
						}
						pts = pts[:0]
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	t.Logf("50,000 series, 100,000 points in %v: %d flushes, peak %d of %d bytes", time.Since(start).Round(time.Millisecond), st.Flushes, st.PeakBytes, st.MaxMemory)
	const series = writers * perWriter
	if st.PeakBytes > st.MaxMemory {
		t.Fatalf("peak %d bytes over the budget of %d", st.PeakBytes, st.MaxMemory)
	}
	if st.Series != series || st.Added != 2*series || st.RawStored != 2*series || st.Full != 0 {
		t.Fatalf("stats: %+v", st)
	}
	var metrics, raw, slots int64
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM pgts.metric), (SELECT count(*) FROM raw_points),
		(SELECT count(*) FROM pgts.rra_data d JOIN pgts.rra_bundle b ON b.id = d.bundle_id, generate_series(1, 200) p
		 WHERE b.step_s = 10 AND pgts.rra_time(d.times, p) = $1)`, base+10).Scan(&metrics, &raw, &slots); err != nil {
		t.Fatal(err)
	}
	if metrics != series || raw != 2*series || slots != series {
		t.Fatalf("stored %d series, %d raw points, %d slots at 10 s; want %d, %d, %d", metrics, raw, slots, series, 2*series, series)
	}
}
