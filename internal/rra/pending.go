package rra

import "math"

// Update is a run of Count consecutive closed slots of one archive, all
// set to Value, that the caller must persist: slot Slot of the ring at
// time Time, then the next slot (wrapping to 0 after Size-1) one archive
// step later, and so on. Schema.Slots lists them. Most updates are one
// slot; a gap or a long known interval makes a longer run.
type Update struct {
	// Archive is the index of the archive in the schema.
	Archive int
	// Slot is the ring index of the first slot, in [0, Size).
	Slot int
	// Time is the time (end) of the first slot, in micros, a multiple of
	// the archive step.
	Time int64
	// Count is the number of slots, in [1, Size].
	Count int
	// Value is the consolidated value, NaN when unknown.
	Value float64
}

// retainPending is the capacity of pending updates a DS keeps after
// ClosedSlots, so that a steady stream reuses its buffer while a burst
// does not pin memory in each of many series.
const retainPending = 8

// Pending returns the number of updates waiting for ClosedSlots.
func (d *DS) Pending() int { return len(d.pending) }

// PendingCap returns the number of updates the DS has room for without
// allocating, what its pending buffer holds in memory (40 bytes each).
func (d *DS) PendingCap() int { return cap(d.pending) }

// ClosedSlots appends the pending updates to dst, returns it, and clears
// them; the caller must persist them. Within an archive the updates are in
// time order and no two name the same slot, so they may be written in one
// batch; updates a newer one overwrites (a ring lap later) are dropped.
// Call it regularly: the DS keeps pending updates until then, at most
// twice as many as its rings have slots. In Graphite consolidation the
// updates are the slots written since the last call (each slot once,
// with its latest value), in the order they were written, and not
// bounded: a caller writing them in order gets last-write-wins.
//
// When dst is empty the DS hands over its own buffer (and starts a new
// one at its next update), so that taking the updates never needs more
// memory than they already hold.
func (d *DS) ClosedSlots(dst []Update) []Update {
	if d.schema.graphite {
		d.dedupG()
	} else {
		d.trim()
	}
	if len(dst) == 0 {
		out := d.pending
		d.pending = nil
		return out
	}
	return d.appendPending(dst)
}

// AppendClosedSlots is ClosedSlots that always copies: it appends the
// pending updates to dst and keeps the DS's buffer (up to retainPending
// updates) for the next ones. A caller taking the updates of many series
// into a few large buffers then allocates nothing per series while they
// keep sending; ReleasePending frees the buffer of a series that stopped.
func (d *DS) AppendClosedSlots(dst []Update) []Update {
	if d.schema.graphite {
		d.dedupG()
	} else {
		d.trim()
	}
	return d.appendPending(dst)
}

// appendPending appends the pending updates to dst and clears them,
// keeping a buffer of at most retainPending updates.
func (d *DS) appendPending(dst []Update) []Update {
	dst = append(dst, d.pending...)
	if cap(d.pending) > retainPending {
		d.pending = nil
	} else {
		d.pending = d.pending[:0]
	}
	return dst
}

// ReleasePending frees the DS's buffer of pending updates when none is
// pending (PendingCap is then 0); the next update allocates one again.
func (d *DS) ReleasePending() {
	if len(d.pending) == 0 {
		d.pending = nil
	}
}

// emit adds a run of n slots of archive i, the first ending at t, with
// value v to the pending updates. A run longer than the ring keeps only
// its last Size slots; a run continuing the archive's latest update with
// the same value extends it.
func (d *DS) emit(i int, t, n int64, v float64) {
	a := &d.schema.arch[i]
	if n > a.size {
		t += (n - a.size) * a.step
		n = a.size
	}
	// The archive's latest update is among the last few: every PDP
	// boundary emits at most two per archive.
	for j := len(d.pending) - 1; j >= 0 && j >= len(d.pending)-2*len(d.acc); j-- {
		u := &d.pending[j]
		if u.Archive != i {
			continue
		}
		if u.Time+int64(u.Count)*a.step == t && int64(u.Count)+n <= a.size && sameFloat(u.Value, v) {
			u.Count += int(n)
			return
		}
		break
	}
	if len(d.pending) >= 2*(d.schema.slots+len(d.acc)) {
		d.trim() // amortised: it leaves at most schema.slots updates
	}
	d.pending = append(d.pending, Update{
		Archive: i,
		Slot:    int(floorMod(t/a.step, a.size)),
		Time:    t,
		Count:   int(n),
		Value:   v,
	})
}

// trim drops the oldest pending slots of every archive with more pending
// slots than its ring holds: newer ones overwrite them. Afterwards the
// pending updates of an archive cover at most Size consecutive slots.
func (d *DS) trim() {
	total := 0
	for _, u := range d.pending {
		total += u.Count
	}
	if total <= d.schema.minSize {
		return // the common case: no archive can have too many
	}
	var excess [MaxArchives]int64
	for _, u := range d.pending {
		excess[u.Archive] += int64(u.Count)
	}
	over := false
	for i := range d.acc {
		excess[i] -= d.schema.arch[i].size
		over = over || excess[i] > 0
	}
	if !over {
		return
	}
	out := d.pending[:0]
	for _, u := range d.pending {
		if x := excess[u.Archive]; x > 0 {
			if int64(u.Count) <= x {
				excess[u.Archive] -= int64(u.Count)
				continue
			}
			a := &d.schema.arch[u.Archive]
			u.Time += x * a.step
			u.Slot = int((int64(u.Slot) + x) % a.size)
			u.Count -= int(x)
			excess[u.Archive] = 0
		}
		out = append(out, u)
	}
	clear(d.pending[len(out):])
	d.pending = out
}

// sameFloat reports whether a and b are the same value, NaN included.
func sameFloat(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (a != a && b != b)
}
