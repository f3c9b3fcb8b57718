package rra

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The binary state of a DS, version 1, little-endian, fixed width:
//
//	u8 version = 1, u8 flags (1: has received a point)
//	i64 DS step (µs), u8 archive count n,
//	n × { u8 CF, i64 step (µs), u32 size }           the schema it needs
//	i64 last point, i64 accumulated up to            (0 before any point)
//	f64 open PDP mean, i64 its known time (µs)
//	n × { f64 open slot value, i64 its known time }
//	u32 pending count m,
//	m × { u8 archive, i64 time, u32 count, f64 value }
//
// The heartbeat and the xffs are not part of it: they may change between
// a save and a restore and only govern what happens next.
const (
	stateVersion     = 1
	stateHeadBytes   = 1 + 1 + 8 + 1
	stateArchBytes   = 1 + 8 + 4
	stateFixedBytes  = 8 + 8 + 8 + 8 + 4
	stateAccBytes    = 8 + 8
	statePendingSize = 1 + 8 + 4 + 8
	flagStarted      = 1
)

// MarshalBinary returns the DS's state, to resume it after a restart
// with UnmarshalBinary on a DS of the same schema. The state includes the
// pending updates; it first drops those that newer ones overwrite, as
// ClosedSlots does. It takes 47 bytes, plus 29 per archive, plus 21 per
// pending update.
func (d *DS) MarshalBinary() ([]byte, error) {
	n := len(d.schema.arch)
	return d.AppendBinary(make([]byte, 0, stateHeadBytes+n*stateArchBytes+stateFixedBytes+
		n*stateAccBytes+len(d.pending)*statePendingSize))
}

// appendHeader appends what both state formats begin with: the version,
// the flags, the schema (step, archives) and the last and upTo times.
func (d *DS) appendHeader(dst []byte, version byte) []byte {
	s := d.schema
	le := binary.LittleEndian
	flags := byte(0)
	last, upTo := d.last, d.upTo
	if last != noTime {
		flags = flagStarted
	} else {
		last, upTo = 0, 0
	}
	dst = append(dst, version, flags)
	dst = le.AppendUint64(dst, uint64(s.step))
	dst = append(dst, byte(len(s.arch)))
	for _, a := range s.arch {
		dst = append(dst, byte(a.cf))
		dst = le.AppendUint64(dst, uint64(a.step))
		dst = le.AppendUint32(dst, uint32(a.size))
	}
	dst = le.AppendUint64(dst, uint64(last))
	return le.AppendUint64(dst, uint64(upTo))
}

// AppendBinary appends the DS's state, as MarshalBinary returns it, to
// dst, dropping overwritten pending updates first.
func (d *DS) AppendBinary(dst []byte) ([]byte, error) {
	if d.schema.graphite {
		return d.appendGraphite(dst), nil
	}
	d.trim()
	le := binary.LittleEndian
	dst = d.appendHeader(dst, stateVersion)
	dst = le.AppendUint64(dst, math.Float64bits(d.pdpVal))
	dst = le.AppendUint64(dst, uint64(d.pdpKnown))
	for _, acc := range d.acc {
		dst = le.AppendUint64(dst, math.Float64bits(acc.val))
		dst = le.AppendUint64(dst, uint64(acc.known))
	}
	dst = le.AppendUint32(dst, uint32(len(d.pending)))
	for _, u := range d.pending {
		dst = append(dst, byte(u.Archive))
		dst = le.AppendUint64(dst, uint64(u.Time))
		dst = le.AppendUint32(dst, uint32(u.Count))
		dst = le.AppendUint64(dst, math.Float64bits(u.Value))
	}
	return dst, nil
}

// UnmarshalBinary replaces the DS's state with one MarshalBinary
// returned. It refuses, leaving the DS unchanged, a state saved under
// another DS step or other archives (ErrSchemaMismatch) and bytes that are
// not a consistent state (ErrCorrupt).
func (d *DS) UnmarshalBinary(b []byte) error {
	nd, err := decodeState(d.schema, b)
	if err != nil {
		return fmt.Errorf("restoring data source state: %w", err)
	}
	*d = nd
	return nil
}

// stateReader reads fixed-width little-endian fields, remembering a
// short read instead of failing at each.
type stateReader struct {
	b     []byte
	short bool
}

