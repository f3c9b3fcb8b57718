package tsstore

import (
	"context"
	"errors"
	"time"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/rra"
)

// Add accepts points, blocking while the cache's pending data is over its
// budget until a flush frees memory or ctx ends (backpressure: a TCP
// receiver calling Add stops reading its socket). A point of a series
// whose state was evicted (evict.go) waits for it to be reloaded. It
// copies what it keeps, so the caller may reuse pts and their Tags when
// it returns.
//
// Points refused one by one (matching no rule without raw storage, out of
// order or duplicate for consolidation, beyond MaxSeries) are counted in
// Stats, not returned as errors. An error means the points from some
// index on were not taken: ctx's error or ErrClosed. Add never gives up
// for memory: when no flush can free any now (a raw write kept aside for
// its retry holds it), it waits for the periodic flush.
func (s *Store) Add(ctx context.Context, pts []ingest.Point) error {
	for len(pts) > 0 {
		n, err := s.add(pts, true)
		pts = pts[n:]
		switch {
		case err == nil:
			return nil
		case errors.Is(err, errEvicted):
			if err := s.reload(ctx, pts); err == nil {
				continue
			} else if ctx.Err() != nil {
				return err
			}
			// The database is unreachable: wait for the flush that
			// finds it back, as for memory.
		case errors.Is(err, errWait):
		case errors.Is(err, ErrFull):
			// Nothing a flush asked now would free: the periodic one.
			if err := s.waitForFlush(ctx, false); err != nil {
				return err
			}
			continue
		default:
			return err
		}
		if err := s.waitForFlush(ctx, true); err != nil {
			return err
		}
	}
	return nil
}

// TryAdd is Add without waiting for memory: it takes points from the
// front of pts until one does not fit in the budget, and returns how many
// it took with ErrFull (the caller, a UDP receiver say, drops and counts
// the rest). Points refused one by one are taken and counted as Add does.
// The state of an evicted series is reloaded (a query, bounded by
// reloadTimeout); when that fails, TryAdd stops there with the error.
func (s *Store) TryAdd(pts []ingest.Point) (accepted int, err error) {
	for {
		n, err := s.add(pts[accepted:], false)
		accepted += n
		if errors.Is(err, errEvicted) {
			ctx, cancel := context.WithTimeout(context.Background(), reloadTimeout)
			err = s.reload(ctx, pts[accepted:])
			cancel()
			if err == nil {
				continue
			}
			return accepted, err
		}
		if errors.Is(err, errWait) {
			err = ErrFull
		}
		if errors.Is(err, ErrFull) {
			s.counters.full.Add(int64(len(pts) - accepted))
		}
		return accepted, err
	}
}

// errWait: add stopped at a point that does not fit, and a flush may make
// room.
var errWait = errors.New("wait for a flush")

