package rra

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// Graphite consolidation, as carbon writes whisper files:
//
//   - a point at t fills the slot of the finest archive whose span reaches
//     back to t (its age is measured against the caller's clock); the slot
//     starts at floor(t/step)*step and is labelled with that start; the
//     last value written to a slot wins;
//   - the slot of each coarser archive is then recomputed from the slots
//     of the next finer archive it contains: when the known ones are at
//     least xff of them, it holds their aggregate (average, sum, min, max
//     or last, in time order), and otherwise it is left as it was, and so
//     are the archives coarser still (whisper's __propagate);
//   - there is no heartbeat: a series sent every minute into a 10 s
//     archive has one value a minute; the first point is stored.
//
// To recompute a coarse slot the DS keeps, for each archive but the
// finest, a running aggregate of the finer slots inside its latest slot:
// the aggregate of the known ones before the latest finer slot written
// (their number, and their sum, minimum, maximum or last value), and
// that latest slot's value apart. A point in the latest finer slot
// replaces its value, a point in a later one first adds it to the
// aggregate, so the coarse slot is the aggregate of the same values in
// the same order as whisper reads them back from the file, bit for bit.
// These are in memory only: the saved state does not hold them, only
// each archive's latest slot.
//
// When an earlier finer slot of the latest coarse slot is written again
// (a point out of order, or a repeated timestamp), the aggregate cannot
// take it back out: the DS then keeps the finer values written since, and
// asks the caller for the others with a recompute request, as a DS
// restored from a state does at the first point that reaches an archive's
// latest slot; the answer's values, with those written meanwhile over
// them, become the running aggregate again (see Recompute). A restored
// DS knows each archive's latest slot from the state, so a point into an
// earlier one is a point older than the latest slot (below), whose finer
// values the caller's storage holds from before the restore. A state
// saved by an older build holds no latest slot (0): the DS then restores
// it unknown, as those builds did, and takes the first slot a point
// reaches for the latest; a later slot whose finer values the storage
// holds from before the restore is then aggregated from the points sent
// since only, until the DS's state is saved again past it. A
// point older than that latest slot still fills its own slot at once; the
// coarser slot it falls in needs finer values that only the caller's
// storage holds, so the DS asks for them with a recompute request: an
// Update with Count 0 among the pending ones, naming the coarse archive
// and slot. The caller reads the next finer archive's values of that
// slot (after writing the updates before the request) and hands them to
// Recompute, which goes on as Put would.

// ErrTooOld: the point is older than the span of every archive.
var ErrTooOld = errors.New("point older than every archive's span")

// ErrBeyondMemory: the point was stored in its archive, but it is older
// than the latest slot of a coarser archive, which awaits a recompute
// request's answer (see Recompute). It is a warning: the point was taken.
var ErrBeyondMemory = errors.New("point stored; a coarser archive awaits a recompute")

// gArch is the memory of one coarser archive in Graphite consolidation:
// 40 bytes.
type gArch struct {
	cur int64 // start of the archive's latest slot; noTime before any
	// acc is the aggregate of the n known finer values before finer slot
	// at of slot cur (their sum for average and sum), latest the value
	// of finer slot at (NaN unknown); the finer slots after at are
	// unknown. at is -1 before any.
	acc, latest float64
	n, at       int32
	// wait is non-nil while the finer values of slot cur come from a
	// recompute request's answer: in a DS restored from a saved state
	// (which holds no finer values) and after an earlier finer slot was
	// written again. It holds the finer values written since, which
	// Recompute keeps over the answer's.
	wait *gWait
}

// gWait holds the finer values of an archive's latest slot written while
// it waits for a recompute request's answer.
type gWait struct {
	kids []float64 // NaN unknown; nil before any is written
	bits []uint64  // bit i set: kids[i] was written
	// restored: the DS was restored from a saved state, and does not know
	// which later slots the caller's storage has finer values of; it
	// waits for an answer for each new latest slot until one comes.
	// Otherwise the wait ends with its slot: a later one has no finer
	// values yet.
	restored bool
}

