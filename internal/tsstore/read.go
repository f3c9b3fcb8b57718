package tsstore

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/pgts/pgts/internal/rra"
)

// Node is a result of Find: a series (Leaf) or a prefix of series names
// that has more nodes below it (a branch, "expandable" in Graphite).
type Node struct {
	Path string
	Leaf bool
}

// Series is a result of Fetch: Values[i] is the value of the slot ending
// at Start + i*Step (unix seconds), NaN where unknown.
type Series struct {
	Name        string
	Start, Step int64
	Values      []float64
	// Total is the number of values of the whole window: len(Values),
	// except from FetchWindow (whose Values may also be nil: all
	// unknown).
	Total int
}

// slotCut selects the values at indexes [lo, hi) of a series' window.
type slotCut struct{ lo, hi int64 }

// maxFetchValues bounds the values of one series in one Fetch.
const maxFetchValues = 2_000_000

// Find returns the nodes matching a Graphite pattern, sorted by path: a
// pattern of N dot-separated nodes matches the first N nodes of each series
// name; a name of exactly N nodes gives a leaf (whose Path is the series
// key, tags included), a longer one a branch (its first N nodes). A path
// can be both a leaf and a branch. Tagged series (name;k=v) are outside
// the tree, as graphite-web keeps them: they are reached by name or by
// seriesByTag (TaggedKeys), never by a pattern. Patterns are compiled to
// linear-time matchers and walk the registry's tree of names (see
// index), looking literal nodes up directly; see ErrPattern for
// malformed ones. Safe for concurrent use with Add, Fetch and Flush.
func (s *Store) Find(ctx context.Context, pattern string) ([]Node, error) {
	nodes, err := compileNodes(pattern)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var found []Node
	s.idx.find(nodes, func(path string, leaf, branch bool) {
		if branch {
			found = append(found, Node{Path: path})
		}
		if leaf {
			found = append(found, Node{Path: path, Leaf: true})
		}
	})
	slices.SortFunc(found, func(a, b Node) int {
		if c := cmp.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		if a.Leaf == b.Leaf {
			return 0
		}
		if a.Leaf {
			return 1
		}
		return -1
	})
	return found, nil
}

// resolution is where Fetch reads a series from.
type resolution struct {
	archive int   // index in the schema, or -1 for raw points
	step    int64 // seconds
}

// fetchWindow is what graphite-web returns for a whisper file, computed
// as whisper's file_fetch does: the range is clamped to [now - the
// longest span, now] (nothing when it starts after now or ends before
// that), the archive is the finest whose span reaches back to the
// clamped from, and the values are labelled from
// from - from%step + step to until - until%step (one more step when that
// would be no value at all). ok is false when there is nothing to read.
type fetchWindow struct {
	res   resolution
	start int64 // the first value's label, unix seconds
	n     int64 // number of values
}

// archiveWindow computes the whisper window of a series with archives;
// now, from and until are unix seconds.
func archiveWindow(sch *rra.Schema, now, from, until int64) (fetchWindow, bool) {
	order := make([]int, sch.NumArchives())
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(sch.Archive(a).Step, sch.Archive(b).Step)
	})
	var maxSpan int64
	for i := range order {
		maxSpan = max(maxSpan, int64(sch.Archive(i).Span/time.Second))
	}
	oldest := now - maxSpan
	if from > now || until < oldest {
		return fetchWindow{}, false
	}
	from, until = max(from, oldest), min(until, now)
	best := order[len(order)-1]
	for _, i := range order {
		if int64(sch.Archive(i).Span/time.Second) >= now-from {
			best = i
			break
		}
	}
	step := int64(sch.Archive(best).Step / time.Second)
	w := window(step, from, until)
	w.res.archive = best
	return w, true
}

// window is whisper's __archive_fetch window of step over [from, until].
func window(step, from, until int64) fetchWindow {
	start := from - floorMod(from, step) + step
	end := until - floorMod(until, step) + step
	if start == end {
		end += step
	}
	return fetchWindow{res: resolution{step: step}, start: start, n: (end - start) / step}
}

