package rra

import "math"

// noTime marks a DS that has received no point; MinInt64 is outside
// [MinTime, MaxTime).
const noTime = math.MinInt64

// DS is the in-memory state of one series: its last update time, its open
// primary data point, the open slot of each archive, and the closed slots
// not yet taken by ClosedSlots. It holds no ring: closed slots go to the
// caller, which persists them. A DS takes 80 bytes, plus in RRD
// consolidation 40 and 16 per archive, in Graphite consolidation 40 per
// archive but the finest, plus 40 per pending update its buffer holds
// (ClosedSlots keeps a buffer of at most 8).
//
// A DS is not safe for concurrent use.
type DS struct {
	schema *Schema
	// last is the time of the last accepted point; upTo is the time up to
	// which the DS has accumulated, which is last or a later time given
	// to Advance. Both are noTime before the first point.
	last, upTo int64
	// pending holds the closed slots not yet taken by ClosedSlots.
	pending []Update
	// g is the memory of each archive but the finest in Graphite
	// consolidation (g[k-1] is archive k's); nil in RRD consolidation.
	g []gArch
	// rrdState is the open PDP and slots in RRD consolidation; nil in
	// Graphite consolidation, which has none.
	*rrdState
}

// rrdState is what a DS keeps open in RRD consolidation.
type rrdState struct {
	// pdpVal is the time-weighted mean of the known values of the open
	// PDP, pdpKnown their time in micros (pdpVal is 0 while it is 0).
	pdpVal   float64
	pdpKnown int64
	// acc holds the open slot of each archive, in schema order.
	acc []slotAcc
}

// NewDS returns an empty DS of schema s, which waits for its first point.
func NewDS(s *Schema) *DS {
	if s.graphite {
		d := newGraphiteDS(len(s.arch) - 1)
		d.schema, d.last, d.upTo = s, noTime, noTime
		for i := range d.g {
			d.g[i].cur = noTime
		}
		return d
	}
	// One allocation for the DS and its open PDP.
	x := &struct {
		d DS
		r rrdState
	}{}
	x.d = DS{schema: s, last: noTime, upTo: noTime, rrdState: &x.r}
	x.r.acc = make([]slotAcc, len(s.arch))
	return &x.d
}

// newGraphiteDS allocates a DS with room for the open slots of n coarser
// archives, up to four of them in the same object (one object a series
// fewer for the collector to mark).
func newGraphiteDS(n int) *DS {
	switch n {
	case 0:
		return &DS{}
	case 1:
		x := &struct {
			d DS
			g [1]gArch
		}{}
		x.d.g = x.g[:]
		return &x.d
	case 2:
		x := &struct {
			d DS
			g [2]gArch
		}{}
		x.d.g = x.g[:]
		return &x.d
	case 3:
		x := &struct {
			d DS
			g [3]gArch
		}{}
		x.d.g = x.g[:]
		return &x.d
	case 4:
		x := &struct {
			d DS
			g [4]gArch
		}{}
		x.d.g = x.g[:]
		return &x.d
	}
	return &DS{g: make([]gArch, n)}
}

// Schema returns the DS's schema.
func (d *DS) Schema() *Schema { return d.schema }

// LastUpdate returns the time up to which the DS has accumulated, in
// micros: the time of the last accepted point or a later time given to
// Advance. ok is false before the first point.
func (d *DS) LastUpdate() (t int64, ok bool) { return d.upTo, d.upTo != noTime }

// AddPoint adds the point (t, v), t in micros. The value covers the time
// since the previous point, or is unknown for that time if the gap
// exceeds the heartbeat or v is NaN; the first point only starts the
// clock. Every slot the point completes becomes a pending update for
// ClosedSlots.
//
// AddPoint rejects, with a *PointError and no change to the DS, a point
// older than the last update (ErrOutOfOrder), at the time of the previous
// point (ErrDuplicate), outside [MinTime, MaxTime) (ErrTime) or with an
// infinite value (ErrValue).
//
// AddPoint does not allocate, except to grow the pending updates or to
// return an error.
func (d *DS) AddPoint(t int64, v float64) error {
	if d.schema.graphite {
		return d.Put(t, v, t) // no clock: the point's own time
	}
	switch {
	case t < MinTime || t >= MaxTime:
		return &PointError{Time: t, Value: v, LastUpdate: d.upTo, Err: ErrTime}
	case math.IsInf(v, 0):
		return &PointError{Time: t, Value: v, LastUpdate: d.upTo, Err: ErrValue}
	case d.last == noTime:
		d.last, d.upTo = t, t
		return nil
	case t == d.last:
		return &PointError{Time: t, Value: v, LastUpdate: d.last, Err: ErrDuplicate}
	case t < d.upTo:
		return &PointError{Time: t, Value: v, LastUpdate: d.upTo, Err: ErrOutOfOrder}
	}
	known := !math.IsNaN(v) && t-d.last <= d.schema.heartbeat
	d.accumulate(t, v, known)
	d.last = t
	return nil
}

