package rra

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"
)

const maxF = math.MaxFloat64

func TestConsolidationGolden(t *testing.T) {
	type tc struct {
		name  string
		step  time.Duration
		hb    time.Duration
		specs []string
		pts   []pt
		want  []slot // sorted by archive, then time
	}
	sec := time.Second
	cases := []tc{
		{
			name: "worked example: 1 for 2.5s, 3 for 5s, 2 for 2.5s",
			step: 10 * sec, hb: time.Minute, specs: []string{"10s:1h"},
			pts:  []pt{{0, 0}, {2.5, 1}, {7.5, 3}, {10, 2}},
			want: []slot{{0, 10, 1, 2.25}},
		},
		{
			name: "worked example with a NaN point: half unknown is within xff 0.5",
			step: 10 * sec, hb: time.Minute, specs: []string{"10s:1h"},
			pts:  []pt{{0, 0}, {2.5, 1}, {7.5, nan}, {10, 2}},
			want: []slot{{0, 10, 1, 1.5}},
		},
		{
			name: "worked example with a NaN point: half unknown exceeds xff 0.4",
			step: 10 * sec, hb: time.Minute, specs: []string{"10s:1h:0.4"},
			pts:  []pt{{0, 0}, {2.5, 1}, {7.5, nan}, {10, 2}},
			want: []slot{{0, 10, 1, nan}},
		},
		{
			name: "coarse slot exactly half unknown: kept at xff 0.5, NaN at 0.49",
			step: 10 * sec, hb: time.Minute, specs: []string{"20s:1h", "max:20s:1h:0.49"},
			pts:  []pt{{0, 0}, {10, 4}, {20, nan}, {30, 1}, {40, 3}},
			want: []slot{{0, 20, 1, 4}, {0, 40, 2, 2}, {1, 20, 1, nan}, {1, 40, 2, 3}},
		},
		{
			name: "points exactly on step boundaries",
			step: 10 * sec, hb: time.Minute, specs: []string{"10s:1h", "30s:1h"},
			pts: []pt{{0, 9}, {10, 1}, {20, 2}, {30, 3}, {40, 4}},
			want: []slot{
				{0, 10, 1, 1}, {0, 20, 2, 2}, {0, 30, 3, 3}, {0, 40, 4, 4},
				{1, 30, 1, 2},
			},
		},
		{
			name: "gap over the heartbeat: unknown PDPs, xff decides the coarse slots",
			step: 10 * sec, hb: 20 * sec, specs: []string{"10s:1h", "30s:1h", "max:30s:1h:0.3"},
			pts: []pt{{0, 1}, {10, 5}, {20, 5}, {60, 7}, {70, 7}},
			want: []slot{
				{0, 10, 1, 5}, {0, 20, 2, 5}, {0, 30, 3, nan}, {0, 40, 4, nan}, {0, 50, 5, nan}, {0, 60, 6, nan}, {0, 70, 7, 7},
				{1, 30, 1, 5}, {1, 60, 2, nan}, // 1/3 unknown <= 0.5
				{2, 30, 1, nan}, {2, 60, 2, nan}, // 1/3 unknown > 0.3
			},
		},
		{
			name: "gap under the heartbeat spanning several steps",
			step: 10 * sec, hb: time.Minute, specs: []string{"10s:1h", "30s:1h", "last:10s:1h:0.4"},
			pts: []pt{{5, 0}, {45, 4}, {60, 6}},
			want: []slot{
				{0, 10, 1, 4}, {0, 20, 2, 4}, {0, 30, 3, 4}, {0, 40, 4, 4}, {0, 50, 5, 5}, {0, 60, 6, 6},
				{1, 30, 1, 4}, {1, 60, 2, 5},
				{2, 10, 1, nan}, {2, 20, 2, 4}, {2, 30, 3, 4}, {2, 40, 4, 4}, {2, 50, 5, 5}, {2, 60, 6, 6},
			},
		},
		{
			name: "min, max, last and wmean over the same PDPs; last skips an unknown PDP",
			step: 10 * sec, hb: time.Minute, specs: []string{"min:30s:1h", "max:30s:1h", "last:30s:1h", "30s:1h"},
			pts: []pt{{0, 0}, {10, 3}, {20, 1}, {30, 2}, {40, 5}, {50, 4}, {60, nan}},
			want: []slot{
				{0, 30, 1, 1}, {0, 60, 2, 4},
				{1, 30, 1, 3}, {1, 60, 2, 5},
				{2, 30, 1, 2}, {2, 60, 2, 4},
				{3, 30, 1, 2}, {3, 60, 2, 4.5},
			},
		},
		{
			name: "very large values: no overflow, constants exact",
			step: 10 * sec, hb: time.Minute, specs: []string{"10s:1h", "30s:1h"},
			pts: []pt{{0, 0}, {5, maxF}, {10, maxF}, {20, -maxF}, {25, maxF}, {30, -maxF}},
			want: []slot{
				{0, 10, 1, maxF}, {0, 20, 2, -maxF}, {0, 30, 3, 0},
				{1, 30, 1, 0},
			},
		},
		{
			name: "times before 1970 and negative values",
			step: 10 * sec, hb: time.Minute, specs: []string{"10s:1h", "1m:1h"},
			pts: []pt{{-95, -1}, {-85, -2}, {-75, -3}, {-60, -4}},
			want: []slot{
				{0, -90, 351, -2}, {0, -80, 352, -2.5}, {0, -70, 353, -3.5}, {0, -60, 354, -4},
				{1, -60, 59, -110.0 / 35}, // 35 s known of 60
			},
		},
		{
			name: "heartbeat under the step: a PDP with more unknown time than the heartbeat is NaN",
			step: time.Minute, hb: 20 * sec, specs: []string{"1m:1h:0.9"},
			pts:  []pt{{0, 0}, {10, 1}, {20, 1}, {60, 1}, {70, 1}, {80, 1}, {90, 1}, {100, nan}, {110, 2}, {120, 2}},
			want: []slot{{0, 60, 1, nan}, {0, 120, 2, 1.4}},
		},
		{
			name: "time before the first point is unknown: 40 s of 60 unknown",
			step: 10 * sec, hb: time.Minute, specs: []string{"1m:1h"},
			pts:  []pt{{40, 1}, {50, 1}, {60, 1}},
			want: []slot{{0, 60, 1, nan}},
		},
		{
			name: "time before the first point is unknown: 20 s of 60 unknown",
			step: 10 * sec, hb: time.Minute, specs: []string{"1m:1h"},
			pts:  []pt{{20, 1}, {30, 1}, {40, 1}, {50, 1}, {60, 1}},
			want: []slot{{0, 60, 1, 1}},
		},
		{
			name: "the package doc picture: PDPs 2.25, 4 and NaN make 3.125",
			step: 10 * sec, hb: time.Minute, specs: []string{"30s:1h"},
			pts:  []pt{{0, 0}, {2.5, 1}, {7.5, 3}, {10, 2}, {20, 4}, {30, nan}},
			want: []slot{{0, 30, 1, 3.125}},
		},
		{
			name: "ring wrap-around: only the last lap is kept",
			step: 10 * sec, hb: time.Hour, specs: []string{"10s:30s"},
			pts:  []pt{{0, 0}, {10, 1}, {20, 2}, {30, 3}, {40, 4}, {50, 5}, {200, 7}},
			want: []slot{{0, 180, 0, 7}, {0, 190, 1, 7}, {0, 200, 2, 7}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := NewDS(mustSchema(t, c.step, c.hb, c.specs...))
			got := feed(t, d, c.pts...)
			slices.SortStableFunc(got, func(a, b slot) int {
				if a.arch != b.arch {
					return a.arch - b.arch
				}
				return int(a.t - b.t)
			})
			if !sameSlots(got, c.want) {
				t.Errorf("got  %s\nwant %s", fmtSlots(got), fmtSlots(c.want))
			}
		})
	}
}