// rawWindow is the window of a series kept only raw: whisper's window at
// the raw step, widened to a multiple of it when it would give more than
// limit values (the points of each wider step are averaged).
func rawWindow(rawStep, rawSpan, now, from, until int64, limit int64) (fetchWindow, bool) {
	if rawSpan > 0 {
		if until < now-rawSpan {
			return fetchWindow{}, false
		}
		from = max(from, now-rawSpan)
	}
	if from > until {
		return fetchWindow{}, false
	}
	step := rawStep
	if n := (until - from) / step; n > limit {
		step *= (n + limit - 1) / limit
	}
	w := window(step, from, until)
	w.res.archive = -1
	return w, true
}

// fetchPlan is what Fetch needs of one series, copied under its lock.
type fetchPlan struct {
	key     string
	id      int64
	sch     *schemaInfo
	res     resolution
	start   int64
	n       int64        // values of the read (of the cut, for FetchWindow)
	values  []float64    // nil until allocated (alloc): a cut's plan allocates when its slots hold something
	updates []rra.Update // cached slots of the chosen archive
	late    bool         // the cache holds recompute requests of that archive or finer
	raw     []rawPoint   // cached raw points in the range
	total   int          // values of the whole window (values holds a cut of it)
}

// Fetch returns the values of the named series (series keys, as Find's
// leaves give them) between from and until (unix seconds) exactly as
// graphite-web returns a whisper file's: a series with archives is read
// from the archive whisper reads, over whisper's window (see
// fetchWindow), each value labelled with the start of its slot; a
// series kept only raw gives the mean of its points in each raw step,
// labelled the same way, at a wider step when the range holds more than
// maxDataPoints (when > 0) or maxFetchValues steps. Values still in the
// write-back cache are included; when a late point (Graphite
// consolidation) awaits the recompute of a slot of an archive read, Fetch
// flushes first (see writeLate). Unknown names, and series with nothing
// in range, are skipped. Safe for concurrent use with Add and Flush.
func (s *Store) Fetch(ctx context.Context, names []string, from, until int64, maxDataPoints int) ([]Series, error) {
	return s.FetchAt(ctx, names, from, until, s.cfg.Now().Unix(), maxDataPoints)
}

// FetchAt is Fetch as of now (unix seconds) instead of the store's clock:
// the archive is the one whisper would read for now - from, and until is
// clamped to now, as graphite-web does with a request's now parameter.
func (s *Store) FetchAt(ctx context.Context, names []string, from, until, now int64, maxDataPoints int) ([]Series, error) {
	return s.fetch(ctx, names, from, until, now, maxDataPoints, nil)
}

// FetchWindow is FetchAt cut to the values at indexes [lo, hi) of each
// series' window (fewer when the window is shorter), each Series' Total
// holding the length of the whole window: the archive and the window are
// chosen for (from, until] as FetchAt chooses them, and only the slots of
// the cut are read. A caller folding many series over a long range (the
// render API's sumSeries) reads them one cut of slots at a time, each
// segment once per cut, holding the cut only. In a cut shorter than the
// window, a series none of whose cut's slots the database holds a row
// of, nor the cache a value of, comes back with Values nil (every value
// unknown) and nothing allocated for it (its values are allocated at the
// first row its segment's statement returns): the cuts of a week's
// window before a day of data cost a statement that returns no row, not
// their values and the fold over them. Safe for concurrent use.
func (s *Store) FetchWindow(ctx context.Context, names []string, from, until, now int64, maxDataPoints, lo, hi int) ([]Series, error) {
	if lo < 0 || hi < lo {
		return nil, fmt.Errorf("fetch: bad cut [%d, %d)", lo, hi)
	}
	return s.fetch(ctx, names, from, until, now, maxDataPoints, &slotCut{int64(lo), int64(hi)})
}

