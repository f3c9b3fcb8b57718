package tsstore

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

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
}

// maxFetchValues bounds the values of one series in one Fetch.
const maxFetchValues = 2_000_000

// Find returns the nodes matching a Graphite pattern, sorted by path: a
// pattern of N dot-separated nodes matches the first N nodes of each series
// name; a name of exactly N nodes gives a leaf (whose Path is the series
// key, tags included), a longer one a branch (its first N nodes). A path
// can be both a leaf and a branch. Patterns are compiled to linear-time
// matchers; see ErrPattern for malformed ones.
func (s *Store) Find(ctx context.Context, pattern string) ([]Node, error) {
	g, err := compileGlob(pattern)
	if err != nil {
		return nil, err
	}
	found := map[Node]bool{}
	decided := map[string]bool{}
	for i := range s.shard {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sh := &s.shard[i]
		sh.mu.Lock()
		for key := range sh.m {
			prefix, leaf, ok := firstNodes(keyName(key), g.nodes)
			if !ok {
				continue
			}
			m, seen := decided[prefix]
			if !seen {
				m = g.match(prefix)
				decided[prefix] = m
			}
			if !m {
				continue
			}
			if leaf {
				found[Node{Path: key, Leaf: true}] = true
			} else {
				found[Node{Path: prefix}] = true
			}
		}
		sh.mu.Unlock()
	}
	nodes := make([]Node, 0, len(found))
	for n := range found {
		nodes = append(nodes, n)
	}
	slices.SortFunc(nodes, func(a, b Node) int {
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
	return nodes, nil
}

// firstNodes returns the first n dot-separated nodes of name, and whether
// that is all of it; ok is false when name has fewer nodes.
func firstNodes(name string, n int) (prefix string, leaf, ok bool) {
	i := 0
	for k := 0; k < n; k++ {
		j := strings.IndexByte(name[i:], '.')
		if j < 0 {
			if k == n-1 {
				return name, true, true
			}
			return "", false, false
		}
		if k == n-1 {
			return name[:i+j], false, true
		}
		i += j + 1
	}
	return "", false, false
}

// resolution is where Fetch reads a series from.
type resolution struct {
	archive int   // index in the schema, or -1 for raw points
	step    int64 // seconds
}

// chooseResolution picks, as Graphite does, the finest archive whose span
// reaches back to from (or, when none does, the one reaching furthest), and
// raw points instead when they are kept, reach back to from and are finer.
// With maxDataPoints > 0, raw points giving more values than that yield to
// an archive that reaches back to from. ok is false when the series has
// nothing to read.
func chooseResolution(sch *rra.Schema, raw bool, rawSpan, rawStep, now, from, until int64, maxDataPoints int) (resolution, bool) {
	best, covers := -1, false
	if sch != nil {
		order := make([]int, sch.NumArchives())
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			return cmp.Compare(sch.Archive(a).Step, sch.Archive(b).Step)
		})
		for _, i := range order {
			if int64(sch.Archive(i).Span/time.Second) >= now-from {
				best, covers = i, true
				break
			}
		}
		if best < 0 {
			for _, i := range order {
				if best < 0 || sch.Archive(i).Span > sch.Archive(best).Span {
					best = i
				}
			}
		}
	}
	if raw && (rawSpan == 0 || rawSpan >= now-from) {
		finer := best < 0 || rawStep < int64(sch.Archive(best).Step/time.Second)
		tooMany := maxDataPoints > 0 && (until-from)/rawStep > int64(maxDataPoints) && covers
		if finer && !tooMany {
			return resolution{archive: -1, step: rawStep}, true
		}
	}
	if best < 0 {
		if raw {
			return resolution{archive: -1, step: rawStep}, true
		}
		return resolution{}, false
	}
	return resolution{archive: best, step: int64(sch.Archive(best).Step / time.Second)}, true
}

// fetchPlan is what Fetch needs of one series, copied under its lock.
type fetchPlan struct {
	key     string
	id      int64
	sch     *schemaInfo
	res     resolution
	start   int64
	values  []float64
	updates []rra.Update // cached slots of the chosen archive
	raw     []rawPoint   // cached raw points in the range
}

// Fetch returns the values of the named series (series keys, as Find's
// leaves give them) between from and until (unix seconds; the slots ending
// in (from, until] rounded out to whole steps), at the resolution that fits
// the range: the finest archive whose span reaches back to from (or the one
// reaching furthest), or raw points when they are kept that far back and
// are finer, unless maxDataPoints > 0 and they would give more values than
// that. Values still in the write-back cache are included. Unknown names
// are skipped. Safe for concurrent use with Add and Flush.
func (s *Store) Fetch(ctx context.Context, names []string, from, until int64, maxDataPoints int) ([]Series, error) {
	if until <= from {
		return nil, fmt.Errorf("fetch: until %d is not after from %d", until, from)
	}
	now := s.cfg.Now().Unix()
	var rawSpan, rawStepDefault int64
	if s.raw != nil {
		if r := s.cfg.Raw.Retention; r != nil {
			rawSpan = int64(approxDuration(*r) / time.Second)
		}
		rawStepDefault = int64(s.cfg.Raw.step() / time.Second)
	}
	var plans []*fetchPlan
	for _, name := range names {
		p, err := s.plan(name, from, until, now, rawSpan, rawStepDefault, maxDataPoints)
		if err != nil {
			return nil, err
		}
		if p != nil {
			plans = append(plans, p)
		}
	}
	out := make([]Series, 0, len(plans))
	for _, p := range plans {
		if err := s.read(ctx, p, from, until); err != nil {
			return nil, err
		}
		out = append(out, Series{Name: p.key, Start: p.start, Step: p.res.step, Values: p.values})
	}
	return out, nil
}

