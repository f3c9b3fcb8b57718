package rra

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// fuzzSchema builds a small schema from b, small rings so that they wrap.
// It returns nil when the bytes describe an invalid one.
func fuzzSchema(b []byte) *Schema {
	steps := [...]time.Duration{time.Second, 10 * time.Second, time.Minute}
	hbs := [...]time.Duration{time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute, 10 * time.Minute, time.Hour, 24 * time.Hour}
	step := steps[int(b[0])%len(steps)]
	hb := hbs[int(b[1])%len(hbs)]
	n := 1 + int(b[2])%3
	var archives []ArchiveSpec
	for i := range n {
		p := b[3+3*i:]
		astep := step * time.Duration(1+int(p[0])%6)
		size := 1 + int(p[1])%8
		a, err := NewArchiveSpec(CF(p[2]%4), astep, astep*time.Duration(size), float64(p[2]/4)/64)
		if err != nil {
			return nil
		}
		archives = append(archives, a)
	}
	sc, err := NewSchema(step, hb, archives)
	if err != nil {
		return nil
	}
	return sc
}

// fuzzHeader is the length of the bytes fuzzSchema and the run options
// read.
const fuzzHeader = 3 + 3*3 + 3

// FuzzDS feeds random point sequences (with Advance calls and a save and
// restore in the middle) and checks what must always hold: no panic,
// every update aligned to its archive step with the right ring index,
// slot times increasing per archive, no closed slot after the last
// update, values within the range of the known inputs, constant input
// consolidating to exactly that constant under every CF, bounded pending
// updates, and a restored DS that carries on exactly like the original.
func FuzzDS(f *testing.F) {
	f.Add(make([]byte, fuzzHeader+40))
	f.Add([]byte("\x01\x07\x02\x05\x03\x00\x02\x07\x81\x00\x00\x00\x01\x05\x10" +
		"\x00\x28\x00\x05\x00\x28\x00\x06\x02\x00\x01\x00\x01\x90\x00\x07\x83\x10\x00\x01\x00\x28\x00\x02"))
	f.Add([]byte("\x00\x00\x02\x00\x07\x01\x01\x03\x06\x05\x01\x0b\x00\x00\x03" +
		"\x01\x04\x00\x01\x00\xfc\xff\x02\x80\x00\x10\x03\x01\x10\x00\x04\x01\x00\x00\x05\x81\xff\x7f\x06"))
	f.Add([]byte("\x02\x03\x01\x02\x07\xfe\x00\x00\x00\x00\x00\x00\x02\x00\x80" +
		"\x00\x01\x00\x01\x00\x01\x00\x01\x03\x01\x00\x01\x02\x01\x00\x01\x81\x01\x00\x01"))
	f.Fuzz(fuzzDS)
}