func (s *Store) fetch(ctx context.Context, names []string, from, until, now int64, maxDataPoints int, cut *slotCut) ([]Series, error) {
	if until < from {
		return nil, fmt.Errorf("fetch: until %d is before from %d", until, from)
	}
	var rawSpan, rawStepDefault int64
	if s.raw != nil {
		if r := s.cfg.Raw.Retention; r != nil {
			rawSpan = int64(approxDuration(*r) / time.Second)
		}
		rawStepDefault = int64(s.cfg.Raw.step() / time.Second)
	}
	limit := int64(maxFetchValues)
	if maxDataPoints > 0 {
		limit = min(limit, int64(maxDataPoints))
	}
	var plans []*fetchPlan
	late := false
	for _, name := range names {
		if p := s.plan(name, from, until, now, rawSpan, rawStepDefault, limit, cut); p != nil {
			plans = append(plans, p)
			late = late || p.late
		}
	}
	if late {
		// The slots a late point changes in the archives read are
		// recomputed from the database's finer slots by a flush: flush,
		// then plan again, so that the read sees what whisper's file
		// holds once carbon wrote the points.
		if err := s.Flush(ctx); err != nil {
			s.log.Debug("flushing before a read of late points", "err", err)
		}
		plans = plans[:0]
		for _, name := range names {
			if p := s.plan(name, from, until, now, rawSpan, rawStepDefault, limit, cut); p != nil {
				plans = append(plans, p)
			}
		}
	}
	if err := s.readArchives(ctx, plans); err != nil {
		return nil, err
	}
	out := make([]Series, 0, len(plans))
	for _, p := range plans {
		if p.res.archive < 0 && p.n > 0 {
			if err := s.readRaw(ctx, p); err != nil {
				return nil, err
			}
		} else if p.res.archive >= 0 {
			if len(p.updates) > 0 {
				p.alloc()
			}
			p.applyCache()
		}
		out = append(out, Series{Name: p.key, Start: p.start, Step: p.res.step, Values: p.values, Total: p.total})
	}
	return out, nil
}

// readGroup is the archive reads of one Fetch that one statement serves:
// the series of one segment reading the same archive shape over the same
// ring slots, from the same first stored slot time.
type readGroup struct {
	bundle             int32
	seg                int64
	lo1, hi1, lo2, hi2 int32
	// t0 is the stored time of the window's first slot (its label plus
	// the plans' offset), slot0 that slot, step and size the archive's:
	// slot s of the window holds time t0 + ((s - slot0) mod size) * step.
	// lap is false when the window is longer than a lap of the ring,
	// several labels to a slot.
	t0, slot0, step, size int64
	lap                   bool
	// lazy is set for the plans of a cut shorter than the window
	// (FetchWindow), whose values are allocated at the statement's first
	// row (alloc): a cut of a long window before the data (a week asked
	// of a day) returns no row and costs neither values nor the fold
	// over them.
	lazy, allocated bool
	pos             []int32
	minPos, maxPos  int32
	plans           map[int32][]*fetchPlan // one name may be asked twice
}

// readParallel is how many statements of one Fetch run at once, each on
// its own connection of the pool.
const readParallel = 3

// sqlReadSlotArrays reads whole slots of one segment in one archive: $1
// bundle, $2 seg, slots in [$3, $4] or [$5, $6]; one row per slot with
// the packed times and values (see packed.go) of the segment's positions
// from the first to the last asked for: $7 bytes from byte $8 (1-based).
// A packed row costs the server a copy to send, where cutting it a
// position at a time costs more than sending it.
const sqlReadSlotArrays = `SELECT substring(d.times FROM $8 FOR $7), substring(d.vals FROM $8 FOR $7) FROM pgts.rra_data d
WHERE d.bundle_id = $1 AND d.seg = $2 AND (d.slot BETWEEN $3 AND $4 OR d.slot BETWEEN $5 AND $6)`

// sqlReadSlotLap is sqlReadSlotArrays for a window within one lap of the
// ring, with each row's slot, whose time the reader knows: a position's
// value is the window's where its time is that one. (When rows were
// arrays, the server left out a row's times when they were all that
// one, as sending an array cost it about 0.1 µs of CPU an element; a
// packed row's times cost it a copy, less than the check.)
const sqlReadSlotLap = `SELECT d.slot, substring(d.times FROM $8 FOR $7), substring(d.vals FROM $8 FOR $7) FROM pgts.rra_data d
WHERE d.bundle_id = $1 AND d.seg = $2 AND (d.slot BETWEEN $3 AND $4 OR d.slot BETWEEN $5 AND $6)`

// positionSpan is how many positions of a packed row the positions of a
// group must span, per position, for the group to be read a position at
// a time (sqlReadPositions, its slots aggregated by the server) rather
// than as rows cut from the first position to the last; a single
// position is always read alone. Over a day of one-minute slots
// (BenchmarkScatteredRead, load average 3–4, server CPU) a position
// costs about 1.2 ms aggregated, a cut row about 2 ms plus 0.03 ms a
// position it spans: 1 position 2.0 against 2.0–3.5 ms, 6 neighbours
// 9.3–10.7 against 1.7–3.2 ms, 18 positions over 200 18.5–24.7 against
// 7.5–9.0 ms.
const positionSpan = 40