// TestWrapAround drains after every point and sees the ring indices wrap.
func TestWrapAround(t *testing.T) {
	d := NewDS(mustSchema(t, 10*time.Second, time.Minute, "10s:30s"))
	feed(t, d, pt{0, 0})
	var got []slot
	for i := 1; i <= 7; i++ {
		got = append(got, feed(t, d, pt{float64(10 * i), float64(i)})...)
	}
	want := []slot{{0, 10, 1, 1}, {0, 20, 2, 2}, {0, 30, 0, 3}, {0, 40, 1, 4}, {0, 50, 2, 5}, {0, 60, 0, 6}, {0, 70, 1, 7}}
	if !sameSlots(got, want) {
		t.Errorf("got  %s\nwant %s", fmtSlots(got), fmtSlots(want))
	}
}

// TestRuns checks how updates are grouped: a long known gap is one run,
// which an equal neighbour extends; different values stay apart.
func TestRuns(t *testing.T) {
	d := NewDS(mustSchema(t, 10*time.Second, time.Hour, "10s:1h", "1m:1d"))
	for _, p := range []pt{{0, 0}, {10, 3}, {600, 3}, {610, 4}} {
		if err := d.AddPoint(us(p.t), p.v); err != nil {
			t.Fatal(err)
		}
	}
	got := d.ClosedSlots(nil)
	want := []Update{
		{Archive: 0, Slot: 1, Time: us(10), Count: 60, Value: 3}, // 10..600, extended by the run
		{Archive: 1, Slot: 1, Time: us(60), Count: 10, Value: 3}, // 60..600
		{Archive: 0, Slot: 61, Time: us(610), Count: 1, Value: 4},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if d.Pending() != 0 {
		t.Errorf("Pending() = %d after ClosedSlots", d.Pending())
	}
}

func TestRejections(t *testing.T) {
	d := NewDS(mustSchema(t, 10*time.Second, time.Minute, "10s:1h"))
	feed(t, d, pt{100, 1}, pt{105, 2})
	before, err := d.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		t    int64
		v    float64
		want error
	}{
		{us(104), 1, ErrOutOfOrder},
		{us(-1000), 1, ErrOutOfOrder},
		{us(105), 3, ErrDuplicate},
		{MaxTime, 1, ErrTime},
		{MinTime - 1, 1, ErrTime},
		{math.MinInt64, 1, ErrTime},
		{us(110), math.Inf(1), ErrValue},
		{us(110), math.Inf(-1), ErrValue},
	}
	for _, c := range cases {
		err := d.AddPoint(c.t, c.v)
		if !errors.Is(err, c.want) {
			t.Errorf("AddPoint(%d, %v) = %v, want %v", c.t, c.v, err, c.want)
			continue
		}
		var pe *PointError
		if !errors.As(err, &pe) || pe.Time != c.t || pe.LastUpdate != us(105) {
			t.Errorf("AddPoint(%d, %v) = %#v, want a *PointError with the point and last update", c.t, c.v, err)
		}
		t.Log(err)
	}
	after, err := d.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, after) {
		t.Error("a rejected point changed the DS")
	}
	// The DS goes on as if the rejected points never came.
	if got, want := feed(t, d, pt{110, 4}), []slot{{0, 110, 11, 3}}; !sameSlots(got, want) {
		t.Errorf("got %s, want %s", fmtSlots(got), fmtSlots(want))
	}
	// A first point can be rejected too.
	if err := NewDS(d.Schema()).AddPoint(0, math.Inf(1)); !errors.Is(err, ErrValue) {
		t.Errorf("first point +Inf: %v, want ErrValue", err)
	}
}