func fuzzDS(t *testing.T, data []byte) {
	if len(data) < fuzzHeader {
		return
	}
	sc := fuzzSchema(data)
	if sc == nil {
		return
	}
	opts := data[fuzzHeader-3:]
	constant := opts[0]&1 != 0
	c := float64(int8(opts[1])) * 0.37
	if opts[0]&2 != 0 {
		c *= 1e306
	}
	base := us(1.7e9)
	if opts[0]&4 != 0 {
		base = us(-1e9)
	}
	snapAt := int(opts[2])
	ops := data[fuzzHeader:]

	d := NewDS(sc)
	var twin *DS
	var fromD, fromTwin []slot
	lastEnd := make([]int64, sc.NumArchives())
	for i := range lastEnd {
		lastEnd[i] = math.MinInt64
	}
	lo, hi := math.Inf(1), math.Inf(-1) // range of known inputs
	now := base
	check := func(d *DS, track bool) []slot {
		var out []slot
		upTo, _ := d.LastUpdate()
		for _, u := range d.ClosedSlots(nil) {
			checkUpdate(t, sc, u)
			a := sc.Archive(u.Archive)
			end := u.Time + int64(u.Count-1)*a.Step.Microseconds()
			if end > upTo {
				t.Fatalf("update %+v closes a slot after the last update %d", u, upTo)
			}
			if track {
				if u.Time <= lastEnd[u.Archive] {
					t.Fatalf("update %+v does not follow the previous slot %d", u, lastEnd[u.Archive])
				}
				lastEnd[u.Archive] = end
			}
			if v := u.Value; !math.IsNaN(v) {
				if constant && v != c {
					t.Fatalf("constant %v consolidated to %v by %v", c, v, a.CF)
				}
				tol := 1e-9 * max(math.Abs(lo), math.Abs(hi))
				if v < lo-tol || v > hi+tol {
					t.Fatalf("update %+v outside the input range [%v, %v]", u, lo, hi)
				}
			}
			for idx, tm := range sc.Slots(u) {
				out = append(out, slot{u.Archive, float64(tm), idx, u.Value})
			}
		}
		return out
	}
	for i := 0; i+4 <= len(ops); i += 4 {
		op := ops[i]
		dt := int64(int16(binary.LittleEndian.Uint16(ops[i+1:]))) * 250_000
		if op&0x80 != 0 {
			dt *= 1000
		}
		now += dt
		v := float64(int8(ops[i+3]))
		if constant {
			v = c
		}
		apply := func(d *DS) error {
			switch op & 3 {
			case 2:
				d.Advance(now)
				return nil
			case 3:
				return d.AddPoint(now, math.NaN())
			}
			return d.AddPoint(now, v)
		}
		prevLast, started := d.LastUpdate()
		err := apply(d)
		if twin != nil {
			if err2 := apply(twin); (err == nil) != (err2 == nil) {
				t.Fatalf("op %d: original %v, restored %v", i/4, err, err2)
			}
		}
		switch {
		case err == nil:
			if op&3 < 2 && started && now-prevLast <= sc.heartbeat {
				lo, hi = min(lo, v), max(hi, v)
			}
		case errors.Is(err, ErrOutOfOrder):
			if now >= prevLast {
				t.Fatalf("point at %d refused as out of order after %d", now, prevLast)
			}
		case !errors.Is(err, ErrDuplicate) && !errors.Is(err, ErrTime):
			t.Fatalf("unexpected error: %v", err)
		}
		if d.Pending() > 2*(sc.slots+sc.NumArchives()) {
			t.Fatalf("%d pending updates", d.Pending())
		}
		if i/4 == snapAt {
			b, err := d.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			twin = NewDS(sc)
			if err := twin.UnmarshalBinary(b); err != nil {
				t.Fatalf("restoring %x: %v", b, err)
			}
			fromD = fromD[:0]
		}
		if op&0x40 != 0 { // drain now and then, not always
			s := check(d, true)
			if twin != nil {
				fromD = append(fromD, s...)
				fromTwin = append(fromTwin, check(twin, false)...)
			}
		}
	}
	fromD = append(fromD, check(d, true)...)
	if twin != nil {
		fromTwin = append(fromTwin, check(twin, false)...)
		if !sameSlots(fromD, fromTwin) {
			t.Fatalf("restored DS diverges:\n got  %s\n want %s", fmtSlots(fromTwin), fmtSlots(fromD))
		}
	}
}

// FuzzUnmarshalBinary checks that any bytes either restore a state that
// marshals back to a state that restores identically, or are refused with
// ErrCorrupt or ErrSchemaMismatch, without a panic, and that a restored DS
// accepts points.
func FuzzUnmarshalBinary(f *testing.F) {
	for _, d := range states(f) {
		b, err := d.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	sc := encodeSchema(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		d := NewDS(sc)
		if err := d.UnmarshalBinary(b); err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrSchemaMismatch) {
				t.Fatalf("UnmarshalBinary: %v", err)
			}
			return
		}
		b1, err := d.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		r := NewDS(sc)
		if err := r.UnmarshalBinary(b1); err != nil {
			t.Fatalf("re-marshalled state refused: %v", err)
		}
		b2, _ := r.MarshalBinary()
		if string(b1) != string(b2) {
			t.Fatalf("state not stable:\n%x\n%x", b1, b2)
		}
		lu, _ := d.LastUpdate()
		for _, p := range []int64{lu + 1, lu + us(3600), MaxTime - 1} {
			if p < MaxTime {
				_ = d.AddPoint(p, 1)
			}
		}
		d.Advance(MaxTime)
		for _, u := range d.ClosedSlots(nil) {
			checkUpdate(t, sc, u)
		}
	})
}