// plan chooses the resolution of one series and copies its cached data.
func (s *Store) plan(key string, from, until, now, rawSpan, rawStep int64, maxDataPoints int) (*fetchPlan, error) {
	sh := s.shardOf(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	x := sh.m[key]
	if x == nil {
		return nil, nil
	}
	var sch *rra.Schema
	if x.sch != nil {
		sch = x.sch.schema
		rawStep = int64(sch.Step() / time.Second)
	}
	res, ok := chooseResolution(sch, s.raw != nil, rawSpan, rawStep, now, from, until, maxDataPoints)
	if !ok {
		return nil, nil
	}
	start := floorDiv(from, res.step)*res.step + res.step
	end := -floorDiv(-until, res.step) * res.step
	n := (end-start)/res.step + 1
	if n > maxFetchValues {
		return nil, fmt.Errorf("fetch %q: %d values at a %d s step; the most is %d", key, n, res.step, maxFetchValues)
	}
	p := &fetchPlan{key: key, id: x.id, sch: x.sch, res: res, start: start, values: make([]float64, n)}
	for i := range p.values {
		p.values[i] = math.NaN()
	}
	if res.archive >= 0 {
		x.held = x.ds.ClosedSlots(x.held)
		b := x.bufBytes()
		s.mem.add(b - x.bytes)
		x.bytes = b
		for _, u := range x.held {
			if u.Archive == res.archive {
				p.updates = append(p.updates, u)
			}
		}
	} else {
		for _, r := range x.raw {
			if r.t > from*1e6 && r.t <= until*1e6 {
				p.raw = append(p.raw, r)
			}
		}
	}
	return p, nil
}

// read fills p.values from the database and the cache.
func (s *Store) read(ctx context.Context, p *fetchPlan, from, until int64) error {
	step, n := p.res.step, int64(len(p.values))
	put := func(t int64, v float64) {
		if t < p.start || (t-p.start)%step != 0 || (t-p.start)/step >= n {
			return
		}
		p.values[(t-p.start)/step] = v
	}
	if p.res.archive >= 0 {
		a := p.sch.schema.Archive(p.res.archive)
		if p.id != 0 {
			lo1, hi1, lo2, hi2 := int32(0), int32(a.Size-1), int32(-1), int32(-1)
			if n < int64(a.Size) {
				lo := a.SlotIndex(p.start * 1e6)
				hi := a.SlotIndex((p.start + (n-1)*step) * 1e6)
				lo1, hi1 = int32(lo), int32(hi)
				if lo > hi {
					lo1, hi1, lo2, hi2 = int32(lo), int32(a.Size-1), 0, int32(hi)
				}
			}
			rows, err := s.pool.Query(ctx, sqlReadSlots, p.sch.bundles[p.res.archive], p.id/SegmentWidth, int32(p.id%SegmentWidth)+1, lo1, hi1, lo2, hi2)
			if err != nil {
				return fmt.Errorf("fetch %q: %w", p.key, err)
			}
			var t *int64
			var v *float64
			if _, err := pgx.ForEachRow(rows, []any{&t, &v}, func() error {
				if t != nil && v != nil {
					put(*t, *v)
				}
				return nil
			}); err != nil {
				return fmt.Errorf("fetch %q: %w", p.key, err)
			}
		}
		for _, u := range p.updates {
			for _, t := range p.sch.schema.Slots(u) {
				put(t/1e6, u.Value)
			}
		}
		return nil
	}
	// Raw points: the mean of the points of each step, the database's and
	// the cache's (a point may be in both while a flush settles).
	pts := map[rawPoint]bool{}
	for _, r := range p.raw {
		pts[r] = true
	}
	if p.id != 0 {
		q := `SELECT time, value FROM ` + s.rawTbl.Qualified() + ` WHERE series_id = $1 AND time > $2 AND time <= $3`
		rows, err := s.pool.Query(ctx, q, p.id, time.Unix(from, 0), time.Unix(until, 0))
		if err != nil {
			return fmt.Errorf("fetch %q: %w", p.key, err)
		}
		var t time.Time
		var v *float64
		if _, err := pgx.ForEachRow(rows, []any{&t, &v}, func() error {
			if v != nil {
				pts[rawPoint{t: t.UnixMicro(), v: *v}] = true
			}
			return nil
		}); err != nil {
			return fmt.Errorf("fetch %q: %w", p.key, err)
		}
	}
	sorted := make([]rawPoint, 0, len(pts))
	for r := range pts {
		sorted = append(sorted, r)
	}
	slices.SortFunc(sorted, func(a, b rawPoint) int { return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.v, b.v)) })
	sum := make([]float64, n)
	cnt := make([]int, n)
	for _, r := range sorted {
		t := -floorDiv(-r.t, step*1e6) * step // end of the step holding r.t
		i := (t - p.start) / step
		if t < p.start || i >= n || math.IsNaN(r.v) {
			continue
		}
		sum[i] += r.v
		cnt[i]++
	}
	for i := range sum {
		if cnt[i] > 0 {
			p.values[i] = sum[i] / float64(cnt[i])
		}
	}
	return nil
}

// floorDiv is a/b rounded towards minus infinity, b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