func TestAdvance(t *testing.T) {
	d := NewDS(mustSchema(t, 10*time.Second, 30*time.Second, "10s:1h"))
	d.Advance(us(1000)) // before the first point: nothing
	if _, ok := d.LastUpdate(); ok {
		t.Fatal("Advance started a DS without points")
	}
	feed(t, d, pt{0, 0}, pt{10, 1})
	d.Advance(us(40)) // 30 s after the last point: a point could still come
	d.Advance(us(5))  // the past: nothing
	if got := drain(t, d); len(got) != 0 {
		t.Fatalf("Advance within the heartbeat closed %s", fmtSlots(got))
	}
	d.Advance(us(45)) // 35 s: (10, 45] is unknown whatever comes next
	if got, want := drain(t, d), []slot{{0, 20, 2, nan}, {0, 30, 3, nan}, {0, 40, 4, nan}}; !sameSlots(got, want) {
		t.Errorf("got %s, want %s", fmtSlots(got), fmtSlots(want))
	}
	if lu, _ := d.LastUpdate(); lu != us(45) {
		t.Errorf("LastUpdate() = %d, want %d", lu, us(45))
	}
	if err := d.AddPoint(us(42), 1); !errors.Is(err, ErrOutOfOrder) {
		t.Errorf("point before the advanced time: %v, want ErrOutOfOrder", err)
	}
	// The next point's heartbeat counts from the last point (10 s), so
	// (45, 50] stays unknown as RRDtool would have it.
	if got, want := feed(t, d, pt{50, 2}, pt{60, 3}), []slot{{0, 50, 5, nan}, {0, 60, 6, 3}}; !sameSlots(got, want) {
		t.Errorf("got %s, want %s", fmtSlots(got), fmtSlots(want))
	}
	d.Advance(math.MaxInt64) // clamped; a 1,000-year gap costs one run
	if got := drain(t, d); len(got) != 360 {
		t.Errorf("Advance to the end of time wrote %d slots, want one lap of 360", len(got))
	}
}

