package rra

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"
	"time"
)

// hour0 is an hour boundary (Unix seconds) the Graphite tests start at.
const hour0 = 1_700_002_800

// gstore applies a Graphite DS's updates to a map, as the store's rings
// would hold them: (archive, slot time in seconds) → value.
type gstore map[[2]int64]float64

// take applies d's pending updates and answers its recompute requests
// from the map, as the store does from the database, until none is left.
func (g gstore) take(t testing.TB, d *DS) {
	t.Helper()
	for round := 0; d.Pending() > 0; round++ {
		if round > 10 {
			t.Fatal("recompute requests do not end")
		}
		for _, u := range d.ClosedSlots(nil) {
			if u.Count == 0 {
				arch, start, n := d.Schema().RecomputeSpan(u)
				step := d.Schema().Archive(arch).Step.Microseconds()
				kids := make([]float64, n)
				for i := range kids {
					v, ok := g[[2]int64{int64(arch), (start + int64(i)*step) / 1e6}]
					if !ok {
						v = nan
					}
					kids[i] = v
				}
				d.Recompute(u, kids)
				continue
			}
			checkUpdate(t, d.Schema(), u)
			g[[2]int64{int64(u.Archive), u.Time / 1e6}] = u.Value
		}
	}
}

// put adds (t, v) at the clock now, both in seconds, failing on an error.
func put(t testing.TB, d *DS, at, v, now float64) {
	t.Helper()
	if err := d.Put(us(at), v, us(now)); err != nil {
		t.Fatalf("Put(%v, %v, now %v): %v", at, v, now, err)
	}
}

func graphiteSchema(t testing.TB, agg string, specs ...string) *Schema {
	t.Helper()
	r, err := ParseRule(RuleConfig{Regexp: ".", Step: "10s", Aggregation: agg, RRAs: specs})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := r.Schema()
	return sc
}

func (g gstore) want(t *testing.T, arch int, at int64, v float64) {
	t.Helper()
	got, ok := g[[2]int64{int64(arch), at}]
	if math.IsNaN(v) {
		if ok && !math.IsNaN(got) {
			t.Errorf("archive %d slot %d = %v, want none", arch, at, got)
		}
		return
	}
	if !ok || !near(got, v) {
		t.Errorf("archive %d slot %d = %v (set %v), want %v", arch, at, got, ok, v)
	}
}

// Defects 1, 2 and 3 of the Graphite comparison: a point at t is stored,
// the first one included, in the slot starting at floor(t/step)*step,
// labelled with that start, and a series slower than the step keeps one
// value per point (no heartbeat).
func TestGraphiteSlotsAndNoHeartbeat(t *testing.T) {
	d := NewDS(graphiteSchema(t, "", "10s:6h", "1m:7d", "1h:1y"))
	g := gstore{}
	put(t, d, hour0+17, 5, hour0+20) // the first point
	g.take(t, d)
	g.want(t, 0, hour0+10, 5)
	g.want(t, 0, hour0+20, nan)
	// One of six 10 s slots known: under xff 0.5, no minute value.
	g.want(t, 1, hour0, nan)
	// Every 60 s, for 10 minutes: one 10 s value a minute, never a
	// minute value (1/6 known), as whisper stores it.
	for i := 1; i <= 10; i++ {
		at := float64(hour0 + 60*i)
		put(t, d, at, float64(i), at)
	}
	g.take(t, d)
	for i := 1; i <= 10; i++ {
		g.want(t, 0, int64(hour0+60*i), float64(i))
		g.want(t, 0, int64(hour0+60*i+10), nan)
		g.want(t, 1, int64(hour0+60*i), nan)
	}
}

