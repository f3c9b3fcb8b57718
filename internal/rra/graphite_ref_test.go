package rra

import "math"

// refDS is Graphite consolidation as it was before the DS kept a running
// aggregate per coarser archive instead of the finer values themselves:
// every coarser archive keeps the values of the finer slots inside its
// latest slot (kids) and recomputes that slot from them at every point.
// It is the reference the differential tests hold the DS to.
type refDS struct {
	schema     *Schema
	last, upTo int64
	pending    []Update
	g          []refGArch
}

type refGArch struct {
	cur      int64
	kids     []float64
	restored *kidMask
}

// kidMask marks kids, one bit each.
type kidMask struct{ bits []uint64 }

func (m *kidMask) has(i int64) bool { return int(i/64) < len(m.bits) && m.bits[i/64]&(1<<(i%64)) != 0 }

var refNoKids = &kidMask{}

func refSetKid(m **kidMask, i, n int64) {
	if *m == refNoKids {
		*m = &kidMask{bits: make([]uint64, (n+63)/64)}
	}
	(*m).bits[i/64] |= 1 << (i % 64)
}

func newRefDS(s *Schema) *refDS {
	d := &refDS{schema: s, last: noTime, upTo: noTime, g: make([]refGArch, len(s.arch))}
	for i := range d.g {
		d.g[i].cur = noTime
	}
	return d
}

func (d *refDS) Put(t int64, v float64, now int64) error {
	s := d.schema
	switch {
	case t < MinTime || t >= MaxTime:
		return &PointError{Time: t, Value: v, LastUpdate: d.upTo, Err: ErrTime}
	case math.IsInf(v, 0):
		return &PointError{Time: t, Value: v, LastUpdate: d.upTo, Err: ErrValue}
	}
	age := floorDiv(now, 1e6)*1e6 - floorDiv(t, 1e6)*1e6
	j := -1
	for i := range s.arch {
		if s.arch[i].span >= age {
			j = i
			break
		}
	}
	if j < 0 {
		return &PointError{Time: t, Value: v, LastUpdate: d.upTo, Err: ErrTooOld}
	}
	st := floorDiv(t, s.arch[j].step) * s.arch[j].step
	d.emitG(j, st, v, 1)
	if d.upTo == noTime || t > d.upTo {
		d.upTo = t
	}
	d.last = t
	if k := d.propagate(j+1, st, v); k >= 0 {
		return &PointError{Time: t, Value: v, LastUpdate: d.g[k].cur, Err: ErrBeyondMemory}
	}
	return nil
}

func (d *refDS) propagate(k int, st int64, val float64) int {
	s := d.schema
	for ; k < len(s.arch); k++ {
		lo := &s.arch[k]
		g := &d.g[k]
		p := floorDiv(st, lo.step) * lo.step
		switch {
		case g.cur == noTime || p > g.cur:
			if g.kids == nil {
				g.kids = make([]float64, lo.ratio)
			}
			for i := range g.kids {
				g.kids[i] = math.NaN()
			}
			if g.restored != nil {
				clear(g.restored.bits)
			}
			g.cur = p
		case p < g.cur:
			d.emitG(k, p, 0, 0)
			return k
		}
		i := (st - p) / s.arch[k-1].step
		g.kids[i] = val
		if g.restored != nil {
			refSetKid(&g.restored, i, lo.ratio)
			d.emitG(k, p, 0, 0)
			return -1
		}
		agg, ok := refAggregate(lo.cf, g.kids, lo.xff)
		if !ok {
			return -1
		}
		d.emitG(k, p, agg, 1)
		val, st = agg, p
	}
	return -1
}

func (d *refDS) Recompute(u Update, kids []float64) {
	s := d.schema
	if u.Count != 0 || u.Archive < 1 || u.Archive >= len(s.arch) {
		return
	}
	a := &s.arch[u.Archive]
	if int64(len(kids)) != a.ratio || floorMod(u.Time, a.step) != 0 {
		return
	}
	if g := &d.g[u.Archive]; g.cur == u.Time {
		if g.restored == nil {
			return
		}
		for i := range g.kids {
			if !g.restored.has(int64(i)) {
				g.kids[i] = kids[i]
			}
		}
		g.restored = nil
		kids = g.kids
	}
	agg, ok := refAggregate(a.cf, kids, a.xff)
	if !ok {
		return
	}
	d.emitG(u.Archive, u.Time, agg, 1)
	d.propagate(u.Archive+1, u.Time, agg)
}

