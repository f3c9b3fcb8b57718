package ingest

import (
	"fmt"
	"testing"
	"unsafe"
)

func TestInterner(t *testing.T) {
	in := NewInterner(1000)
	b := []byte("servers.web1.cpu")
	s1 := in.String(b)
	b[0] = 'X'
	if s1 != "servers.web1.cpu" {
		t.Fatalf("interned string aliases its input: %q", s1)
	}
	s2 := in.String([]byte("servers.web1.cpu"))
	if unsafe.StringData(s1) != unsafe.StringData(s2) {
		t.Error("equal bytes did not return the same string")
	}
	if n := testing.AllocsPerRun(100, func() { in.String([]byte("servers.web1.cpu")) }); n != 0 {
		t.Errorf("a known string allocates %v times", n)
	}
	// The budget bounds what is remembered.
	for i := range 100 {
		in.String(fmt.Appendf(nil, "name-%03d", i))
		if in.used > in.budget {
			t.Fatalf("used %d over a budget of %d", in.used, in.budget)
		}
	}
	// 100 names through a budget of 17 churn: it may have stepped aside
	// (TestCachesStepAsideWhenChurning), never over the budget.
	if in.Len() > 1000/(8+internEntryOverhead) {
		t.Errorf("remembers %d strings", in.Len())
	}
	// Larger than the budget: returned, not remembered.
	big := make([]byte, 2000)
	if s := in.String(big); len(s) != 2000 {
		t.Error("big string mangled")
	}
	if in.String(nil) != "" {
		t.Error("empty input")
	}
	var none *Interner
	if none.String([]byte("x")) != "x" || none.Len() != 0 || NewInterner(0).String([]byte("y")) != "y" {
		t.Error("nil or disabled interner")
	}
}

func TestSeriesCache(t *testing.T) {
	c := NewSeriesCache(600)
	tags := []Tag{{"a", "1"}}
	c.Put([]byte("cpu;a=1"), "cpu", tags)
	tags[0].Value = "changed"
	name, got, ok := c.Get([]byte("cpu;a=1"))
	if !ok || name != "cpu" || len(got) != 1 || got[0] != (Tag{"a", "1"}) {
		t.Fatalf("Get = %q, %v, %v", name, got, ok)
	}
	if _, _, ok := c.Get([]byte("cpu")); ok {
		t.Error("unknown key found")
	}
	c.Put([]byte("plain"), "plain", nil)
	if name, tags, ok := c.Get([]byte("plain")); !ok || name != "plain" || tags != nil {
		t.Errorf("plain: %q, %v, %v", name, tags, ok)
	}
	if n := testing.AllocsPerRun(100, func() { c.Get([]byte("cpu;a=1")) }); n != 0 {
		t.Errorf("Get allocates %v times", n)
	}
	for i := range 100 {
		c.Put(fmt.Appendf(nil, "series-%03d", i), "s", nil)
		if c.used > c.budget {
			t.Fatalf("used %d over a budget of %d", c.used, c.budget)
		}
	}
	var none *SeriesCache
	none.Put([]byte("a"), "a", nil)
	if _, _, ok := none.Get([]byte("a")); ok {
		t.Error("nil cache found something")
	}
	off := NewSeriesCache(0)
	off.Put([]byte("a"), "a", nil)
	if _, _, ok := off.Get([]byte("a")); ok {
		t.Error("disabled cache found something")
	}
}

// TestCachesStepAsideWhenChurning: a working set larger than the budget
// (a million series sent round robin, say) makes the caches forget
// everything before anything is seen again; they then stop remembering
// for a while, so that each line does not pay two map inserts and a
// share of a rebuilt map for nothing, and try again later. A working set
// that fits is still remembered.
func TestCachesStepAsideWhenChurning(t *testing.T) {
	const budget = 100 * (8 + internEntryOverhead)
	in, c := NewInterner(budget), NewSeriesCache(budget)
	key := func(i int) []byte { return fmt.Appendf(nil, "s%07d", i) }
	// One round of 1,000 distinct names: every one misses.
	for i := range 1000 {
		b := key(i)
		if _, _, ok := c.Get(b); ok {
			t.Fatalf("%s found on its first sight", b)
		}
		c.Put(b, in.String(b), nil)
	}
	if in.Len() != 0 || c.Len() != 0 {
		t.Errorf("after a round of names 10× the budget, without a hit: interner remembers %d, series cache %d; want both stepped aside (0)", in.Len(), c.Len())
	}
	if in.Stepped() == 0 || c.Stepped() == 0 {
		t.Errorf("lookups stepped aside: interner %d, series cache %d; want > 0", in.Stepped(), c.Stepped())
	}
	// Later, a working set that fits: remembered again once the pause
	// is over, and then found.
	hits := workingSetHits(in, c, key, 400)
	if hits < 400*20/2 {
		t.Errorf("a working set of 20 series found %d times of %d; want most", hits, 400*20)
	}
	if c.Len() != 20 {
		t.Errorf("series cache remembers %d series of a working set of 20", c.Len())
	}
}

// TestCachesBackOffWhileChurning: a sender whose working set never fits
// (a million series round robin) finds the caches stepping aside for
// longer each time they try again and churn again, so that nearly every
// line (here ≥ 99%) skips them: each try costs a new map and its inserts
// for nothing. A working set that fits later is still remembered once
// the pause is over.
func TestCachesBackOffWhileChurning(t *testing.T) {
	const budget = 100 * (8 + internEntryOverhead)
	in, c := NewInterner(budget), NewSeriesCache(budget)
	key := func(i int) []byte { return fmt.Appendf(nil, "s%07d", i) }
	const lookups = 2_000_000
	for i := range lookups {
		b := key(i % 10_000)
		if _, _, ok := c.Get(b); !ok {
			c.Put(b, in.String(b), nil)
		}
	}
	for _, x := range []struct {
		what    string
		stepped int64
	}{{"interner", in.Stepped()}, {"series cache", c.Stepped()}} {
		if f := float64(x.stepped) / lookups; f < 0.99 {
			t.Errorf("%s stepped aside for %.3f of %d lookups of a working set 100× its budget, want ≥ 0.99", x.what, f, lookups)
		}
	}
	hits := workingSetHits(in, c, key, 2_000)
	if hits < 2_000*20/4 {
		t.Errorf("a working set of 20 series found %d times of %d after the churn; want a quarter at least", hits, 2_000*20)
	}
}

// workingSetHits looks up a working set of 20 series rounds times, as a
// parser does (a series not found is put), and returns how often one was
// found.
func workingSetHits(in *Interner, c *SeriesCache, key func(int) []byte, rounds int) int {
	hits := 0
	for range rounds {
		for i := range 20 {
			b := key(i)
			if _, _, ok := c.Get(b); ok {
				hits++
				continue
			}
			c.Put(b, in.String(b), nil)
		}
	}
	return hits
}