// Propagation: coarser archives aggregate the next finer one with the
// rule's aggregation when at least xff of its slots are known.
func TestGraphitePropagation(t *testing.T) {
	for _, c := range []struct {
		agg  string
		want float64 // of 1, 2, 3 in three of six slots
	}{{"average", 2}, {"", 2}, {"sum", 6}, {"min", 1}, {"max", 3}, {"last", 3}} {
		d := NewDS(graphiteSchema(t, c.agg, "10s:6h", "1m:7d", "1h:1y"))
		g := gstore{}
		put(t, d, hour0+0, 1, hour0+60)
		put(t, d, hour0+21, 3, hour0+60) // out of order within the minute
		g.take(t, d)
		g.want(t, 1, hour0, nan) // 2 of 6: under 0.5
		put(t, d, hour0+12, 2, hour0+60)
		g.take(t, d)
		g.want(t, 1, hour0, c.want) // 3 of 6: xff met
		// The hour: 1 of 60 minutes is known, under xff 0.5.
		g.want(t, 2, hour0, nan)
	}
	// The hour archive aggregates the minute archive, not the 10 s one.
	d := NewDS(graphiteSchema(t, "", "10s:6h", "1m:7d", "1h:1y:0"))
	g := gstore{}
	for m := range 2 {
		for s := range 6 {
			if m == 1 && s > 2 {
				break
			}
			at := float64(hour0 + 60*m + 10*s)
			put(t, d, at, float64(10*m+s), at)
		}
	}
	g.take(t, d)
	g.want(t, 1, hour0, 2.5)   // mean of 0..5
	g.want(t, 1, hour0+60, 11) // mean of 10, 11, 12
	g.want(t, 2, hour0, 6.75)  // mean of the two minutes
}

// Defect 4: late and duplicate points are stored in their slot, the last
// value written wins, and the coarser archives follow.
func TestGraphiteLateAndDuplicate(t *testing.T) {
	d := NewDS(graphiteSchema(t, "", "10s:6h", "1m:7d", "1h:1y"))
	g := gstore{}
	for s := range 6 {
		at := float64(hour0 + 10*s)
		put(t, d, at, 1, at)
	}
	put(t, d, hour0+30, 7, hour0+55) // duplicate time: last wins
	put(t, d, hour0+3, 4, hour0+55)  // late, same slot as hour0
	g.take(t, d)
	g.want(t, 0, hour0+30, 7)
	g.want(t, 0, hour0, 4)
	g.want(t, 1, hour0, (4+1+1+7+1+1)/6.0)
	// Older than the latest minute: its own slot is written, and the
	// minute is recomputed from the stored 10 s slots, then the hour.
	put(t, d, hour0+70, 2, hour0+80)
	err := d.Put(us(hour0+40), 9, us(hour0+80))
	if !errors.Is(err, ErrBeyondMemory) {
		t.Errorf("late point beyond the latest minute: %v, want ErrBeyondMemory", err)
	}
	g.take(t, d)
	g.want(t, 0, hour0+40, 9)
	g.want(t, 1, hour0, (4+1+1+7+9+1)/6.0)
	// Whole-hour check with xff 0: the hour follows the recomputed minute.
	d2 := NewDS(graphiteSchema(t, "", "10s:6h", "1m:7d:0", "1h:1y:0"))
	g2 := gstore{}
	put(t, d2, hour0, 6, hour0)
	put(t, d2, hour0+60, 3, hour0+60)
	g2.take(t, d2)
	g2.want(t, 2, hour0, 4.5)
	if err := d2.Put(us(hour0+10), 12, us(hour0+61)); !errors.Is(err, ErrBeyondMemory) { // the first minute becomes 9
		t.Fatal(err)
	}
	g2.take(t, d2)
	g2.want(t, 1, hour0, 9)
	g2.want(t, 2, hour0, 6)
	// Older than the 10 s archive's span: written to the minute archive,
	// as whisper's update_many does; older than every span: refused.
	now := float64(hour0 + 7*3600)
	put(t, d, hour0+65, 3, now)
	g.take(t, d)
	g.want(t, 1, hour0+60, 3)
	if err := d.Put(us(hour0-2*366*86400), 1, us(now)); !errors.Is(err, ErrTooOld) {
		t.Errorf("point older than every span: %v, want ErrTooOld", err)
	}
}