func (r *stateReader) take(n int) []byte {
	if len(r.b) < n {
		r.short, r.b = true, nil
		return make([]byte, n)
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *stateReader) u8() byte    { return r.take(1)[0] }
func (r *stateReader) u32() uint32 { return binary.LittleEndian.Uint32(r.take(4)) }
func (r *stateReader) i64() int64  { return int64(binary.LittleEndian.Uint64(r.take(8))) }
func (r *stateReader) f64() float64 {
	return math.Float64frombits(binary.LittleEndian.Uint64(r.take(8)))
}

// header reads and checks what follows the version byte of a state of
// size bytes saved for schema s: the flags, the DS step and each
// archive's consolidation, step and size, which must be s's. It returns
// the flags and the number of archives.
func (r *stateReader) header(s *Schema, size int) (flags byte, n int, err error) {
	flags = r.u8()
	step := r.i64()
	n = int(r.u8())
	if r.short {
		return 0, 0, corrupt("%d bytes are too short", size)
	}
	if flags&^flagStarted != 0 {
		return 0, 0, corrupt("unknown flags %#x", flags)
	}
	if step != s.step || n != len(s.arch) {
		return 0, 0, fmt.Errorf("%w: saved with a DS step of %dµs and %d archives, want %dµs and %d",
			ErrSchemaMismatch, step, n, s.step, len(s.arch))
	}
	for i := range n {
		cf, astep, asize := CF(r.u8()), r.i64(), int64(r.u32())
		if a := s.arch[i]; !r.short && (cf != a.cf || astep != a.step || asize != a.size) {
			return 0, 0, fmt.Errorf("%w: archive %d saved as %v, %dµs × %d, want %v, %dµs × %d",
				ErrSchemaMismatch, i, cf, astep, asize, a.cf, a.step, a.size)
		}
	}
	return flags, n, nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}

// decodeState decodes and checks the state b of a DS of schema s.
func decodeState(s *Schema, b []byte) (DS, error) {
	r := stateReader{b: b}
	v := r.u8()
	switch {
	case r.short:
	case v == stateVersionGraphite && s.graphite:
		return decodeGraphite(s, b)
	case v == stateVersionGraphite || (v == stateVersion && s.graphite):
		return DS{}, fmt.Errorf("%w: saved in the other consolidation mode", ErrSchemaMismatch)
	case v != stateVersion:
		return DS{}, corrupt("unknown version %d", v)
	}
	flags, n, err := r.header(s, len(b))
	if err != nil {
		return DS{}, err
	}
	d := DS{schema: s, last: r.i64(), upTo: r.i64(), rrdState: &rrdState{pdpVal: r.f64(), pdpKnown: r.i64(), acc: make([]slotAcc, n)}}
	for i := range d.acc {
		d.acc[i] = slotAcc{val: r.f64(), known: r.i64()}
	}
	m := int64(r.u32())
	if r.short {
		return DS{}, corrupt("%d bytes are too short", len(b))
	}
	if m*statePendingSize != int64(len(r.b)) {
		return DS{}, corrupt("%d pending updates in %d bytes", m, len(r.b))
	}
	if m > int64(s.slots) {
		return DS{}, corrupt("%d pending updates exceed the %d slots of the rings", m, s.slots)
	}
	if m > 0 {
		d.pending = make([]Update, m)
	}
	for j := range d.pending {
		d.pending[j] = Update{Archive: int(r.u8()), Time: r.i64(), Count: int(r.u32()), Value: r.f64()}
	}
	if flags&flagStarted == 0 {
		if d.last != 0 || d.upTo != 0 || d.pdpVal != 0 || d.pdpKnown != 0 || m != 0 || !allZero(d.acc) {
			return DS{}, corrupt("state of a DS without points is not empty")
		}
		d.last, d.upTo = noTime, noTime
		return d, nil
	}
	if err := d.check(); err != nil {
		return DS{}, err
	}
	return d, nil
}

func allZero(acc []slotAcc) bool {
	for _, a := range acc {
		if a != (slotAcc{}) {
			return false
		}
	}
	return true
}

// check verifies that a decoded DS, which has received a point, is one
// the DS's own methods could have produced, so that no later call can
// misbehave on it. It fills in each pending update's Slot.
func (d *DS) check() error {
	s := d.schema
	if d.last < MinTime || d.upTo >= MaxTime || d.last > d.upTo {
		return corrupt("times %d and %d are out of range or order", d.last, d.upTo)
	}
	ps := floorDiv(d.upTo, s.step) * s.step // start of the open PDP
	if !okPartial(d.pdpVal, d.pdpKnown, d.upTo-ps) {
		return corrupt("open PDP (%v over %dµs) is not consistent", d.pdpVal, d.pdpKnown)
	}
	var prevEnd [MaxArchives]int64
	var total [MaxArchives]int64
	for i, a := range s.arch {
		ss := floorDiv(ps, a.step) * a.step // start of the open slot
		if !okPartial(d.acc[i].val, d.acc[i].known, ps-ss) {
			return corrupt("open slot of archive %d (%v over %dµs) is not consistent", i, d.acc[i].val, d.acc[i].known)
		}
		prevEnd[i] = math.MinInt64
	}
	for j := range d.pending {
		u := &d.pending[j]
		if u.Archive >= len(s.arch) {
			return corrupt("pending update %d names archive %d", j, u.Archive)
		}
		a := s.arch[u.Archive]
		ss := floorDiv(ps, a.step) * a.step
		if u.Count < 1 || int64(u.Count) > a.size || math.IsInf(u.Value, 0) ||
			u.Time < MinTime || u.Time > ss || floorMod(u.Time, a.step) != 0 ||
			u.Time <= prevEnd[u.Archive] {
			return corrupt("pending update %d is not consistent", j)
		}
		end := u.Time + int64(u.Count-1)*a.step
		total[u.Archive] += int64(u.Count)
		if end > ss || total[u.Archive] > a.size {
			return corrupt("pending update %d is not consistent", j)
		}
		prevEnd[u.Archive] = end
		u.Slot = int(floorMod(u.Time/a.step, a.size))
	}
	// Distinct slots: an archive's updates lie within one lap of the ring.
	for j := range d.pending {
		u := &d.pending[j]
		a := s.arch[u.Archive]
		if prevEnd[u.Archive]-u.Time >= a.size*a.step {
			return corrupt("pending updates of archive %d span more than one lap of its ring", u.Archive)
		}
	}
	return nil
}

// okPartial reports whether an open PDP or slot holding val over known
// micros is possible when at most span micros have elapsed in it.
func okPartial(val float64, known, span int64) bool {
	if known == 0 {
		return math.Float64bits(val) == 0
	}
	return known > 0 && known <= span && !math.IsNaN(val) && !math.IsInf(val, 0)
}