// readArchives reads the database's slots of every archive plan, one
// statement per segment, archive shape and slot range (the series of a
// render request are mostly registered together, so they share few
// segments), instead of one per series, readParallel statements at a
// time. A statement returns one row per slot holding the values of the
// segment's positions from the first to the last asked for, or, when
// the positions asked for are one or few and scattered (positionSpan),
// one row per position holding its slots.
func (s *Store) readArchives(ctx context.Context, plans []*fetchPlan) error {
	type key struct {
		bundle             int32
		seg                int64
		lo1, hi1, lo2, hi2 int32
		t0                 int64
	}
	groups := map[key]*readGroup{}
	var order []*readGroup
	for _, p := range plans {
		if p.res.archive < 0 || p.id == 0 || p.n == 0 {
			continue
		}
		lo1, hi1, lo2, hi2 := p.slotRanges()
		t0 := p.start + p.offset()
		k := key{p.sch.bundles[p.res.archive], p.id / SegmentWidth, lo1, hi1, lo2, hi2, t0}
		g := groups[k]
		pos := int32(p.id%SegmentWidth) + 1
		if g == nil {
			a := p.sch.schema.Archive(p.res.archive)
			g = &readGroup{bundle: k.bundle, seg: k.seg, lo1: lo1, hi1: hi1, lo2: lo2, hi2: hi2,
				t0: t0, slot0: int64(a.SlotIndex(t0 * 1e6)), step: p.res.step, size: int64(a.Size), lap: p.n <= int64(a.Size),
				minPos: pos, maxPos: pos, plans: map[int32][]*fetchPlan{}}
			groups[k] = g
			order = append(order, g)
		}
		if g.plans[pos] == nil {
			g.pos = append(g.pos, pos)
			g.minPos, g.maxPos = min(g.minPos, pos), max(g.maxPos, pos)
		}
		g.plans[pos] = append(g.plans[pos], p)
		g.lazy = g.lazy || p.values == nil
	}
	if len(order) == 1 {
		order = order[0].halves()
	}
	// Each group fills only its own plans' values (the halves of one,
	// distinct values of the same plans): the groups can run in
	// parallel.
	var eg errgroup.Group
	eg.SetLimit(readParallel)
	for _, g := range order {
		eg.Go(func() error { return s.readGroup(ctx, g) })
	}
	return eg.Wait()
}

// halfSlots is the shortest range of slots a read of few positions
// (sqlReadPositions) reads with two statements at once, each half the
// slots, when it is the only statement of a Fetch: the server spends
// about 1 µs a slot row (a heap page each), a statement about 0.1–0.2
// ms, and two statements run on two connections, so on two cores.
const halfSlots = 720

// positions reports whether g is read a position at a time
// (sqlReadPositions).
func (g *readGroup) positions() bool {
	return len(g.pos) == 1 || g.maxPos-g.minPos+1 > positionSpan*int32(len(g.pos))
}

// halves is g as two groups, each reading half its slots, when g is
// read a position at a time over at least halfSlots slots; g alone
// otherwise. The halves fill the values of the same plans, at distinct
// indexes: a slot holds one time. A group whose values are allocated at
// its first row (lazy) is not split.
func (g *readGroup) halves() []*readGroup {
	n1, n2 := g.hi1-g.lo1+1, int32(0)
	if g.lo2 >= 0 {
		n2 = g.hi2 - g.lo2 + 1
	}
	if !g.positions() || g.lazy || n1+n2 < halfSlots {
		return []*readGroup{g}
	}
	a, b := *g, *g
	if half := (n1 + n2) / 2; half < n1 {
		a.hi1, a.lo2, a.hi2 = g.lo1+half-1, -1, -1
		b.lo1 = g.lo1 + half
	} else {
		a.lo2, a.hi2 = g.lo2, g.lo2+half-n1-1
		b.lo1, b.hi1, b.lo2, b.hi2 = g.lo2+half-n1, g.hi2, -1, -1
	}
	return []*readGroup{&a, &b}
}

