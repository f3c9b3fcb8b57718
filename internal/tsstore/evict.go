package tsstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/rra"
)

// Eviction keeps memory to what is pending. MaxMemory bounds the pending
// data (buffered raw points, closed slots, pending updates): a point that
// would exceed it waits for a flush (Add) or is dropped and counted
// (TryAdd). The series themselves are never refused for memory (MaxSeries
// bounds their number); instead, when the series and the pending data
// together pass MaxMemory after a flush, the consolidation states of idle
// series (no point during the last two flushes, nothing left to write,
// their state in pgts.ds_state) are dropped from memory, down to three
// quarters of it. The next point of such a series reads its state back
// (reload) before it is consolidated, as Open does for every series: an
// RRD state is the whole state, written at every flush that changed it; a
// Graphite state holds no values and reads its latest slots back with a
// recompute request. What stays of an evicted series is its key, index
// entries and struct: about 200 of the 1,000 bytes a quiet series takes
// (docs/benchmarks.md, "Memory per series and CPU per point").

// reloadBatch bounds the series whose states one reload reads.
const reloadBatch = 5_000

// reloadTimeout bounds a reload made by TryAdd, which has no context.
const reloadTimeout = 10 * time.Second

// evictIdle drops the states of idle series while the series and the
// pending data exceed three quarters of MaxMemory, once they passed it.
// Flush calls it under flushMu after settle, so no flush item is in
// flight.
func (s *Store) evictIdle() {
	over := func(limit int64) bool { return s.mem.series.Load()+s.mem.used.Load() > limit }
	if !over(s.mem.max) {
		return
	}
	target, gen := s.mem.max/4*3, s.gen.Load()
	var n int64
	for i := range s.shard {
		if !over(target) {
			break
		}
		sh := &s.shard[i]
		sh.mu.Lock()
		seen := 0
		for _, x := range sh.m {
			if seen++; seen%lockRun == 0 {
				// Let the receivers in between runs (endRun yields: a
				// lock taken again at once would seldom let a waiter
				// in): the map may change meanwhile, which ranging over
				// it allows (a series added may be skipped; new series
				// are not evictable).
				s.endRun(sh, lockRun)
				sh.mu.Lock()
			}
			if x.ds == nil || x.id == 0 || x.dirty || x.stateDirty || gen-x.touched < 2 ||
				len(x.held()) > 0 || len(x.raw()) > 0 || x.ds.Pending() > 0 {
				continue
			}
			x.ds = nil
			s.mem.series.Add(-x.sch.schema.DSBytes())
			b := x.bufBytes()
			s.mem.add(b - x.bytes)
			x.bytes = b
			n++
		}
		sh.mu.Unlock()
	}
	if n > 0 {
		s.counters.evicted.Add(n)
		s.log.Debug("evicted the state of idle series", "series", n,
			"series_bytes", s.mem.series.Load(), "pending_bytes", s.mem.used.Load(), "max_memory", s.mem.max)
	}
}

// sqlReloadStates reads the saved states of series: $1 segments, $2
// positions; one row per series with its ordinal, NULL when none is saved.
const sqlReloadStates = `SELECT u.o, d.states[u.pos]
FROM unnest($1::bigint[], $2::int[]) WITH ORDINALITY AS u(seg, pos, o)
LEFT JOIN pgts.ds_state d ON d.seg = u.seg`

// reload reads back the states of the evicted series among pts (at most
// reloadBatch of them, the first point's included) and puts them in
// memory. A state that is missing or unusable starts afresh, as in Open.
func (s *Store) reload(ctx context.Context, pts []ingest.Point) error {
	seen := map[*series]bool{}
	var xs []*series
	for i := range pts {
		key := seriesKey(pts[i].Name, pts[i].Tags)
		sh := s.shardOf(key)
		sh.mu.Lock()
		if x := sh.m[key]; x != nil && x.sch != nil && x.ds == nil && !seen[x] {
			seen[x] = true
			xs = append(xs, x)
		}
		sh.mu.Unlock()
		if len(xs) == reloadBatch {
			break
		}
	}
	if len(xs) == 0 {
		return nil
	}
	segs, poss := make([]int64, len(xs)), make([]int32, len(xs))
	for i, x := range xs {
		segs[i], poss[i] = x.seg(), x.pos() // id is set: only registered series are evicted
	}
	states := make([][]byte, len(xs))
	rows, err := s.pool.Query(ctx, sqlReloadStates, segs, poss)
	if err != nil {
		return fmt.Errorf("reloading the state of %d series: %w", len(xs), err)
	}
	var o int64
	var st []byte
	if _, err := pgx.ForEachRow(rows, []any{&o, &st}, func() error {
		if o < 1 || o > int64(len(xs)) {
			return fmt.Errorf("state %d of %d", o, len(xs))
		}
		states[o-1] = st
		return nil
	}); err != nil {
		return fmt.Errorf("reloading the state of %d series: %w", len(xs), err)
	}
	horizon := s.cfg.Now().UnixMicro() + s.cfg.FutureTolerance.Microseconds()
	var fresh int
	for i, x := range xs {
		sh := s.shardOf(x.key)
		sh.mu.Lock()
		if x.ds == nil {
			ds := rra.NewDS(x.sch.schema)
			ok := states[i] != nil && ds.UnmarshalBinary(states[i]) == nil
			if t, started := ds.LastUpdate(); ok && started && t > horizon {
				ok = false
			}
			if !ok {
				ds = rra.NewDS(x.sch.schema)
				x.stateDirty = true
				fresh++
			}
			x.ds = ds
			s.mem.series.Add(x.sch.schema.DSBytes())
			b := x.bufBytes()
			s.mem.add(b - x.bytes)
			x.bytes = b
			if x.stateDirty || ds.Pending() > 0 {
				s.markDirty(x)
			}
			s.counters.reloaded.Add(1)
		}
		sh.mu.Unlock()
	}
	if fresh > 0 {
		s.log.Warn("saved state of evicted series missing or unusable; they start afresh", "series", fresh)
	}
	return nil
}
