package rra

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"
	"time"
)

func encodeSchema(t testing.TB) *Schema {
	return mustSchema(t, 10*time.Second, time.Minute, "10s:1h", "min:1m:1d:0.2", "1h:1y")
}

// states returns DSs of encodeSchema in interesting states, by name.
func states(t testing.TB) map[string]*DS {
	sc := encodeSchema(t)
	add := func(d *DS, pts ...pt) *DS {
		for _, p := range pts {
			if err := d.AddPoint(us(p.t), p.v); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	m := map[string]*DS{
		"new":           NewDS(sc),
		"first point":   add(NewDS(sc), pt{1000, 1}),
		"open PDP":      add(NewDS(sc), pt{1000, 1}, pt{1003.5, 2}),
		"pending":       add(NewDS(sc), pt{1000, 1}, pt{1003.5, 2}, pt{1045, -3}, pt{1055, nan}, pt{1500, 4}),
		"before 1970":   add(NewDS(sc), pt{-7200, 1}, pt{-7100, 2}, pt{-7033, 3}),
		"boundary time": add(NewDS(sc), pt{1000, 1}, pt{1010, 2}, pt{1020, 3}),
	}
	adv := add(NewDS(sc), pt{1000, 1}, pt{1005, 2})
	adv.Advance(us(1100))
	m["advanced"] = adv
	drained := add(NewDS(sc), pt{1000, 1}, pt{1005, 2}, pt{1100, 5})
	drained.ClosedSlots(nil)
	m["drained"] = drained
	return m
}

func TestMarshalRoundTrip(t *testing.T) {
	more := []pt{{2000, 7}, {2004, 8}, {2100, 9}, {9000, 1}, {9001, 2}, {100000, 3}}
	for name, d := range states(t) {
		t.Run(name, func(t *testing.T) {
			b, err := d.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			r := NewDS(d.Schema())
			if err := r.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			b2, err := r.MarshalBinary()
			if err != nil || !slices.Equal(b, b2) {
				t.Fatalf("re-marshalled state differs: %v\n%x\n%x", err, b, b2)
			}
			lu1, ok1 := d.LastUpdate()
			lu2, ok2 := r.LastUpdate()
			if lu1 != lu2 || ok1 != ok2 || d.Pending() != r.Pending() {
				t.Fatalf("restored LastUpdate %d %v pending %d, want %d %v %d", lu2, ok2, r.Pending(), lu1, ok1, d.Pending())
			}
			// Both go on identically.
			got, want := feed(t, r, more...), feed(t, d, more...)
			if !sameSlots(got, want) {
				t.Errorf("restored DS diverges:\n got  %s\n want %s", fmtSlots(got), fmtSlots(want))
			}
			// AppendBinary appends.
			ab, err := d.AppendBinary([]byte("x"))
			mb, _ := d.MarshalBinary()
			if err != nil || string(ab[:1]) != "x" || !slices.Equal(ab[1:], mb) {
				t.Errorf("AppendBinary = %x, %v", ab, err)
			}
		})
	}
}

func TestUnmarshalSchemaMismatch(t *testing.T) {
	b, err := states(t)["pending"].MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range []*Schema{
		mustSchema(t, 5*time.Second, time.Minute, "10s:1h", "min:1m:1d:0.2", "1h:1y"),
		mustSchema(t, 10*time.Second, time.Minute, "10s:1h", "min:1m:1d:0.2"),
		mustSchema(t, 10*time.Second, time.Minute, "10s:1h", "max:1m:1d:0.2", "1h:1y"),
		mustSchema(t, 10*time.Second, time.Minute, "10s:1h", "min:1m:2d:0.2", "1h:1y"),
		mustSchema(t, 10*time.Second, time.Minute, "10s:1h", "min:2m:1d:0.2", "1h:1y"),
	} {
		if err := NewDS(sc).UnmarshalBinary(b); !errors.Is(err, ErrSchemaMismatch) {
			t.Errorf("UnmarshalBinary with another schema: %v, want ErrSchemaMismatch", err)
		}
	}
	// The heartbeat and the xffs may change.
	sc := mustSchema(t, 10*time.Second, time.Hour, "10s:1h:0", "min:1m:1d:0.9", "1h:1y:0.1")
	if err := NewDS(sc).UnmarshalBinary(b); err != nil {
		t.Errorf("UnmarshalBinary with another heartbeat and xffs: %v", err)
	}
}

func TestUnmarshalCorrupt(t *testing.T) {
	d := states(t)["pending"]
	good, err := d.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if d.Pending() == 0 {
		t.Fatal("the state has no pending updates to corrupt")
	}
	target := NewDS(d.Schema())
	empty, _ := target.MarshalBinary()
	check := func(what string, b []byte) {
		t.Helper()
		err := target.UnmarshalBinary(b)
		if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrSchemaMismatch) {
			t.Errorf("%s: UnmarshalBinary = %v, want ErrCorrupt", what, err)
		}
		if now, _ := target.MarshalBinary(); !slices.Equal(now, empty) {
			t.Fatalf("%s: a refused state changed the DS", what)
		}
	}
	for n := range len(good) {
		check("truncated", good[:n])
	}
	check("trailing byte", append(slices.Clone(good), 0))

	// Offsets in the state of encodeSchema (3 archives).
	const (
		offFlags    = 1
		offLast     = stateHeadBytes + 3*stateArchBytes
		offUpTo     = offLast + 8
		offPDPVal   = offUpTo + 8
		offPDPKnown = offPDPVal + 8
		offAcc      = offPDPKnown + 8
		offPending  = offAcc + 3*stateAccBytes
		offUpdate   = offPending + 4
	)
	le := binary.LittleEndian
	mut := func(what string, f func(b []byte)) {
		t.Helper()
		b := slices.Clone(good)
		f(b)
		check(what, b)
	}
	mut("version", func(b []byte) { b[0] = 2 })
	mut("flags", func(b []byte) { b[offFlags] = 3 })
	mut("not started but not empty", func(b []byte) { b[offFlags] = 0 })
	mut("last after upTo", func(b []byte) { le.PutUint64(b[offLast:], le.Uint64(b[offUpTo:])+1) })
	mut("time out of range", func(b []byte) { le.PutUint64(b[offUpTo:], uint64(MaxTime)) })
	mut("PDP known beyond the elapsed time", func(b []byte) { le.PutUint64(b[offPDPKnown:], uint64(us(10))) })
	mut("negative PDP known", func(b []byte) { le.PutUint64(b[offPDPKnown:], math.MaxUint64) })
	mut("NaN PDP value", func(b []byte) { le.PutUint64(b[offPDPVal:], math.Float64bits(nan)) })
	mut("slot known beyond the elapsed time", func(b []byte) { le.PutUint64(b[offAcc+8:], uint64(us(3600))) })
	mut("pending count", func(b []byte) { le.PutUint32(b[offPending:], 1000) })
	mut("pending archive", func(b []byte) { b[offUpdate] = 7 })
	mut("pending time misaligned", func(b []byte) { le.PutUint64(b[offUpdate+1:], le.Uint64(b[offUpdate+1:])+1) })
	mut("pending time in the open slot", func(b []byte) { le.PutUint64(b[offUpdate+1:], uint64(us(1e6))) })
	mut("pending count zero", func(b []byte) { le.PutUint32(b[offUpdate+9:], 0) })
	mut("pending count over size", func(b []byte) { le.PutUint32(b[offUpdate+9:], 361) })
	mut("pending value infinite", func(b []byte) { le.PutUint64(b[offUpdate+13:], math.Float64bits(math.Inf(1))) })
	mut("pending out of order", func(b []byte) {
		// Swap the first two updates of archive 0 (the first two entries
		// of this state are both archive 0 before archive 1's).
		u0 := slices.Clone(b[offUpdate : offUpdate+statePendingSize])
		j := offUpdate + statePendingSize
		if b[j] != b[offUpdate] {
			j += statePendingSize
		}
		copy(b[offUpdate:], b[j:j+statePendingSize])
		copy(b[j:], u0)
	})
	mut("schema", func(b []byte) { b[stateHeadBytes] = byte(Max) })
}