// waitRestored is the wait of a restored archive before any finer value
// is written: shared, never changed, so that restoring many series
// allocates none.
var waitRestored = &gWait{restored: true}

// set records finer value i of n, replacing the wait pointed to by *w
// when it is waitRestored.
func setKid(w **gWait, i, n int64, v float64) {
	if *w == waitRestored {
		*w = newWait(n)
		(*w).restored = true
	}
	(*w).kids[i] = v
	(*w).bits[i/64] |= 1 << (i % 64)
}

// newWait returns a wait for n finer values, none known.
func newWait(n int64) *gWait {
	w := &gWait{kids: make([]float64, n), bits: make([]uint64, (n+63)/64)}
	for i := range w.kids {
		w.kids[i] = math.NaN()
	}
	return w
}

func (w *gWait) has(i int64) bool { return int(i/64) < len(w.bits) && w.bits[i/64]&(1<<(i%64)) != 0 }

// reset forgets the finer values written, for a new latest slot.
func (w *gWait) reset() {
	for i := range w.kids {
		w.kids[i] = math.NaN()
	}
	clear(w.bits)
}

// start makes p the archive's latest slot, with no finer value known.
func (g *gArch) start(p int64) {
	g.cur, g.acc, g.latest, g.n, g.at = p, 0, math.NaN(), 0, -1
	switch {
	case g.wait == nil || g.wait == waitRestored:
	case g.wait.restored:
		g.wait.reset()
	default:
		g.wait = nil
	}
}

// fold adds x, the value of a finer slot after those in g.acc, to it.
func (g *gArch) fold(cf CF, x float64) {
	if x != x {
		return
	}
	g.n++
	switch {
	case g.n == 1:
		g.acc = x
	case cf == Min:
		g.acc = min(g.acc, x)
	case cf == Max:
		g.acc = max(g.acc, x)
	case cf == Last:
		g.acc = x
	default: // Average, Sum
		g.acc += x
	}
}

// value is aggregate over the finer values of slot cur: that of g.acc
// and latest, when the known ones are at least xff of ratio.
func (g *gArch) value(a *archParams) (v float64, ok bool) {
	v, n := g.acc, g.n
	if x := g.latest; x == x {
		n++
		switch {
		case n == 1:
			v = x
		case a.cf == Min:
			v = min(v, x)
		case a.cf == Max:
			v = max(v, x)
		case a.cf == Last:
			v = x
		default: // Average, Sum
			v += x
		}
	}
	if n == 0 || float64(n)/float64(a.ratio) < a.xff {
		return 0, false
	}
	if a.cf == Average {
		v /= float64(n)
	}
	return v, true
}

// load sets the running aggregate of slot cur from all its finer values.
func (g *gArch) load(cf CF, kids []float64) {
	g.acc, g.latest, g.n, g.at = 0, math.NaN(), 0, -1
	last := -1
	for i, x := range kids {
		if x == x {
			last = i
		}
	}
	for _, x := range kids[:max(last, 0)] {
		g.fold(cf, x)
	}
	if last >= 0 {
		g.at, g.latest = int32(last), kids[last]
	}
}