func FuzzParseArchiveSpec(f *testing.F) {
	for _, s := range []string{
		"10s:6h", "1m:7d", "1h:1y", "max:1h:30d:0.5", "MIN:60:3600:0", "last:1d:5y:0.99",
		"0s:1h", "7s:1m", "1s:100001s", "10s:1h:1", "10s:1h:NaN", "avg:1:1", "1h30m:3d", "::", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseArchiveSpec(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "parsing archive ") {
				t.Fatalf("error %q lacks its context", err)
			}
			return
		}
		if err := a.Validate(); err != nil {
			t.Fatalf("ParseArchiveSpec(%q) = %+v, which is not valid: %v", s, a, err)
		}
		if a.Size < 1 || a.Size > MaxSlots || time.Duration(a.Size)*a.Step != a.Span {
			t.Fatalf("ParseArchiveSpec(%q) = %+v", s, a)
		}
		back, err := ParseArchiveSpec(a.String())
		if err != nil || back != a {
			t.Fatalf("round trip of %q via %q: %+v, %v", s, a.String(), back, err)
		}
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"10s", "1m", "5min", "1h30m", "3600", "1y", "100y", "101y", "0", "-1s", "1.5h", "1mo", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		if err := checkDuration(d); err != nil {
			t.Fatalf("ParseDuration(%q) = %v: %v", s, d, err)
		}
		if back, err := ParseDuration(FormatDuration(d)); err != nil || back != d {
			t.Fatalf("round trip of %q via %q: %v, %v", s, FormatDuration(d), back, err)
		}
	})
}

// TestRandomSequences runs FuzzDS's checks on seeded pseudo-random inputs,
// so that plain test runs cover many sequences too.
func TestRandomSequences(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		b := make([]byte, fuzzHeader+r.IntN(400))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		fuzzDS(t, b)
	}
}

// FuzzGraphiteState is FuzzUnmarshalBinary for Graphite consolidation:
// any bytes restore a state that marshals back identically and takes
// points, late ones and recompute answers included, or are refused.
func FuzzGraphiteState(f *testing.F) {
	sc := graphiteSchema(f, "", "10s:1h", "1m:1d", "1h:30d")
	d := NewDS(sc)
	f.Add(mustMarshal(f, d))
	for i := range 9 {
		_ = d.Put(us(hour0+float64(7*i)), float64(i), us(hour0+70))
	}
	_ = d.Put(us(hour0-100), 3, us(hour0+70))
	f.Add(mustMarshal(f, d))
	f.Fuzz(func(t *testing.T, b []byte) {
		d := NewDS(sc)
		if err := d.UnmarshalBinary(b); err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrSchemaMismatch) {
				t.Fatalf("UnmarshalBinary: %v", err)
			}
			return
		}
		b1 := mustMarshal(t, d)
		r := NewDS(sc)
		if err := r.UnmarshalBinary(b1); err != nil {
			t.Fatalf("re-marshalled state refused: %v", err)
		}
		if b2 := mustMarshal(t, r); string(b1) != string(b2) {
			t.Fatalf("state not stable:\n%x\n%x", b1, b2)
		}
		lu, _ := d.LastUpdate()
		for _, p := range []int64{lu - us(600), lu + 1, MaxTime - 1} {
			if p >= MinTime && p < MaxTime {
				_ = d.Put(p, 1, lu)
			}
		}
		for _, u := range d.ClosedSlots(nil) {
			if u.Count == 0 {
				_, _, n := sc.RecomputeSpan(u)
				d.Recompute(u, make([]float64, n))
				continue
			}
			checkUpdate(t, sc, u)
		}
	})
}
