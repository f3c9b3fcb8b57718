package tsstore

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/ingest"
)

// liveHeap returns the live heap after a full collection.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// The memory the store accounts against MaxMemory is within 25% of the
// heap its series really take: 100,000 series of the retentions,
// a few points each, nothing flushed.
func TestMemoryAccounting(t *testing.T) {
	if testing.Short() {
		t.Skip("registers 100,000 series")
	}
	pool := newPool(t)
	var c clock
	cfg := graphiteConfig(t, &c)
	cfg.MaxMemory = 1 << 30
	s := open(t, pool, cfg)
	const n = 100_000
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("g.host%05d.cpu.user", i)
	}
	before := liveHeap()
	acc0 := s.Stats().Bytes + s.Stats().SeriesBytes
	pts := make([]ingest.Point, 0, 1000)
	for round := range 3 {
		for i := 0; i < n; i += 1000 {
			pts = pts[:0]
			for j := i; j < i+1000; j++ {
				pts = append(pts, pt(names[j], float64(10*round), float64(j)))
			}
			mustAdd(t, s, pts...)
		}
	}
	after := liveHeap()
	acc := s.Stats().Bytes + s.Stats().SeriesBytes - acc0
	heap := after - before
	ratio := float64(acc) / float64(heap)
	t.Logf("%d series: accounted %d bytes (%d a series), live heap grew %d bytes (%d a series): ratio %.2f",
		n, acc, acc/n, heap, heap/n, ratio)
	if ratio < 0.75 || ratio > 1.25 {
		t.Errorf("accounted memory is %.2f of the live heap, want within 25%%", ratio)
	}
	// After a flush the buffers are written and freed: what stays is the
	// series and their consolidation state.
	mustFlush(t, s)
	mustAdd(t, s, pt(names[0], 30, 1))
	mustFlush(t, s)
	after = liveHeap()
	acc = s.Stats().Bytes + s.Stats().SeriesBytes - acc0
	heap = after - before
	ratio = float64(acc) / float64(heap)
	t.Logf("after flushes: accounted %d bytes (%d a series), live heap grew %d bytes (%d a series): ratio %.2f",
		acc, acc/n, heap, heap/n, ratio)
	if ratio < 0.75 || ratio > 1.25 {
		t.Errorf("after flushes, accounted memory is %.2f of the live heap, want within 25%%", ratio)
	}
	if f := os.Getenv("PGTS_HEAP_PROFILE"); f != "" {
		w, _ := os.Create(f)
		_ = pprof.WriteHeapProfile(w)
		w.Close()
	}
	runtime.KeepAlive(names)
	_ = s.Close(context.Background())
	_ = time.Second
}