// newGraphiteSchema validates a Graphite schema; see NewSchema.
func newGraphiteSchema(step time.Duration, archives []ArchiveSpec) (*Schema, error) {
	switch {
	case len(archives) == 0:
		return nil, errors.New("no archives")
	case len(archives) > MaxArchives:
		return nil, fmt.Errorf("%d archives exceed the limit of %d", len(archives), MaxArchives)
	}
	s := &Schema{
		graphite: true,
		step:     step.Microseconds(),
		specs:    append([]ArchiveSpec(nil), archives...),
		arch:     make([]archParams, len(archives)),
	}
	for i, a := range archives {
		if err := a.Validate(); err != nil {
			return nil, err
		}
		if a.CF == WMean {
			return nil, fmt.Errorf("archive %v: wmean is RRD consolidation; Graphite aggregates with average, sum, min, max or last", a)
		}
		if a.Step%step != 0 {
			return nil, fmt.Errorf("archive %v: step %s is not a multiple of the DS step %s",
				a, FormatDuration(a.Step), FormatDuration(step))
		}
		as := a.Step.Microseconds()
		p := archParams{step: as, size: int64(a.Size), cf: a.CF, span: a.Span.Microseconds(), xff: a.XFF}
		if i > 0 {
			prev := archives[i-1]
			if a.Step <= prev.Step || a.Step%prev.Step != 0 {
				return nil, fmt.Errorf("archive %v: in Graphite consolidation each archive's step must be a multiple of the one before (%s)",
					a, FormatDuration(prev.Step))
			}
			if a.Span <= prev.Span {
				return nil, fmt.Errorf("archive %v: in Graphite consolidation each archive must span more than the one before (%s)",
					a, FormatDuration(prev.Span))
			}
			p.ratio = int64(a.Step / prev.Step)
		}
		s.arch[i] = p
		s.slots += a.Size
		if i == 0 || a.Size < s.minSize {
			s.minSize = a.Size
		}
	}
	return s, nil
}

// DSBytes is an estimate of the memory one DS of s holds while it has no
// pending updates: the struct, its open slots and, in Graphite
// consolidation, the running aggregate of each coarser archive.
func (s *Schema) DSBytes() int64 {
	if s.graphite {
		return dsStructBytes + gArchBytes*int64(len(s.arch)-1)
	}
	return dsStructBytes + rrdStateBytes + 24 + 16*int64(len(s.arch))
}

// dsStructBytes is the size of the DS struct itself, rrdStateBytes of
// its rrdState, gArchBytes of a gArch.
const (
	dsStructBytes = 80
	rrdStateBytes = 40
	gArchBytes    = 40
)

// Put adds the point (t, v), t in micros, with the caller's clock reading
// now (micros). In RRD consolidation it is AddPoint and now is not used.
// In Graphite consolidation it stores v in the slot of t of the finest
// archive whose span reaches back to t, and recomputes the coarser
// archives as whisper does (see graphite.go); any time within the spans
// is accepted, in any order, and the last value written to a slot wins.
// It rejects, with a *PointError and no change, a time out of range
// (ErrTime), an infinite value (ErrValue) or a point older than every
// archive's span (ErrTooOld). ErrBeyondMemory is a warning: the point was
// stored. Refusing points too far in the future is the caller's choice.
func (d *DS) Put(t int64, v float64, now int64) error {
	s := d.schema
	if !s.graphite {
		return d.AddPoint(t, v)
	}
	switch {
	case t < MinTime || t >= MaxTime:
		return &PointError{Time: t, Value: v, LastUpdate: d.upTo, Err: ErrTime}
	case math.IsInf(v, 0):
		return &PointError{Time: t, Value: v, LastUpdate: d.upTo, Err: ErrValue}
	}
	// Whisper compares whole seconds.
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
		return &PointError{Time: t, Value: v, LastUpdate: d.g[k-1].cur, Err: ErrBeyondMemory}
	}
	return nil
}

// propagate gives archive k the new value val of the slot starting at st
// of archive k-1, and so on to the coarser archives while they change.
// It returns the archive whose slot is older than the one it keeps in
// memory, for which it made a recompute request, or -1.
func (d *DS) propagate(k int, st int64, val float64) int {
	s := d.schema
	for ; k < len(s.arch); k++ {
		lo := &s.arch[k]
		g := &d.g[k-1]
		p := floorDiv(st, lo.step) * lo.step
		switch {
		case g.cur == noTime || p > g.cur:
			g.start(p)
		case p < g.cur:
			d.emitG(k, p, 0, 0)
			return k
		}
		i := (st - p) / s.arch[k-1].step
		switch {
		case g.wait != nil:
		case i == int64(g.at):
			g.latest = val
		case i > int64(g.at):
			if val == val {
				// A NaN after the latest changes nothing: the finer
				// slots after the latest are unknown.
				g.fold(lo.cf, g.latest)
				g.at, g.latest = int32(i), val
			}
		default:
			// An earlier finer slot changed: its old value is in g.acc.
			g.wait = newWait(lo.ratio)
		}
		if g.wait != nil {
			// The other finer values are in the caller's storage.
			setKid(&g.wait, i, lo.ratio, val)
			d.emitG(k, p, 0, 0)
			return -1
		}
		agg, ok := g.value(lo)
		if !ok {
			return -1
		}
		d.emitG(k, p, agg, 1)
		val, st = agg, p
	}
	return -1
}