// TestDuplicateAfterAdvance: a point at the advanced time is not a
// duplicate of the last point, and its interval is empty.
func TestPointAtAdvancedTime(t *testing.T) {
	d := NewDS(mustSchema(t, 10*time.Second, 10*time.Second, "10s:1h"))
	feed(t, d, pt{0, 0}, pt{10, 1})
	d.Advance(us(25))
	drain(t, d)
	if got := feed(t, d, pt{25, 5}, pt{30, 6}); !sameSlots(got, []slot{{0, 30, 3, 6}}) {
		t.Errorf("got %s, want a0@30s = 6 (5 s known)", fmtSlots(got))
	}
}

// TestPendingBound: a caller that never drains holds at most two laps of
// each ring, and ClosedSlots returns one lap with distinct slots.
func TestPendingBound(t *testing.T) {
	sc := mustSchema(t, time.Second, time.Minute, "1s:10s", "2s:20s")
	d := NewDS(sc)
	for i := range 1000 {
		if err := d.AddPoint(us(float64(i)), float64(i%7)); err != nil {
			t.Fatal(err)
		}
		if d.Pending() > 2*(sc.slots+2) {
			t.Fatalf("after %d points, %d pending updates", i, d.Pending())
		}
	}
	seen := map[[2]int]bool{}
	total := [2]int{}
	for _, u := range d.ClosedSlots(nil) {
		checkUpdate(t, sc, u)
		total[u.Archive] += u.Count
		for idx := range sc.Slots(u) {
			k := [2]int{u.Archive, idx}
			if seen[k] {
				t.Fatalf("slot %v named twice", k)
			}
			seen[k] = true
		}
	}
	if total != [2]int{10, 10} {
		t.Errorf("slots per archive = %v, want one lap each", total)
	}
}

