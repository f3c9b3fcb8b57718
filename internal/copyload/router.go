package copyload

import (
	"context"

	"github.com/pgts/pgts/internal/copyenc"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// router groups rows into batches per destination table and hands full
// batches to the workers' queue. It runs on one goroutine (the source's),
// so batch numbering follows input order and is the same on every run of
// the same input — which is what lets a resumed load skip exactly the
// batches that committed.
type router struct {
	l      *Loader
	series *partition.Table
	leaf   bool // route to leaf partitions
	open   []*batch
	cur    *batch // the batch the last row went to: the per-row fast path
	seq    int64
	known  map[int64]bool // partitions ensured
	// [lastLo, lastHi) is the partition of the last routed row: rows in it
	// go to cur without a lookup.
	lastLo, lastHi int64
}

func newRouter(l *Loader) *router {
	r := &router{l: l, series: l.target.Series, known: map[int64]bool{}}
	r.leaf = r.series != nil && l.cfg.Route == RouteLeaf
	return r
}

// batchFor returns the open batch for a row at time micros (ignored for
// plain tables), opening one when needed, and notes the row's time in
// it. The caller has checked the time is inside the table's window.
func (r *router) batchFor(ctx context.Context, micros int64) (*batch, error) {
	b, err := r.openFor(ctx, micros)
	if err == nil && r.series != nil {
		b.noteTime(micros)
	}
	return b, err
}

func (r *router) openFor(ctx context.Context, micros int64) (*batch, error) {
	if r.cur != nil && (r.series == nil || (micros >= r.lastLo && micros < r.lastHi)) {
		return r.cur, nil
	}
	var lo, hi int64
	if r.series != nil {
		var err error
		if lo, hi, err = partition.Bounds(r.series.Interval, micros); err != nil {
			return nil, err
		}
		if !r.known[lo] {
			if err := r.ensurePartition(ctx, lo, hi, micros); err != nil {
				return nil, err
			}
			r.known[lo] = true
		}
		r.lastLo, r.lastHi = lo, hi
	}
	if !r.leaf {
		// One open batch for the whole table: the server routes rows.
		lo, hi = 0, 0
	}
	for _, b := range r.open {
		if b.lo == lo && b.hi == hi {
			r.cur = b
			return b, nil
		}
	}
	if len(r.open) >= r.l.cfg.MaxOpenBatches {
		// Send the fullest batch to make room; deterministic for a given input.
		full := 0
		for i, b := range r.open {
			if b.rows() > r.open[full].rows() {
				full = i
			}
		}
		if err := r.send(ctx, full); err != nil {
			return nil, err
		}
	}
	b := r.l.newBatch()
	b.lo, b.hi = lo, hi
	b.table = r.l.target.Qualified()
	if r.leaf {
		name, err := partition.Name(r.series.Name, r.series.Interval, lo)
		if err != nil {
			return nil, err
		}
		b.leaf = name
		b.table = pg.QuoteQualified(r.series.Schema, name)
		if err := r.bulkAssign(ctx, b); err != nil {
			r.l.release(b)
			return nil, err
		}
	}
	r.open = append(r.open, b)
	r.cur = b
	return b, nil
}

// rowDone records the row just encoded into b (line and span: where it
// was read) and sends b when full.
func (r *router) rowDone(ctx context.Context, b *batch, src int32, line int64, sp inputSpan) error {
	b.ends = append(b.ends, b.enc.Len())
	b.lines = append(b.lines, line)
	b.srcs = append(b.srcs, src)
	b.spans = append(b.spans, sp)
	if r.l.full(b) {
		for i, o := range r.open {
			if o == b {
				return r.send(ctx, i)
			}
		}
	}
	return nil
}

// send numbers the i-th open batch and queues it, or drops it when an
// earlier run of this load ID committed it.
func (r *router) send(ctx context.Context, i int) error {
	b := r.open[i]
	r.open = append(r.open[:i], r.open[i+1:]...)
	if r.cur == b {
		r.cur = nil
	}
	if b.rows() == 0 {
		// Its only rows were refused after routing (a field the column
		// refuses): nothing to send, and no number, as no ledger has it.
		r.l.release(b)
		return nil
	}
	if r.l.full(b) {
		r.l.fullRows, r.l.fullBytes = b.rows(), b.enc.Len()
	}
	r.seq++
	b.seq = r.seq
	if e, ok := r.l.done[b.seq]; ok {
		if err := r.l.checkSkipped(b, e); err != nil {
			r.l.release(b)
			return err
		}
		r.l.skipped.Add(e.rows)
		r.l.skippedB.Add(1)
		for _, rj := range e.rejects {
			if err := r.l.reject(rj); err != nil {
				return err
			}
		}
		r.l.release(b)
		return nil
	}
	if held, err := r.bulkHold(ctx, b); held || err != nil {
		return err
	}
	r.l.bulkQueued(b)
	select {
	case r.l.queue <- b:
		return nil
	case <-ctx.Done():
		r.l.release(b)
		return ctx.Err()
	}
}

// flushAll sends every open batch, in the order they were opened.
func (r *router) flushAll(ctx context.Context) error {
	for len(r.open) > 0 {
		if err := r.send(ctx, 0); err != nil {
			return err
		}
	}
	return r.bulkCloseAll(ctx)
}

// full reports that b holds BatchRows rows or BatchBytes bytes: it is
// sent.
func (l *Loader) full(b *batch) bool {
	return b.rows() >= l.cfg.BatchRows || b.enc.Len() >= l.cfg.BatchBytes
}

// newBatch takes a recycled batch or makes one.
func (l *Loader) newBatch() *batch {
	select {
	case b := <-l.free:
		return b
	default:
	}
	// Room for a full batch like the last, and an eighth more: rows vary.
	// Bounded, for the batches of a table of wide rows: past a few MiB
	// growing costs little beside filling.
	n, size := min(l.fullRows, 1<<16), min(l.fullBytes+l.fullBytes/8, 8<<20)
	b := &batch{ends: make([]int, 0, n), lines: make([]int64, 0, n), srcs: make([]int32, 0, n), spans: make([]inputSpan, 0, n)}
	if l.binary {
		b.enc = copyenc.NewBinaryWriter(size)
	} else {
		b.enc = copyenc.NewTextWriter(size)
	}
	return b
}

// release returns a batch to the free list.
func (l *Loader) release(b *batch) {
	b.reset()
	select {
	case l.free <- b:
	default:
	}
}