func TestGraphiteStateRoundTrip(t *testing.T) {
	sc := graphiteSchema(t, "max", "10s:6h", "1m:7d", "1h:1y")
	d := NewDS(sc)
	g := gstore{}
	put(t, d, hour0+5, 1, hour0+5)
	put(t, d, hour0+15, 3, hour0+15)
	// The store writes the updates in the flush that saves the state.
	g.take(t, d)
	b, err := d.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	e := NewDS(sc)
	if err := e.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if e.Pending() != d.Pending() {
		t.Errorf("pending %d, want %d", e.Pending(), d.Pending())
	}
	put(t, e, hour0+25, 2, hour0+25)
	g.take(t, e)
	g.want(t, 1, hour0, 3) // 3 of 6 known: max of 1, 3, 2
	g.want(t, 2, hour0, nan)
	// The state holds no finer values: it stays small however many there
	// are.
	if want := len(mustMarshal(t, NewDS(sc))) + 16; len(b) > want {
		t.Errorf("state of %d bytes, want at most %d", len(b), want)
	}
	// RRD state is refused by a Graphite DS and the other way round.
	rrd := NewDS(mustSchema(t, 10*time.Second, 20*time.Second, "10s:6h"))
	if err := NewDS(sc).UnmarshalBinary(mustMarshal(t, rrd)); !errors.Is(err, ErrSchemaMismatch) {
		t.Errorf("RRD state into a Graphite DS: %v", err)
	}
	if err := rrd.UnmarshalBinary(b); !errors.Is(err, ErrSchemaMismatch) {
		t.Errorf("Graphite state into an RRD DS: %v", err)
	}
	for n := range len(b) {
		if err := NewDS(sc).UnmarshalBinary(b[:n]); err == nil {
			t.Errorf("state cut to %d bytes accepted", n)
		}
	}
}

// A restored DS reads the finer values of its latest slots from the
// store, and keeps over them those written since the restore: the answer
// to a recompute request may predate a point that came meanwhile.
func TestGraphiteRestoredKeepsNewerValues(t *testing.T) {
	for _, agg := range []string{"max", "average", "last"} {
		t.Run(agg, func(t *testing.T) {
			sc := graphiteSchema(t, agg, "10s:6h", "1m:7d", "1h:1y")
			d, g := NewDS(sc), gstore{}
			put(t, d, hour0+5, 1, hour0+5)
			put(t, d, hour0+15, 3, hour0+15)
			g.take(t, d)
			e := NewDS(sc)
			if err := e.UnmarshalBinary(mustMarshal(t, d)); err != nil {
				t.Fatal(err)
			}
			put(t, e, hour0+25, 2, hour0+25)
			var reqs []Update
			for _, u := range e.ClosedSlots(nil) {
				if u.Count == 0 {
					reqs = append(reqs, u)
					continue
				}
				g[[2]int64{int64(u.Archive), u.Time / 1e6}] = u.Value
			}
			if len(reqs) != 1 || reqs[0].Archive != 1 || reqs[0].Time != us(hour0) {
				t.Fatalf("requests %+v, want one for archive 1 at the hour", reqs)
			}
			// Meanwhile the second 10 s slot is overwritten, before the
			// store holds it: the answer has its old value.
			put(t, e, hour0+15, 7, hour0+26)
			kids := make([]float64, 6)
			for i := range kids {
				v, ok := g[[2]int64{0, hour0 + 10*int64(i)}]
				if !ok {
					v = nan
				}
				kids[i] = v
			}
			e.Recompute(reqs[0], kids)
			g.take(t, e)
			want := map[string]float64{"max": 7, "average": 10.0 / 3, "last": 2}[agg]
			g.want(t, 0, hour0+10, 7)
			g.want(t, 1, hour0, want)
			// From now on the DS keeps the finer values in memory.
			put(t, e, hour0+35, 9, hour0+35)
			for _, u := range e.ClosedSlots(nil) {
				if u.Count == 0 {
					t.Fatalf("request %+v after the kids were read", u)
				}
			}
		})
	}
}