// SlotMark returns a number that changes whenever, in Graphite
// consolidation, the latest slot of a coarser archive advances (0 in RRD
// consolidation). The saved state holds those slots, and a DS restored
// from it asks the caller's storage for the finer values of a slot up to
// them (see Recompute): a caller that saves the state less often than at
// every point saves it again when the mark changes.
func (d *DS) SlotMark() uint64 {
	var m uint64
	for i := range d.g {
		if c := d.g[i].cur; c != noTime {
			// Each term is at least 1 and only grows; their sum, at most
			// MaxArchives × (MaxTime-MinTime+1), changes with any of them.
			m += uint64(c-MinTime) + 1
		}
	}
	return m
}

// Recompute answers a recompute request (an Update u with Count 0 that
// ClosedSlots returned) with the values, in time order, NaN where unknown,
// of the next finer archive's slots within u's slot, as the caller's
// storage holds them after writing the updates returned before u. It
// sets u's slot as whisper would and goes on to the coarser archives, as
// Put does (possibly making a further request). When u's slot is the
// archive's latest and it waits for its finer values (a restored DS, or
// an earlier finer slot written again), the values written since are
// kept over kids' and the DS keeps their running aggregate from then
// on. It does nothing when u is not a request of this DS's schema or
// kids is not that many values.
func (d *DS) Recompute(u Update, kids []float64) {
	s := d.schema
	if !s.graphite || u.Count != 0 || u.Archive < 1 || u.Archive >= len(s.arch) {
		return
	}
	a := &s.arch[u.Archive]
	if int64(len(kids)) != a.ratio || floorMod(u.Time, a.step) != 0 {
		return
	}
	if g := &d.g[u.Archive-1]; g.cur == u.Time {
		if g.wait == nil {
			// Meanwhile the slot became the one kept in memory: it has
			// the newest values.
			return
		}
		if w := g.wait; w.kids != nil {
			for i := range w.kids {
				if !w.has(int64(i)) {
					w.kids[i] = kids[i]
				}
			}
			kids = w.kids
		}
		g.wait = nil
		g.load(a.cf, kids)
		agg, ok := g.value(a)
		if !ok {
			return
		}
		d.emitG(u.Archive, u.Time, agg, 1)
		d.propagate(u.Archive+1, u.Time, agg)
		return
	}
	agg, ok := aggregate(a.cf, kids, a.xff)
	if !ok {
		return
	}
	d.emitG(u.Archive, u.Time, agg, 1)
	d.propagate(u.Archive+1, u.Time, agg)
}

// RecomputeSpan returns, for a recompute request u, the finer archive
// whose slots it needs, the first slot's start (micros) and their number.
func (s *Schema) RecomputeSpan(u Update) (archive int, start int64, n int) {
	return u.Archive - 1, u.Time, int(s.arch[u.Archive].ratio)
}