func refAggregate(cf CF, vals []float64, xff float64) (v float64, ok bool) {
	n := 0
	for _, x := range vals {
		if x != x {
			continue
		}
		n++
		switch {
		case n == 1:
			v = x
		case cf == Min:
			v = min(v, x)
		case cf == Max:
			v = max(v, x)
		case cf == Last:
			v = x
		default:
			v += x
		}
	}
	if n == 0 || float64(n)/float64(len(vals)) < xff {
		return 0, false
	}
	if cf == Average {
		v /= float64(n)
	}
	return v, true
}

func (d *refDS) emitG(i int, t int64, v float64, count int) {
	for j := len(d.pending) - 1; j >= 0 && j >= len(d.pending)-4*len(d.g); j-- {
		if u := &d.pending[j]; u.Archive == i && u.Time == t && u.Count == count {
			if count == 0 {
				copy(d.pending[j:], d.pending[j+1:])
				d.pending = d.pending[:len(d.pending)-1]
				break
			}
			u.Value = v
			return
		}
	}
	a := &d.schema.arch[i]
	d.pending = append(d.pending, Update{Archive: i, Slot: int(floorMod(floorDiv(t, a.step), a.size)), Time: t, Count: count, Value: v})
}

func (d *refDS) dedupG() {
	out := d.pending[:0]
	for j, u := range d.pending {
		later := false
		for _, w := range d.pending[j+1:] {
			if w.Archive == u.Archive && w.Time == u.Time && w.Count == u.Count {
				later = true
				break
			}
		}
		if !later {
			out = append(out, u)
		}
	}
	clear(d.pending[len(out):])
	d.pending = out
}

func (d *refDS) Pending() int { return len(d.pending) }

func (d *refDS) ClosedSlots() []Update {
	d.dedupG()
	out := d.pending
	d.pending = nil
	return out
}

// refDecode restores a version 2 state as the reference did.
func refDecode(s *Schema, b []byte) (*refDS, error) {
	r := stateReader{b: b}
	r.u8()
	flags, n, err := r.header(s, len(b))
	if err != nil {
		return nil, err
	}
	d := newRefDS(s)
	d.last, d.upTo = r.i64(), r.i64()
	started := flags&flagStarted != 0
	if !started {
		if d.last != 0 || d.upTo != 0 {
			return nil, corrupt("state of a DS without points is not empty")
		}
		d.last, d.upTo = noTime, noTime
	} else if d.last < MinTime || d.last >= MaxTime || d.upTo < d.last || d.upTo >= MaxTime {
		return nil, corrupt("times %d and %d are out of range or order", d.last, d.upTo)
	}
	for i := range d.g {
		cur, k := r.i64(), int64(r.u32())
		if r.short {
			return nil, corrupt("%d bytes are too short", len(b))
		}
		if i > 0 && started {
			d.g[i].restored = refNoKids
		}
		if k == 0 {
			continue
		}
		a := s.arch[i]
		if i == 0 || k != a.ratio || !started || floorMod(cur, a.step) != 0 || cur < MinTime || cur >= MaxTime {
			return nil, corrupt("archive %d's latest slot is not consistent", i)
		}
		g := &d.g[i]
		g.cur, g.kids = cur, make([]float64, k)
		known := r.take(int((k + 7) / 8))
		if r.short {
			return nil, corrupt("%d bytes are too short", len(b))
		}
		for j := range g.kids {
			g.kids[j] = math.NaN()
			if known[j/8]&(1<<(j%8)) == 0 {
				continue
			}
			if g.kids[j] = r.f64(); math.IsInf(g.kids[j], 0) || math.IsNaN(g.kids[j]) {
				return nil, corrupt("archive %d's finer values are not consistent", i)
			}
		}
		if k%8 != 0 && known[len(known)-1]>>(k%8) != 0 {
			return nil, corrupt("archive %d's finer values are not consistent", i)
		}
	}
	m := int64(r.u32())
	if r.short {
		return nil, corrupt("%d bytes are too short", len(b))
	}
	if m*graphitePendingSize != int64(len(r.b)) {
		return nil, corrupt("%d pending updates in %d bytes", m, len(r.b))
	}
	if m > 2*int64(s.slots) || (m > 0 && !started) {
		return nil, corrupt("%d pending updates are not consistent", m)
	}
	for j := range m {
		u := Update{Archive: int(r.u8()), Time: r.i64(), Count: int(r.u8()), Value: r.f64()}
		if u.Archive >= n || math.IsInf(u.Value, 0) || u.Time < MinTime || u.Time >= MaxTime || u.Count > 1 ||
			(u.Count == 0 && (u.Archive == 0 || u.Value != 0)) ||
			floorMod(u.Time, s.arch[u.Archive].step) != 0 {
			return nil, corrupt("pending update %d is not consistent", j)
		}
		a := s.arch[u.Archive]
		u.Slot = int(floorMod(floorDiv(u.Time, a.step), a.size))
		d.pending = append(d.pending, u)
	}
	return d, nil
}