func mustMarshal(t testing.TB, d *DS) []byte {
	t.Helper()
	b, err := d.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGraphiteTakenUpdatesOneAllocation: in Graphite consolidation a
// point updates a slot of every archive, and ClosedSlots hands the
// pending buffer over; the next point's updates then take one
// allocation, not one per doubling (a daemon pays it for every series at
// every flush).
func TestGraphiteTakenUpdatesOneAllocation(t *testing.T) {
	d := NewDS(graphiteSchema(t, "average", "10s:6h", "1m:7d", "1h:1y"))
	at := 1_700_002_800.0 // an hour's start
	for range 36 * 6 {    // enough known minutes for the hour (xff 0.5)
		put(t, d, at, 1, at)
		at += 10
	}
	d.ClosedSlots(nil)
	at -= 10 // the latest slot, in a minute of six known slots
	n := 0
	step := func() {
		put(t, d, at+float64(n%10), float64(n), at+float64(n%10))
		if ups := d.ClosedSlots(nil); len(ups) < 3 {
			t.Fatalf("a point at %v made %d updates, want one an archive", at, len(ups))
		}
		n++
	}
	if a := testing.AllocsPerRun(1000, step); a > 1 {
		t.Errorf("%v allocations to take the updates of a point", a)
	}
}

// TestGraphiteRestoredKnowsPassedSlots (issue 27): a DS restored from
// its state knows the latest slot of each coarser archive. A point into
// an earlier minute asks for that minute's finer values, and a point
// into the latest minute then still asks for its finer values, which the
// store holds from before the restore: the minute is the mean of every
// 10 s value stored, as whisper has it, not of those sent since.
func TestGraphiteRestoredKnowsPassedSlots(t *testing.T) {
	sc := graphiteSchema(t, "average", "10s:6h", "1m:7d", "1h:1y")
	d, g := NewDS(sc), gstore{}
	for _, p := range [][2]float64{{hour0, 1}, {hour0 + 10, 2}, {hour0 + 60, 3}, {hour0 + 70, 5}} {
		put(t, d, p[0], p[1], p[0])
	}
	g.take(t, d)
	e := NewDS(sc)
	if err := e.UnmarshalBinary(mustMarshal(t, d)); err != nil {
		t.Fatal(err)
	}
	// Back into the first minute, which the DS had passed.
	if err := e.Put(us(hour0+20), 4, us(hour0+75)); err != nil && !errors.Is(err, ErrBeyondMemory) {
		t.Fatal(err)
	}
	var reqs []Update
	for _, u := range e.ClosedSlots(nil) {
		if u.Count == 0 {
			reqs = append(reqs, u)
			continue
		}
		g[[2]int64{int64(u.Archive), u.Time / 1e6}] = u.Value
	}
	if len(reqs) != 1 || reqs[0].Archive != 1 || reqs[0].Time != us(hour0) {
		t.Fatalf("requests %+v, want one for archive 1 at the first minute", reqs)
	}
	kids := make([]float64, 6)
	for i := range kids {
		v, ok := g[[2]int64{0, hour0 + 10*int64(i)}]
		if !ok {
			v = nan
		}
		kids[i] = v
	}
	e.Recompute(reqs[0], kids)
	g.take(t, e)
	g.want(t, 1, hour0, (1+2+4)/3.0)
	// Into the latest minute, a 10 s slot not written before.
	if err := e.Put(us(hour0+80), 9, us(hour0+80)); err != nil && !errors.Is(err, ErrBeyondMemory) {
		t.Fatal(err)
	}
	g.take(t, e)
	g.want(t, 1, hour0+60, (3+5+9)/3.0)
	// From now on the DS keeps the latest minute's finer values.
	put(t, e, hour0+90, 11, hour0+90)
	for _, u := range e.ClosedSlots(nil) {
		if u.Count == 0 {
			t.Fatalf("request %+v after the latest minute's finer values were read", u)
		}
		g[[2]int64{int64(u.Archive), u.Time / 1e6}] = u.Value
	}
	g.want(t, 1, hour0+60, (3+5+9+11)/4.0)
}

// TestGraphiteLatestSlotChecked: the latest slot a state holds for an
// archive is refused unless it is the start of a slot no later than the
// newest point's, and 0 (an older encoder's) restores it unknown.
func TestGraphiteLatestSlotChecked(t *testing.T) {
	sc := graphiteSchema(t, "average", "10s:6h", "1m:7d", "1h:1y")
	d := NewDS(sc)
	put(t, d, hour0+65, 1, hour0+65)
	b := mustMarshal(t, d)
	const at = 1 + 1 + 8 + 1 + 3*(1+8+4) + 8 + 8 + 8 + 4 // archive 1's latest slot
	if got := int64(binary.LittleEndian.Uint64(b[at:])); got != us(hour0+60) {
		t.Fatalf("archive 1's latest slot saved as %d, want %d", got, us(hour0+60))
	}
	for _, c := range []struct {
		cur  int64
		fail bool
	}{{us(hour0 + 60), false}, {0, false}, {us(hour0), false}, {us(hour0 + 61), true}, {us(hour0 + 120), true}} {
		bad := bytes.Clone(b)
		binary.LittleEndian.PutUint64(bad[at:], uint64(c.cur))
		err := NewDS(sc).UnmarshalBinary(bad)
		if c.fail != (err != nil) || (err != nil && !errors.Is(err, ErrCorrupt)) {
			t.Errorf("latest slot %d: %v, want failure %v", c.cur, err, c.fail)
		}
	}
}