// Advance tells the DS that the caller's clock reads now (micros) so that
// a series that stopped sending still closes its slots. Once now is more
// than the heartbeat past the last point, no later point can make the
// time since then known, so Advance accumulates it as unknown up to now,
// closing the slots that end by then. Otherwise, or before the first
// point, it does nothing. A later point older than now is then rejected
// with ErrOutOfOrder. now is clamped to the supported range.
func (d *DS) Advance(now int64) {
	now = min(now, MaxTime-1)
	if d.schema.graphite || d.last == noTime || now <= d.upTo || now-d.last <= d.schema.heartbeat {
		return
	}
	d.accumulate(now, 0, false)
}

// accumulate adds the interval (d.upTo, q] with value v, or unknown when
// known is false, and sets d.upTo to q. It closes at most one partial PDP
// and feeds every whole PDP in the interval to the archives at once, so
// its cost does not grow with the length of the interval.
//
//	ps      upTo       pe                 qs        q
//	─┼────────●─────────┼────── ... ───────┼─────────●────────┼──▶
//	 │        └ part 1 ─┘└ n whole PDPs ───┘└ part 3 ┘        │
//	 │   the open PDP   │                  │   the new open PDP │
func (d *DS) accumulate(q int64, v float64, known bool) {
	s := d.schema
	step := s.step
	p := d.upTo
	if q == p {
		return
	}
	d.upTo = q
	ps := floorDiv(p, step) * step // start of the open PDP (ps, ps+step]
	pe := ps + step
	if q < pe {
		if known {
			d.addToPDP(v, q-p)
		}
		return
	}
	if known {
		d.addToPDP(v, pe-p)
	}
	m, k := d.pdpVal, d.pdpKnown
	if step-k > s.heartbeat {
		m, k = 0, 0 // more unknown time than the heartbeat: unknown PDP
	}
	d.pdpVal, d.pdpKnown = 0, 0
	d.feed(ps, 1, m, k)
	qs := floorDiv(q, step) * step
	if n := (qs - pe) / step; n > 0 {
		if known {
			d.feed(pe, n, v, step)
		} else {
			d.feed(pe, n, 0, 0)
		}
	}
	if q > qs && known {
		d.addToPDP(v, q-qs)
	}
}

// addToPDP adds value v over dur > 0 micros to the open PDP.
func (d *DS) addToPDP(v float64, dur int64) {
	if d.pdpKnown == 0 {
		d.pdpVal = v
	} else {
		d.pdpVal = mix(d.pdpVal, v, float64(dur)/float64(d.pdpKnown+dur))
	}
	d.pdpKnown += dur
}

// feed passes n consecutive closed PDPs, the first starting at start (a
// PDP boundary), each with mean m and known time k (0 for unknown), to
// every archive. Whole slots made of these PDPs become one run; at most a
// partial slot on each side goes through the slot accumulator.
func (d *DS) feed(start, n int64, m float64, k int64) {
	s := d.schema
	end := start + n*s.step
	for i := range s.arch {
		a := &s.arch[i]
		acc := &d.acc[i]
		for p := start; p < end; {
			ss := floorDiv(p, a.step) * a.step // the open slot is (ss, se]
			se := ss + a.step
			if p == ss && end-p >= a.step {
				// The open slot is empty: whole slots from here.
				cnt := (end - p) / a.step
				d.emit(i, se, cnt, a.uniform(s.step, m, k))
				p += cnt * a.step
				continue
			}
			seg := min(end, se)
			if k > 0 {
				acc.add(a.cf, m, (seg-p)/s.step*k)
			}
			if p = seg; p == se {
				d.emit(i, se, 1, acc.take(a))
			}
		}
	}
}