// waitForFlush waits for the end of the next flush, asking for one with
// kick unless the last periodic flush failed (the database is away: the
// periodic flush retries it, asking more would only spin).
func (s *Store) waitForFlush(ctx context.Context, kick bool) error {
	ch := s.freedChan()
	if kick && s.health.Load() == nil {
		s.kickFlush()
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// add takes points from pts until one does not fit; it returns how many
// it took. With wait, a point that does not fit returns errWait when a
// flush could free memory, ErrFull when none could.
func (s *Store) add(pts []ingest.Point, wait bool) (int, error) {
	s.closeMu.RLock()
	defer s.closeMu.RUnlock()
	if s.closed {
		return 0, ErrClosed
	}
	rules := *s.rules.Load()
	kick := s.mem.max / 10 * 8
	clock := s.cfg.Now()
	now, rawLo := clock.UnixMicro(), s.rawOldest(clock)
	for i := range pts {
		p := &pts[i]
		if err := s.addPoint(p, rules, now, rawLo); err != nil {
			if errors.Is(err, errEvicted) {
				return i, err
			}
			s.refusedAt.Store(now)
			if s.mem.used.Load() > kick {
				s.kickFlush()
			}
			if s.counters.buffered.Load() == 0 && s.counters.unflushed.Load() == 0 {
				// Nothing to flush: waiting would not help.
				return i, ErrFull
			}
			return i, errWait
		}
	}
	if s.mem.used.Load() > kick {
		s.kickFlush()
	}
	return len(pts), nil
}

// errNoRoom: the point does not fit in the budget.
var errNoRoom = errors.New("no room")

// errEvicted: the point's series has its state evicted; reload it first.
var errEvicted = errors.New("series state evicted")

// rawOldest is the oldest time (micros) a raw point may have at now.
func (s *Store) rawOldest(now time.Time) int64 {
	if s.raw == nil {
		return 0
	}
	t := partition.Table{AcceptPast: &s.rawPast, Interval: partition.Interval{Days: 1}}
	lo, _ := t.Window(now)
	return lo
}

// addPoint adds one point, now being the clock and rawLo the oldest time
// kept raw, in micros; it returns
// errNoRoom, having changed nothing, when the point does not fit in the
// budget, and errEvicted when its series' state must be reloaded first.
func (s *Store) addPoint(p *ingest.Point, rules []rra.Rule, now, rawLo int64) error {
	if !ingest.InRange(p.Time) {
		s.counters.invalid.Add(1)
		return nil
	}
	if p.Time > now+s.cfg.FutureTolerance.Microseconds() {
		s.counters.future.Add(1)
		return nil
	}
	keepRaw := s.raw != nil
	if keepRaw && p.Time < rawLo {
		keepRaw = false
		s.counters.rawRefused.Add(1)
		s.counters.rawOld.Add(1)
	}
	key := seriesKey(p.Name, p.Tags)
	sh := s.shardOf(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	x := sh.m[key]
	isNew := x == nil
	if isNew {
		var si *schemaInfo
		if r, ok := rra.Match(rules, p.Name); ok {
			si = s.schemaOf(r)
		} else if !keepRaw {
			if s.raw == nil {
				s.counters.unmatched.Add(1)
			}
			return nil
		}
		if s.cfg.MaxSeries > 0 && s.nSeries.Load() >= int64(s.cfg.MaxSeries) {
			s.counters.overLimit.Add(1)
			return nil
		}
		x = &series{key: key, sch: si}
		if len(p.Tags) > 0 {
			x.setTags(append([]ingest.Tag(nil), p.Tags...))
		}
	} else if x.sch != nil && x.ds == nil {
		return errEvicted
	}
	// Reserve the worst case of what the point adds to the pending data:
	// a grown raw buffer, two updates per archive (RRD: a run of unknown
	// slots, then the point's; Graphite: at most one). The series itself
	// (its key, index entries and state) is not pending: it is accounted
	// apart, and evicted when idle.
	need := int64(0)
	if keepRaw && len(x.raw()) == cap(x.raw()) {
		need += int64(growth(cap(x.raw()))) * rawBytes
	}
	if x.sch != nil {
		// The pending buffer may grow (append doubles it, rounded up to
		// a size class) to hold two updates per archive more.
		more := 2 * x.sch.schema.NumArchives()
		p, c := 0, 0
		if x.ds != nil {
			p, c = x.ds.Pending(), x.ds.PendingCap()
		}
		if p+more > c {
			need += int64(2*c+more+4-c) * updateBytes
		}
	}
	if !s.mem.reserve(need) {
		return errNoRoom
	}
	if isNew {
		if x.sch != nil {
			x.ds = rra.NewDS(x.sch.schema)
		}
		sh.m[key] = x
		s.mem.series.Add(s.idx.add(key) + x.baseBytes())
		sh.fresh = append(sh.fresh, x)
		s.nSeries.Add(1)
	}
	x.touched = s.gen.Load()
	s.counters.added.Add(1)
	if keepRaw {
		r := x.raw()
		if len(r) == cap(r) {
			r = make([]rawPoint, len(r), len(r)+growth(cap(r)))
			copy(r, x.raw())
		}
		x.setRaw(append(r, rawPoint{p.Time, p.Value}))
		s.counters.buffered.Add(1)
	}
	if x.ds != nil {
		// A Graphite state holds no values (the archives have them), only
		// the latest slot of each coarser archive: it is saved with the
		// first point and when one of those slots advances, so that a
		// restored DS knows which slots the archives have finer values
		// of; an RRD state with every point.
		_, started := x.ds.LastUpdate()
		graphite := x.sch.schema.Graphite()
		var mark uint64
		if graphite {
			mark = x.ds.SlotMark()
		}
		save := !started || !graphite
		switch err := x.ds.Put(p.Time, p.Value, now); {
		case err == nil:
			x.stateDirty = x.stateDirty || save || (graphite && x.ds.SlotMark() != mark)
		case errors.Is(err, rra.ErrBeyondMemory):
			x.stateDirty = x.stateDirty || save || (graphite && x.ds.SlotMark() != mark)
			s.counters.lateKept.Add(1)
		case errors.Is(err, rra.ErrTooOld):
			s.counters.tooOld.Add(1)
		case errors.Is(err, rra.ErrOutOfOrder):
			s.counters.outOfOrder.Add(1)
		case errors.Is(err, rra.ErrDuplicate):
			s.counters.duplicate.Add(1)
		default:
			s.counters.invalid.Add(1)
		}
	}
	if !x.dirty && (x.stateDirty || len(x.raw()) > 0 || (x.ds != nil && x.ds.Pending() > 0)) {
		x.dirty = true
		sh.dirty = append(sh.dirty, x)
		s.counters.unflushed.Add(1)
	}
	b := x.bufBytes()
	s.mem.add(b - x.bytes - need)
	x.bytes = b
	return nil
}

// growth is how many raw points a full buffer of capacity c grows by:
// doubling, from 4, by at most 512 points (8 KiB) at a time, so that one
// point never reserves much.
func growth(c int) int {
	return min(max(c, 4), 512)
}

// schemaOf returns the shared schemaInfo of rule r, one of the current
// rules. It remembers it by the rule's address, so that a new series
// does not format its schema's identity text again (schemaFor); SetRules
// forgets them with the rules.
func (s *Store) schemaOf(r *rra.Rule) *schemaInfo {
	if si, ok := s.ruleSchemas.Load(r); ok {
		return si.(*schemaInfo)
	}
	sch, _ := r.Schema() // checked by checkRules
	si := s.schemaFor(r.Pattern.String(), sch)
	s.ruleSchemas.Store(r, si)
	return si
}
