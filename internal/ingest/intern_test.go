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
	if in.Len() == 0 || in.Len() > 1000/(8+internEntryOverhead) {
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