// readGroup runs the statement of one group.
func (s *Store) readGroup(ctx context.Context, g *readGroup) error {
	if g.positions() {
		return s.readGroupPositions(ctx, g)
	}
	if g.lap {
		return s.readGroupLap(ctx, g)
	}
	first, n := g.span()
	rows, err := s.pool.Query(ctx, sqlReadSlotArrays, g.bundle, g.seg, g.lo1, g.hi1, g.lo2, g.hi2, n, first)
	if err != nil {
		return fmt.Errorf("fetch %d series: %w", len(g.pos), err)
	}
	defer rows.Close()
	fd := rows.FieldDescriptions()
	if len(fd) != 2 || fd[0].Format != pgx.BinaryFormatCode || fd[1].Format != pgx.BinaryFormatCode {
		return fmt.Errorf("fetch %d series: slots not in binary format", len(g.pos))
	}
	var byPos [SegmentWidth + 1][]*fetchPlan
	for _, pos := range g.pos {
		byPos[pos] = g.plans[pos]
	}
	off := int(g.minPos) - 1
	for rows.Next() {
		g.alloc()
		raw := rows.RawValues()
		if err := g.checkSpan(raw[0], raw[1]); err != nil {
			return err
		}
		for _, pos := range g.pos {
			t := int64(packedAt(raw[0], int(pos)-off))
			if t == packedNoTime {
				continue
			}
			v, ok := packedValue(packedAt(raw[1], int(pos)-off))
			if !ok {
				continue
			}
			for _, p := range byPos[pos] {
				p.put(t, v)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("fetch %d series: %w", len(g.pos), err)
	}
	return nil
}

// span is the part of a packed row g reads: its first byte (1-based)
// and its length, from the first position asked for to the last.
func (g *readGroup) span() (first, n int32) {
	return 8*(g.minPos-1) + 1, 8 * (g.maxPos - g.minPos + 1)
}

// checkSpan checks that the columns of a row are g's span of a packed
// row.
func (g *readGroup) checkSpan(times, vals []byte) error {
	if _, n := g.span(); len(times) != int(n) || len(vals) != int(n) {
		return fmt.Errorf("fetch segment %d: packed archive row of %d and %d bytes, want %d", g.seg, len(times), len(vals), n)
	}
	return nil
}

// alloc allocates the values of g's plans that have none, once: the
// statements call it at their first row.
func (g *readGroup) alloc() {
	if !g.lazy || g.allocated {
		return
	}
	g.allocated = true
	for _, ps := range g.plans {
		for _, p := range ps {
			p.alloc()
		}
	}
}

// readGroupLap reads the whole slots of a group whose window is within
// one lap of the ring (sqlReadSlotLap): a slot's values are the window's
// where its time is the slot's. Each value goes straight into the values
// of the plans at its position.
func (s *Store) readGroupLap(ctx context.Context, g *readGroup) error {
	first, n := g.span()
	rows, err := s.pool.Query(ctx, sqlReadSlotLap, g.bundle, g.seg, g.lo1, g.hi1, g.lo2, g.hi2, n, first)
	if err != nil {
		return fmt.Errorf("fetch %d series: %w", len(g.pos), err)
	}
	defer rows.Close()
	fd := rows.FieldDescriptions()
	if len(fd) != 3 || fd[0].Format != pgx.BinaryFormatCode || fd[1].Format != pgx.BinaryFormatCode || fd[2].Format != pgx.BinaryFormatCode {
		return fmt.Errorf("fetch %d series: slots not in binary format", len(g.pos))
	}
	// plans by position, where the map is too slow for every element
	var byPos [SegmentWidth + 1][]*fetchPlan
	for _, pos := range g.pos {
		byPos[pos] = g.plans[pos]
	}
	off := int(g.minPos) - 1
	for rows.Next() {
		g.alloc()
		raw := rows.RawValues()
		if len(raw[0]) != 4 {
			return fmt.Errorf("fetch segment %d: slot of %d bytes", g.seg, len(raw[0]))
		}
		if err := g.checkSpan(raw[1], raw[2]); err != nil {
			return err
		}
		slot := int64(int32(binary.BigEndian.Uint32(raw[0])))
		i := floorMod(slot-g.slot0, g.size)
		t := g.t0 + i*g.step
		for _, pos := range g.pos {
			if int64(packedAt(raw[1], int(pos)-off)) != t {
				continue
			}
			v, ok := packedValue(packedAt(raw[2], int(pos)-off))
			if !ok {
				continue
			}
			for _, p := range byPos[pos] {
				if i < int64(len(p.values)) {
					p.values[i] = v
				}
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("fetch %d series: %w", len(g.pos), err)
	}
	return nil
}

// readGroupPositions runs the statement of a group of few positions
// (sqlReadPositions): one row per position holding its slots (NULL when
// the database holds none).
//
// The statement runs its generic plan (sqlGenericPlan, in the same round
// trip): PostgreSQL would otherwise plan each of its first five
// executions on a connection for their parameters, 0.2–0.4 ms each, for
// the same index scans (TestReadPositionsGenericPlan).
func (s *Store) readGroupPositions(ctx context.Context, g *readGroup) error {
	var b pgx.Batch
	b.Queue(sqlGenericPlan)
	b.Queue(sqlReadPositions, g.bundle, g.seg, g.pos, g.lo1, g.hi1, g.lo2, g.hi2)
	br := s.pool.SendBatch(ctx, &b)
	err := readPositionRows(br, g)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("fetch %d series: %w", len(g.pos), cerr)
	}
	return err
}

// sqlGenericPlan makes the statements after it in the same transaction
// (a batch's, before its Sync) run generic plans.
const sqlGenericPlan = `SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`

// readPositionRows reads the results of readGroupPositions' batch.
func readPositionRows(br pgx.BatchResults, g *readGroup) error {
	if _, err := br.Exec(); err != nil {
		return fmt.Errorf("fetch %d series: %w", len(g.pos), err)
	}
	rows, err := br.Query()
	if err != nil {
		return fmt.Errorf("fetch %d series: %w", len(g.pos), err)
	}
	defer rows.Close()
	fd := rows.FieldDescriptions()
	if len(fd) != 2 || fd[0].Format != pgx.BinaryFormatCode || fd[1].Format != pgx.BinaryFormatCode {
		return fmt.Errorf("fetch %d series: slots not in binary format", len(g.pos))
	}
	// Each row read in place: scanning into slices would copy it.
	for rows.Next() {
		raw := rows.RawValues()
		if raw[1] == nil {
			continue // none of its slots in the database
		}
		g.alloc()
		if len(raw[0]) != 4 || len(raw[1])%16 != 0 {
			return fmt.Errorf("fetch segment %d: a position's slots of %d bytes", g.seg, len(raw[1]))
		}
		pos := int32(binary.BigEndian.Uint32(raw[0]))
		ps := g.plans[pos]
		for b := raw[1]; len(b) > 0; b = b[16:] {
			t := int64(binary.BigEndian.Uint64(b))
			v, ok := packedValue(binary.BigEndian.Uint64(b[8:]))
			if t != packedNoTime && ok {
				for _, p := range ps {
					p.put(t, v)
				}
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("fetch %d series: %w", len(g.pos), err)
	}
	return nil
}

// plan chooses the window of one series and copies its cached data; nil
// when there is nothing to read.
func (s *Store) plan(key string, from, until, now, rawSpan, rawStep, limit int64, cut *slotCut) *fetchPlan {
	sh := s.shardOf(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	x := sh.m[key]
	if x == nil {
		return nil
	}
	var w fetchWindow
	var ok bool
	switch {
	case x.sch != nil:
		w, ok = archiveWindow(x.sch.schema, now, from, until)
	case s.raw != nil:
		w, ok = rawWindow(rawStep, rawSpan, now, from, until, limit)
	}
	if !ok {
		return nil
	}
	total := w.n
	part := false // a strict part of the window, which may hold nothing
	if cut != nil {
		lo, hi := min(cut.lo, w.n), min(cut.hi, w.n)
		w.start += lo * w.res.step
		w.n = hi - lo
		part = w.n < total
	}
	p := &fetchPlan{key: key, id: x.id, sch: x.sch, res: w.res, start: w.start, n: w.n, total: int(total)}
	if !part || w.res.archive < 0 {
		p.alloc()
	}
	if w.res.archive >= 0 {
		if x.ds != nil { // an evicted state has nothing pending
			x.setHeld(x.ds.ClosedSlots(x.held()))
		}
		b := x.bufBytes()
		s.mem.add(b - x.bytes)
		x.bytes = b
		for _, u := range x.held() {
			switch {
			case u.Count == 0:
				// Requests (Graphite consolidation) chain to the coarser archives.
				p.late = p.late || u.Archive <= w.res.archive
			case u.Archive == w.res.archive:
				p.updates = append(p.updates, u)
			}
		}
	} else {
		lo, hi := w.start*1e6, (w.start+w.n*w.res.step)*1e6
		for _, r := range x.raw() {
			if r.t >= lo && r.t < hi {
				p.raw = append(p.raw, r)
			}
		}
	}
	return p
}

// alloc allocates p's values, unknown, unless they are.
func (p *fetchPlan) alloc() {
	if p.values != nil {
		return
	}
	p.values = make([]float64, p.n)
	for i := range p.values {
		p.values[i] = math.NaN()
	}
}

// offset is what a stored slot time exceeds its label by: RRD
// consolidation stores a slot by its end, Graphite by its start, the label
// Fetch returns.
func (p *fetchPlan) offset() int64 {
	if p.sch.schema.Graphite() {
		return 0
	}
	return p.res.step
}

// put sets the value of the slot stored at time t (seconds), when it is
// in p's window.
func (p *fetchPlan) put(t int64, v float64) {
	step, n := p.res.step, int64(len(p.values))
	t -= p.offset()
	if t < p.start || (t-p.start)%step != 0 || (t-p.start)/step >= n {
		return
	}
	p.values[(t-p.start)/step] = v
}

// slotRanges returns the ring slots of p's window: [lo1, hi1] and
// [lo2, hi2] (-1, -1 when the window does not wrap).
func (p *fetchPlan) slotRanges() (lo1, hi1, lo2, hi2 int32) {
	a := p.sch.schema.Archive(p.res.archive)
	step, n, off := p.res.step, p.n, p.offset()
	lo1, hi1, lo2, hi2 = 0, int32(a.Size-1), -1, -1
	if n < int64(a.Size) {
		lo := a.SlotIndex((p.start + off) * 1e6)
		hi := a.SlotIndex((p.start + off + (n-1)*step) * 1e6)
		lo1, hi1 = int32(lo), int32(hi)
		if lo > hi {
			lo1, hi1, lo2, hi2 = int32(lo), int32(a.Size-1), 0, int32(hi)
		}
	}
	return lo1, hi1, lo2, hi2
}

// applyCache sets the values of the cached slots, in the order they were
// written, over the database's.
func (p *fetchPlan) applyCache() {
	for _, u := range p.updates {
		for _, t := range p.sch.schema.Slots(u) {
			p.put(t/1e6, u.Value)
		}
	}
}

// readRaw fills p.values with the mean of the raw points of each step:
// the database's, averaged in SQL, and the cache's (a point in both while
// a flush settles counts once: the database's copy is left out).
func (s *Store) readRaw(ctx context.Context, p *fetchPlan) error {
	step, n := p.res.step, int64(len(p.values))
	sum := make([]float64, n)
	cnt := make([]float64, n)
	cached := map[rawPoint]bool{}
	var cts []time.Time
	var cvs []float64
	for _, r := range p.raw {
		if !cached[r] && !math.IsNaN(r.v) {
			cached[r] = true
			cts, cvs = append(cts, time.UnixMicro(r.t)), append(cvs, r.v)
			i := (floorDiv(r.t, 1e6) - p.start) / step
			sum[i] += r.v
			cnt[i]++
		}
	}
	if p.id != 0 {
		q := `SELECT (floor(extract(epoch FROM r.time) / $4)::int8 * $4)::int8 AS t, sum(r.value), count(r.value)::float8
FROM ` + s.rawTbl.Qualified() + ` r WHERE r.series_id = $1 AND r.time >= $2 AND r.time < $3 AND r.value = r.value
	AND NOT EXISTS (SELECT FROM unnest($5::timestamptz[], $6::float8[]) AS c(t, v) WHERE c.t = r.time AND c.v = r.value)
GROUP BY 1`
		lo, hi := time.Unix(p.start, 0), time.Unix(p.start+n*step, 0)
		rows, err := s.pool.Query(ctx, q, p.id, lo, hi, step, cts, cvs)
		if err != nil {
			return fmt.Errorf("fetch %q: %w", p.key, err)
		}
		var t int64
		var sm, c float64
		if _, err := pgx.ForEachRow(rows, []any{&t, &sm, &c}, func() error {
			if i := (t - p.start) / step; t >= p.start && i < n {
				sum[i] += sm
				cnt[i] += c
			}
			return nil
		}); err != nil {
			return fmt.Errorf("fetch %q: %w", p.key, err)
		}
	}
	for i := range sum {
		if cnt[i] > 0 {
			p.values[i] = sum[i] / cnt[i]
		}
	}
	return nil
}

// floorMod is a mod b in [0, b), b > 0.
func floorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// floorDiv is a/b rounded towards minus infinity, b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