func TestMix(t *testing.T) {
	cases := []struct{ m, v, f, want float64 }{
		{1, 3, 0.5, 2},
		{maxF, maxF, 0.3, maxF},
		{maxF, -maxF, 0.5, 0},
		{-maxF, -maxF / 2, 0.5, -maxF * 0.75},
		{0.1, 0.1, 1.0 / 3, 0.1},
		{2, 7, 1, 7},
	}
	for _, c := range cases {
		if got := mix(c.m, c.v, c.f); !near(got, c.want) {
			t.Errorf("mix(%v, %v, %v) = %v, want %v", c.m, c.v, c.f, got, c.want)
		}
	}
}

// TestAddPointNoAlloc: in steady state, adding points and draining the
// closed slots into a reused buffer allocates nothing.
func TestAddPointNoAlloc(t *testing.T) {
	d := NewDS(mustSchema(t, 10*time.Second, time.Hour, "10s:6h", "1m:7d", "max:1h:30d", "1h:1y"))
	tm := us(1_700_002_800 - 20)
	var buf []Update
	step := func() {
		tm += us(5)
		if err := d.AddPoint(tm, float64(tm%7)); err != nil {
			t.Fatal(err)
		}
		buf = d.ClosedSlots(buf[:0])
	}
	for range 10 { // across an hour boundary: every archive closes
		step()
	}
	if n := testing.AllocsPerRun(10000, step); n != 0 {
		t.Errorf("%v allocations per point", n)
	}
}

// TestAppendClosedSlotsKeepsBuffer: a Graphite DS whose updates are
// taken into a caller's buffer while its series keeps sending (as the
// daemon's flush takes them into a few large blocks) allocates nothing
// per point or per take; the same updates as ClosedSlots; ReleasePending
// frees its buffer once nothing is pending.
func TestAppendClosedSlotsKeepsBuffer(t *testing.T) {
	sch := graphiteSchema(t, "average", "10s:6h", "1m:7d", "1h:1y")
	d, ref := NewDS(sch), NewDS(sch)
	tm := us(1_700_002_800 - 20)
	dst := make([]Update, 0, 64)
	var got, want []Update
	step := func() {
		tm += us(2)
		for _, x := range []*DS{d, ref} {
			if err := x.Put(tm, float64(tm%7), tm); err != nil {
				t.Fatal(err)
			}
		}
		if tm%us(10) == 0 { // a flush every 10 s
			dst = d.AppendClosedSlots(dst[:0])
			got = append(got[:0], dst...)
			want = ref.ClosedSlots(nil)
			if !slices.Equal(got, want) {
				t.Fatalf("AppendClosedSlots = %v, ClosedSlots = %v", got, want)
			}
		}
	}
	for range 40 {
		step()
	}
	if n := testing.AllocsPerRun(10000, step); n != 0 {
		t.Errorf("%v allocations per point", n)
	}
	d.ReleasePending()
	if d.PendingCap() == 0 {
		t.Fatal("ReleasePending freed the buffer of pending updates")
	}
	d.AppendClosedSlots(dst[:0])
	d.ReleasePending()
	if d.PendingCap() != 0 {
		t.Errorf("PendingCap after ReleasePending = %d, want 0", d.PendingCap())
	}
}

// TestNewDSOneAllocation: a new DS of up to five archives is one object,
// its open slots inline (the daemon makes one per series; each object is
// one more for the collector to mark at every cycle).
func TestNewDSOneAllocation(t *testing.T) {
	for _, specs := range [][]string{
		{"10s:6h"},
		{"10s:6h", "1m:7d"},
		{"10s:6h", "1m:7d", "1h:1y"},
		{"10s:6h", "1m:7d", "10m:30d", "1h:1y", "1d:5y"},
	} {
		sch := graphiteSchema(t, "average", specs...)
		if n := testing.AllocsPerRun(100, func() { dsSink = NewDS(sch) }); n != 1 {
			t.Errorf("%d archives: %v allocations for a new DS, want 1", len(specs), n)
		}
	}
}

var dsSink *DS