// aggregate is whisper's aggregate of the known values among vals (in
// time order), when they are at least xff of them; ok is false when none
// is known or too few are.
func aggregate(cf CF, vals []float64, xff float64) (v float64, ok bool) {
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
		default: // Average, Sum
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

// emitG sets the pending value of slot t (its start) of archive i
// (count 1), or requests its recompute (count 0), replacing the same
// among the latest pending updates.
func (d *DS) emitG(i int, t int64, v float64, count int) {
	for j := len(d.pending) - 1; j >= 0 && j >= len(d.pending)-4*len(d.schema.arch); j-- {
		if u := &d.pending[j]; u.Archive == i && u.Time == t && u.Count == count {
			if count == 0 {
				// A request must follow the writes it depends on.
				copy(d.pending[j:], d.pending[j+1:])
				d.pending = d.pending[:len(d.pending)-1]
				break
			}
			u.Value = v
			return
		}
	}
	a := &d.schema.arch[i]
	if d.pending == nil {
		// A point updates a slot of each archive: room for them and one
		// more finer slot at once (ClosedSlots hands the buffer over, so
		// every series starts again after every flush), as much as
		// doubling from one ends with for three archives, in one allocation.
		d.pending = make([]Update, 0, len(d.schema.arch)+1)
	}
	d.pending = append(d.pending, Update{Archive: i, Slot: int(floorMod(floorDiv(t, a.step), a.size)), Time: t, Count: count, Value: v})
}

// dedupG keeps, of pending updates naming the same slot and time (and of
// requests for the same slot), the latest only, in order.
func (d *DS) dedupG() {
	if len(d.pending) < 2 {
		return
	}
	if len(d.pending) <= 16 {
		d.dedupSmall()
		return
	}
	type key struct {
		a, c int
		t    int64
	}
	last := make(map[key]int, len(d.pending))
	for j, u := range d.pending {
		last[key{u.Archive, u.Count, u.Time}] = j
	}
	if len(last) == len(d.pending) {
		return
	}
	out := d.pending[:0]
	for j, u := range d.pending {
		if last[key{u.Archive, u.Count, u.Time}] == j {
			out = append(out, u)
		}
	}
	clear(d.pending[len(out):])
	d.pending = out
}

// dedupSmall is dedupG without a map, for a few updates.
func (d *DS) dedupSmall() {
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

// The binary state of a DS in Graphite consolidation, version 2,
// little-endian:
//
//	u8 version = 2, u8 flags (1: has received a point)
//	i64 DS step (µs), u8 archive count n,
//	n × { u8 CF, i64 step (µs), u32 size }           the schema it needs
//	i64 last point, i64 newest point                 (0 before any point)
//	n × { i64 latest slot, u32 k,                    (0 for the finest
//	      ceil(k/8) bytes: bit i set when              archive and before
//	      finer value i is known,                      a slot; older
//	      one f64 per known value }                    encoders wrote 0)
//	u32 pending count m,
//	m × { u8 archive, i64 time, u8 count (0: recompute request), f64 value }
//
// k is written 0 (no finer values); states with k > 0 (older encoders)
// are read, their values checked and dropped. A latest slot of 0 is
// unknown: the DS restores it as it was before any point.
const stateVersionGraphite = 2

// appendGraphite appends the state of a DS in Graphite consolidation.
// It holds no finer values: the caller's storage has them, and a DS
// restored from the state asks for them (see Recompute), so the state
// changes only when pending updates or an archive's latest slot do (see
// SlotMark) and need not be saved after every point.
func (d *DS) appendGraphite(dst []byte) []byte {
	d.dedupG()
	le := binary.LittleEndian
	dst = d.appendHeader(dst, stateVersionGraphite)
	for i := range d.schema.arch {
		cur := int64(0)
		if i > 0 && d.g[i-1].cur != noTime {
			cur = d.g[i-1].cur
		}
		dst = le.AppendUint64(dst, uint64(cur))
		dst = le.AppendUint32(dst, 0)
	}
	dst = le.AppendUint32(dst, uint32(len(d.pending)))
	for _, u := range d.pending {
		dst = append(dst, byte(u.Archive))
		dst = le.AppendUint64(dst, uint64(u.Time))
		dst = append(dst, byte(u.Count))
		dst = le.AppendUint64(dst, math.Float64bits(u.Value))
	}
	return dst
}

// decodeGraphite decodes and checks the version 2 state b of a DS of the
// Graphite schema s.
func decodeGraphite(s *Schema, b []byte) (DS, error) {
	r := stateReader{b: b}
	r.u8()
	flags, n, err := r.header(s, len(b))
	if err != nil {
		return DS{}, err
	}
	d := *NewDS(s)
	d.last, d.upTo = r.i64(), r.i64()
	started := flags&flagStarted != 0
	if !started {
		if d.last != 0 || d.upTo != 0 {
			return DS{}, corrupt("state of a DS without points is not empty")
		}
		d.last, d.upTo = noTime, noTime
	} else if d.last < MinTime || d.last >= MaxTime || d.upTo < d.last || d.upTo >= MaxTime {
		return DS{}, corrupt("times %d and %d are out of range or order", d.last, d.upTo)
	}
	for i := range n {
		cur, k := r.i64(), int64(r.u32())
		if r.short {
			return DS{}, corrupt("%d bytes are too short", len(b))
		}
		if i > 0 && started {
			// The finer values of the latest slots come from the caller's
			// storage (they may be newer than any saved here).
			d.g[i-1].wait = waitRestored
		}
		a := s.arch[i]
		if k == 0 {
			if cur == 0 {
				// Saved by an older encoder, or no slot yet: unknown.
				continue
			}
			if i == 0 || !started || floorMod(cur, a.step) != 0 || cur < MinTime || cur >= MaxTime ||
				cur > floorDiv(d.upTo, a.step)*a.step {
				return DS{}, corrupt("archive %d's latest slot is not consistent", i)
			}
			d.g[i-1].cur = cur
			continue
		}
		if i == 0 || k != a.ratio || !started || floorMod(cur, a.step) != 0 || cur < MinTime || cur >= MaxTime {
			return DS{}, corrupt("archive %d's latest slot is not consistent", i)
		}
		// The finer values saved (by an older encoder) are checked, not
		// kept: the recompute request's answer has them.
		d.g[i-1].cur = cur
		known := r.take(int((k + 7) / 8))
		if r.short {
			return DS{}, corrupt("%d bytes are too short", len(b))
		}
		for j := range k {
			if known[j/8]&(1<<(j%8)) == 0 {
				continue
			}
			if x := r.f64(); math.IsInf(x, 0) || math.IsNaN(x) {
				return DS{}, corrupt("archive %d's finer values are not consistent", i)
			}
		}
		if k%8 != 0 && known[len(known)-1]>>(k%8) != 0 {
			return DS{}, corrupt("archive %d's finer values are not consistent", i)
		}
	}
	m := int64(r.u32())
	if r.short {
		return DS{}, corrupt("%d bytes are too short", len(b))
	}
	if m*graphitePendingSize != int64(len(r.b)) {
		return DS{}, corrupt("%d pending updates in %d bytes", m, len(r.b))
	}
	if m > 2*int64(s.slots) || (m > 0 && !started) {
		return DS{}, corrupt("%d pending updates are not consistent", m)
	}
	if m > 0 {
		d.pending = make([]Update, m)
	}
	for j := range d.pending {
		u := Update{Archive: int(r.u8()), Time: r.i64(), Count: int(r.u8()), Value: r.f64()}
		if u.Archive >= n || math.IsInf(u.Value, 0) || u.Time < MinTime || u.Time >= MaxTime || u.Count > 1 ||
			(u.Count == 0 && (u.Archive == 0 || u.Value != 0)) ||
			floorMod(u.Time, s.arch[u.Archive].step) != 0 {
			return DS{}, corrupt("pending update %d is not consistent", j)
		}
		a := s.arch[u.Archive]
		u.Slot = int(floorMod(floorDiv(u.Time, a.step), a.size))
		d.pending[j] = u
	}
	return d, nil
}

// graphitePendingSize is the encoded size of a pending update in version 2.
const graphitePendingSize = 1 + 8 + 1 + 8
