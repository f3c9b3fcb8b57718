package tsstore

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"

	"github.com/pgts/pgts/internal/ingest"
)

// footprint registers n series of the retentions (graphiteConfig:
// 10s:6h, 1m:7d, 1h:1y) through Add and Flush, as the receivers do, three
// points each, and returns what a quiet daemon keeps per series once
// everything is written and the next flush found nothing more: the live heap's growth and the store's accounted
// series bytes (SeriesBytes), both divided by n. name gives the name of
// series i; names are made afresh for every point, as a receiver parses
// them, so that the keys the store keeps are its own. With
// PGTS_HEAP_PROFILE set, a heap profile is written there.
func footprint(t testing.TB, n int, name func(i int) string) (live, accounted float64) {
	if os.Getenv("PGTS_HEAP_PROFILE") != "" {
		defer func(r int) { runtime.MemProfileRate = r }(runtime.MemProfileRate)
		runtime.MemProfileRate = 64
	}
	pool := newPool(t)
	var c clock
	cfg := graphiteConfig(t, &c)
	cfg.MaxMemory = 4 << 30
	s := open(t, pool, cfg)
	before := liveHeap()
	acc0 := s.SeriesBytes()
	pts := make([]ingest.Point, 0, 1000)
	for round := range 3 {
		for i := 0; i < n; i += cap(pts) {
			pts = pts[:0]
			for j := i; j < min(n, i+cap(pts)); j++ {
				pts = append(pts, pt(name(j), float64(10*round), float64(j%1000)/10))
			}
			mustAdd(t, s, pts...)
		}
		mustFlush(t, s)
	}
	// The next periodic flush of a quiet daemon: it frees the buffers the
	// series kept for their next points (releaseKept).
	mustFlush(t, s)
	if st := s.Stats(); st.Bytes != 0 {
		t.Fatalf("%d bytes pending once quiet, want none", st.Bytes)
	}
	if got := s.Stats().Series; got != int64(n) {
		t.Fatalf("%d series in the store, want %d", got, n)
	}
	heap := liveHeap() - before
	acc := s.SeriesBytes() - acc0
	if f := os.Getenv("PGTS_HEAP_PROFILE"); f != "" {
		w, err := os.Create(f)
		if err != nil {
			t.Fatal(err)
		}
		_ = pprof.WriteHeapProfile(w)
		w.Close()
	}
	runtime.KeepAlive(s)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	return float64(heap) / float64(n), float64(acc) / float64(n)
}

// hostName is a series name with a node per host in the middle, the shape
// of most Graphite trees (collectd, diamond): g.host00042.cpu.user.
func hostName(i int) string { return fmt.Sprintf("g.host%05d.cpu.user", i) }

// flatName is the shape pgts blast sends: one node, a million leaves.
func flatName(i int) string { return "g." + strconv.Itoa(1e7 + i)[1:] }

// The resident state of a quiet series stays small: 100,000 series of
// each name shape, their points written, take at most footprintBound
// bytes of live heap each, and the store's accounting of them (what
// evictIdle weighs against MaxMemory) is within 25% of that.
func TestSeriesFootprint(t *testing.T) {
	if testing.Short() {
		t.Skip("registers 200,000 series")
	}
	const n = 100_000
	for _, c := range []struct {
		shape string
		name  func(int) string
		bound float64
	}{
		{"host", hostName, 512},
		{"flat", flatName, 352},
	} {
		t.Run(c.shape, func(t *testing.T) {
			live, acc := footprint(t, n, c.name)
			t.Logf("%s names: live heap %.0f bytes a series, accounted %.0f (ratio %.2f)", c.shape, live, acc, acc/live)
			if live > c.bound {
				t.Errorf("%s names: %.0f bytes of live heap a series, want at most %.0f", c.shape, live, c.bound)
			}
			if r := acc / live; r < 0.75 || r > 1.25 {
				t.Errorf("%s names: accounted series bytes are %.2f of the live heap, want within 25%%", c.shape, r)
			}
		})
	}
}

// BenchmarkSeriesFootprint reports the live heap of a quiet series at
// 100,000 and 1,000,000 series (one iteration is the whole run):
//
//	go test -run '^$' -bench SeriesFootprint -benchtime 1x ./internal/tsstore
func BenchmarkSeriesFootprint(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		for _, shape := range []struct {
			name string
			f    func(int) string
		}{{"host", hostName}, {"flat", flatName}} {
			b.Run(fmt.Sprintf("series=%d/names=%s", n, shape.name), func(b *testing.B) {
				var live, acc float64
				for b.Loop() {
					live, acc = footprint(b, n, shape.f)
				}
				b.ReportMetric(live, "live-B/series")
				b.ReportMetric(acc, "accounted-B/series")
			})
		}
	}
}
