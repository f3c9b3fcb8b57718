package tsstore

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/rra"
)

// TestFetchWholeSlots: a Fetch of many series of one segment reads whole
// slots, of a few scattered ones one row per position; both give every
// series its own values, across two segments, with never-written
// positions and slots unknown.
func TestFetchWholeSlots(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: time.Unix(base+3600, 0)}
	cfg := testConfig(t, c)
	cfg.Raw = nil
	cfg.Rules = []rra.Rule{rule(t, `.`, "60s", "", "60s:1d")}
	s := open(t, newPool(t), cfg)
	const n = 450 // three segments' worth of ids, the first partly
	var pts []ingest.Point
	for i := range n {
		for k := range 30 {
			if (i+k)%7 == 0 {
				continue // a slot never written for this series
			}
			pts = append(pts, ingest.Point{Name: fmt.Sprintf("w.s%d", i), Value: float64(i*1000 + k), Time: (base + int64(k)*60) * 1e6})
		}
	}
	if err := s.Add(ctx, pts); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	check := func(idx []int) {
		t.Helper()
		names := make([]string, len(idx))
		for j, i := range idx {
			names[j] = fmt.Sprintf("w.s%d", i)
		}
		got, err := s.Fetch(ctx, names, base, base+29*60, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(idx) {
			t.Fatalf("%d series, want %d", len(got), len(idx))
		}
		for j, i := range idx {
			sr := got[j]
			if sr.Name != names[j] || sr.Step != 60 {
				t.Fatalf("series %d: %s step %d", j, sr.Name, sr.Step)
			}
			for v, val := range sr.Values {
				k := int((sr.Start-base)/60) + v
				want := float64(i*1000 + k)
				if k >= 30 || (i+k)%7 == 0 {
					want = math.NaN()
				}
				if !(val == want || math.IsNaN(val) && math.IsNaN(want)) {
					t.Fatalf("%s at %d: %v, want %v", sr.Name, sr.Start+int64(v)*60, val, want)
				}
			}
		}
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	check(all)
	check([]int{3, 170, 201, 399})
	check([]int{449, 0, 449})
}

// TestFetchWholeSlotsLaps: a whole-slot read of a window within one lap
// of the ring gives the values of that lap only: a slot a series has not
// written since the ring came round is unknown, while the other series of
// its row are read, in rows where every series wrote the slot (the server
// leaves the times out) and in rows where some did not (it sends them).
func TestFetchWholeSlotsLaps(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: time.Unix(base+3600, 0)}
	cfg := testConfig(t, c)
	cfg.Raw = nil
	cfg.Rules = []rra.Rule{rule(t, `.`, "60s", "", "60s:1h")} // a ring of 60 slots
	s := open(t, newPool(t), cfg)
	const n = 250
	name := func(i int) string { return fmt.Sprintf("l.s%d", i) }
	// the second lap (minutes 60 to 89) skips (i+k)%5 == 0 below minute 80
	written := func(i, k int) bool { return k < 60 || k >= 80 || (i+k)%5 != 0 }
	for _, lap := range [][2]int{{0, 60}, {60, 90}} {
		var pts []ingest.Point
		for i := range n {
			for k := lap[0]; k < lap[1]; k++ {
				if written(i, k) {
					pts = append(pts, ingest.Point{Name: name(i), Value: float64(i*1000 + k), Time: (base + int64(k)*60) * 1e6})
				}
			}
		}
		c.now = time.Unix(base+int64(lap[1])*60, 0)
		if err := s.Add(ctx, pts); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	names := make([]string, n)
	for i := range names {
		names[i] = name(i)
	}
	check := func(from, until int64, first, count int) {
		t.Helper()
		got, err := s.Fetch(ctx, names, from, until, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("%d series, want %d", len(got), n)
		}
		for i, sr := range got {
			if sr.Start != base+int64(first)*60 || len(sr.Values) != count {
				t.Fatalf("%s: %d values from %d, want %d from %d", sr.Name, len(sr.Values), sr.Start, count, base+int64(first)*60)
			}
			for j, v := range sr.Values {
				k := first + j
				want := float64(i*1000 + k)
				if k >= 90 || !written(i, k) {
					want = math.NaN()
				}
				if !(v == want || math.IsNaN(v) && math.IsNaN(want)) {
					t.Fatalf("%s at minute %d: %v, want %v", sr.Name, k, v, want)
				}
			}
		}
	}
	check(base+60*60-1, base+89*60, 60, 30) // half a lap
	// a whole lap: minute 90 is the slot of minute 30, from the lap before
	check(base+30*60, base+90*60, 31, 60)
}

// TestFetchWindowEmptyCuts: a cut of a long window whose slots hold
// nothing (a week's window over a day of data) comes back without
// values, no slot allocated for it, while the cuts that hold the data
// come back whole and equal to FetchAt's; a cut whose only value is still
// in the cache is not skipped.
func TestFetchWindowEmptyCuts(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: time.Unix(base+7*86400, 0)}
	cfg := testConfig(t, c)
	cfg.Raw = nil
	cfg.Rules = []rra.Rule{rule(t, `.`, "60s", "", "60s:7d")} // a ring of 10,080 slots
	s := open(t, newPool(t), cfg)
	const n = 250 // two segments
	name := func(i int) string { return fmt.Sprintf("e.s%d", i) }
	names := make([]string, n)
	var pts []ingest.Point
	for i := range n {
		names[i] = name(i)
		for k := range 1440 { // the last day
			at := base + 6*86400 + int64(k)*60
			pts = append(pts, ingest.Point{Name: name(i), Value: float64(i*10000 + k), Time: at * 1e6})
		}
	}
	if err := s.Add(ctx, pts); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	now := c.now.Unix()
	from, until := now-7*86400, now
	whole, err := s.FetchAt(ctx, names, from, until, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) != n || len(whole[0].Values) != 10080 {
		t.Fatalf("FetchAt: %d series", len(whole))
	}
	for _, cut := range [][2]int{{0, 4000}, {4000, 8000}, {8000, 12000}} {
		got, err := s.FetchWindow(ctx, names, from, until, now, 0, cut[0], cut[1])
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("cut %v: %d series, want %d", cut, len(got), n)
		}
		for i, sr := range got {
			w := whole[i]
			if sr.Name != w.Name || sr.Step != 60 || sr.Total != 10080 || sr.Start != w.Start+int64(cut[0])*60 {
				t.Fatalf("cut %v: %s step %d total %d from %d", cut, sr.Name, sr.Step, sr.Total, sr.Start)
			}
			hi := min(cut[1], 10080)
			empty := true
			for _, v := range w.Values[cut[0]:hi] {
				empty = empty && math.IsNaN(v)
			}
			switch {
			case empty && sr.Values != nil:
				t.Fatalf("cut %v of %s: %d values allocated where no slot holds one", cut, sr.Name, len(sr.Values))
			case !empty && len(sr.Values) != hi-cut[0]:
				t.Fatalf("cut %v of %s: %d values, want %d", cut, sr.Name, len(sr.Values), hi-cut[0])
			}
			for j, v := range sr.Values {
				if want := w.Values[cut[0]+j]; !(v == want || math.IsNaN(v) && math.IsNaN(want)) {
					t.Fatalf("cut %v of %s at %d: %v, want %v", cut, sr.Name, j, v, want)
				}
			}
		}
	}
	// a cut of the whole window is read as FetchAt reads it
	all, err := s.FetchWindow(ctx, names, from, until, now, 0, 0, 20000)
	if err != nil {
		t.Fatal(err)
	}
	for i, sr := range all {
		if len(sr.Values) != 10080 || sr.Values[9000] != whole[i].Values[9000] {
			t.Fatalf("whole window of %s: %d values", sr.Name, len(sr.Values))
		}
	}
	// a point of an old slot still in the cache (written late, before the
	// data): its cut holds a value though the database has none there
	old := int64(base + 86400)
	if err := s.Add(ctx, []ingest.Point{{Name: name(3), Value: 7, Time: old * 1e6}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.FetchWindow(ctx, names[:5], from, until, now, 0, 0, 4000)
	if err != nil {
		t.Fatal(err)
	}
	k := int((old - got[3].Start) / 60)
	if len(got[3].Values) != 4000 || got[3].Values[k] != 7 {
		t.Fatalf("cached point: %d values, want 4000 with 7 at %d", len(got[3].Values), k)
	}
	if got[2].Values != nil {
		t.Fatalf("%s: %d values where no slot holds one", got[2].Name, len(got[2].Values))
	}
}
