package rra

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// us converts seconds to micros.
func us(sec float64) int64 { return int64(math.Round(sec * 1e6)) }

var nan = math.NaN()

// pt is a point in seconds.
type pt struct {
	t float64
	v float64
}

// slot is one persisted slot: archive, time in seconds, ring index, value.
type slot struct {
	arch int
	t    float64
	idx  int
	v    float64
}

func (x slot) String() string { return fmt.Sprintf("a%d@%gs[%d]=%v", x.arch, x.t, x.idx, x.v) }

// mustSchema builds a schema from a DS step, heartbeat and spec strings.
func mustSchema(t testing.TB, step, hb time.Duration, specs ...string) *Schema {
	t.Helper()
	as := make([]ArchiveSpec, len(specs))
	for i, sp := range specs {
		a, err := ParseArchiveSpec(sp)
		if err != nil {
			t.Fatal(err)
		}
		as[i] = a
	}
	sc, err := NewSchema(step, hb, as)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// feed adds the points to d, failing on any rejection, and returns the
// slots of the updates they produced, expanded, in order.
func feed(t testing.TB, d *DS, pts ...pt) []slot {
	t.Helper()
	for _, p := range pts {
		if err := d.AddPoint(us(p.t), p.v); err != nil {
			t.Fatalf("AddPoint(%v, %v): %v", p.t, p.v, err)
		}
	}
	return drain(t, d)
}

// drain takes d's pending updates, checks them and expands them.
func drain(t testing.TB, d *DS) []slot {
	t.Helper()
	var out []slot
	for _, u := range d.ClosedSlots(nil) {
		checkUpdate(t, d.Schema(), u)
		for idx, tm := range d.Schema().Slots(u) {
			out = append(out, slot{u.Archive, float64(tm) / 1e6, idx, u.Value})
		}
	}
	return out
}

// checkUpdate checks the invariants of one update.
func checkUpdate(t testing.TB, sc *Schema, u Update) {
	t.Helper()
	if u.Archive < 0 || u.Archive >= sc.NumArchives() {
		t.Fatalf("update %+v: archive out of range", u)
	}
	a := sc.Archive(u.Archive)
	step := a.Step.Microseconds()
	if floorMod(u.Time, step) != 0 {
		t.Fatalf("update %+v: time not aligned to step %v", u, a.Step)
	}
	if u.Count < 1 || u.Count > a.Size {
		t.Fatalf("update %+v: count outside [1, %d]", u, a.Size)
	}
	if u.Slot != a.SlotIndex(u.Time) {
		t.Fatalf("update %+v: slot %d, want %d", u, u.Slot, a.SlotIndex(u.Time))
	}
	if math.IsInf(u.Value, 0) {
		t.Fatalf("update %+v: infinite value", u)
	}
}

// sameSlots compares slot lists, values equal to 1e-12 relative, NaN
// equal to NaN.
func sameSlots(got, want []slot) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.arch != w.arch || g.t != w.t || g.idx != w.idx || !near(g.v, w.v) {
			return false
		}
	}
	return true
}

func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b || math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b))
}

func fmtSlots(ss []slot) string {
	var b strings.Builder
	for i, x := range ss {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(x.String())
	}
	return b.String()
}
