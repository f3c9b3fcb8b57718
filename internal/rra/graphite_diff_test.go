package rra

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// gdiffStore is a caller's storage for the differential tests: (archive,
// slot start in micros) → the value's bits.
type gdiffStore map[[2]int64]uint64

// gdiffDS is what the differential tests drive: the DS or the reference.
type gdiffDS interface {
	Put(t int64, v float64, now int64) error
	Recompute(u Update, kids []float64)
	Pending() int
	take() []Update
}

type gdiffNew struct{ *DS }

func (d gdiffNew) take() []Update { return d.ClosedSlots(nil) }

type gdiffRef struct{ *refDS }

func (d gdiffRef) take() []Update { return d.ClosedSlots() }

// settle writes d's pending updates into g in order and answers its
// recompute requests from g, as the store's flush does, until none is
// left. It returns every update taken, in order.
func (g gdiffStore) settle(t *testing.T, sc *Schema, d gdiffDS) []Update {
	t.Helper()
	var all []Update
	for round := 0; d.Pending() > 0; round++ {
		if round > 2*MaxArchives {
			t.Fatal("recompute requests do not end")
		}
		for _, u := range d.take() {
			all = append(all, u)
			if u.Count != 0 {
				g[[2]int64{int64(u.Archive), u.Time}] = math.Float64bits(u.Value)
				continue
			}
			arch, start, n := sc.RecomputeSpan(u)
			step := sc.arch[arch].step
			kids := make([]float64, n)
			for i := range kids {
				kids[i] = math.NaN()
				if b, ok := g[[2]int64{int64(arch), start + int64(i)*step}]; ok {
					kids[i] = math.Float64frombits(b)
				}
			}
			d.Recompute(u, kids)
		}
	}
	return all
}

func gdiffSchema(t *testing.T, step, agg string, xff float64, specs []string) *Schema {
	t.Helper()
	r, err := ParseRule(RuleConfig{Regexp: ".", Step: step, Aggregation: agg, XFF: &xff, RRAs: specs})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := r.Schema()
	return sc
}

// gdiffValue is a value of the kinds a stream may carry.
// With nan false it gives neither NaN nor values whose sums overflow
// (which would make NaN aggregates): see gdiffRun.
func gdiffValue(r *rand.Rand, nan bool) float64 {
	k := r.IntN(16)
	if !nan && (k == 0 || k == 3) {
		k = 5
	}
	switch k {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1 - 2*r.IntN(2))
	case 2:
		return math.Copysign(0, -1)
	case 3:
		return math.MaxFloat64 * float64(1-2*r.IntN(2))
	case 4:
		return 1e-300 * r.Float64()
	case 5, 6, 7:
		return float64(r.IntN(100))
	default:
		return (r.Float64() - 0.3) * 1000
	}
}

// TestGraphiteRunningAggregate holds Graphite consolidation with a
// running aggregate per coarser archive to the reference, which keeps
// every finer value of the latest coarse slot: random streams (in order,
// repeated timestamps, out of order within and across coarse slots, gaps,
// NaN and infinite values, values whose sums overflow) of every
// aggregation method and several xFilesFactors and retention shapes, with
// flushes and restores from saved states at random, must leave the
// caller's storage bit for bit the same after every flush and return the
// same errors; a stream in time order must also produce the same updates
// and recompute requests, in the same order.
func TestGraphiteRunningAggregate(t *testing.T) {
	shapes := []struct {
		step  string
		specs []string
	}{
		{"10s", []string{"10s:6h", "1m:7d", "1h:1y"}},
		{"10s", []string{"10s:1h", "1m:1d", "1h:30d"}},
		{"1s", []string{"1s:5m", "5s:30m", "1m:6h", "10m:1d"}},
		{"1m", []string{"1m:1d", "1d:5y"}},
		{"10s", []string{"10s:1h", "30s:2h"}},
	}
	seed := uint64(0)
	for _, sh := range shapes {
		for _, agg := range []string{"average", "sum", "min", "max", "last"} {
			for _, xff := range []float64{0, 0.3, 0.5, 0.99} {
				for _, m := range []gdiffMode{gdiffOrdered, gdiffRestored, gdiffUnordered} {
					seed++
					name := fmt.Sprintf("%v/%s/xff=%v/%v", sh.specs, agg, xff, m)
					sc := gdiffSchema(t, sh.step, agg, xff, sh.specs)
					gdiffRun(t, name, sc, rand.New(rand.NewPCG(seed, 27)), m, 2500)
				}
			}
		}
	}
}

// gdiffMode is a kind of stream.
type gdiffMode int

const (
	// gdiffOrdered: in time order; the DS must make the same updates and
	// requests as the reference.
	gdiffOrdered gdiffMode = iota
	// gdiffRestored: in time order, restored from its saved state now and
	// then. A restored DS answers its requests in the order they come,
	// which is not always the finer slots' order: the DS may then make a
	// request where the reference recomputed in memory.
	gdiffRestored
	// gdiffUnordered: also back in time, within and across coarse slots,
	// and repeated timestamps; no restores, NaN or overflowing values,
	// nor points older than the finest archive's span (see below).
	gdiffUnordered
)

func (m gdiffMode) String() string { return [...]string{"ordered", "restored", "unordered"}[m] }

// gdiffRun feeds a random stream of the mode to the DS and the reference
// and compares them.
//
// Where the DS waits for a recompute request's answer (an earlier finer
// slot written again), it writes the coarse slot when the answer comes,
// not at every point. The result is the same but in two cases the tests
// leave out: a point older than the finest archive's span written to a
// coarser archive directly meanwhile (the reference's direct write comes
// last, the DS's recomputed one does), and a NaN (which the daemon
// refuses at ingestion) making a coarse slot unknown meanwhile (the
// reference keeps the slot's last known aggregate, the DS its value from
// before the wait). And as before, a restored DS takes a coarse slot
// newer than its restored one for empty, which a stream gone back in
// time may not find: restores are for streams in time order.
func gdiffRun(t *testing.T, name string, sc *Schema, r *rand.Rand, mode gdiffMode, events int) {
	t.Helper()
	ordered := mode != gdiffUnordered
	nd, rd := NewDS(sc), newRefDS(sc)
	ns, rs := gdiffStore{}, gdiffStore{}
	steps := make([]int64, len(sc.arch))
	for i, a := range sc.arch {
		steps[i] = a.step
	}
	finest, span0 := steps[0], sc.arch[0].span
	tm := int64(hour0)*1e6 + r.Int64N(steps[len(steps)-1]/finest)*finest
	for ev := range events {
		// The point's time.
		switch k := r.IntN(20); {
		case k < 2: // the same timestamp again
		case k < 12: // the next finer slots
			tm += r.Int64N(3)*finest + r.Int64N(finest)
		case k < 15: // a coarser archive's step or more
			a := 1 + r.IntN(len(steps)-1)
			tm += r.Int64N(3) * steps[a]
		case k < 16: // a gap
			tm += r.Int64N(span0 + steps[len(steps)-1])
		case ordered:
			tm += r.Int64N(finest)
		case k < 18: // back within a coarse slot
			tm -= r.Int64N(6) * finest
		default: // back across coarse slots
			a := 1 + r.IntN(len(steps)-1)
			tm -= r.Int64N(3)*steps[a] + r.Int64N(steps[a])
		}
		// The clock: usually just past the point, sometimes so far past
		// that the point goes to a coarser archive, or to none.
		now := tm + r.Int64N(2*finest)
		switch r.IntN(50) {
		case 0:
			if !ordered {
				break
			}
			now = tm + span0 + r.Int64N(sc.arch[len(steps)-1].span)
		case 1:
			now = tm + sc.arch[len(steps)-1].span + 1e6
		}
		v := gdiffValue(r, ordered)
		en, er := nd.Put(tm, v, now), rd.Put(tm, v, now)
		if fmt.Sprint(en) != fmt.Sprint(er) {
			t.Fatalf("%s: event %d: Put(%d, %v, %d) = %v, reference %v", name, ev, tm, v, now, en, er)
		}
		if ordered || r.IntN(20) == 0 {
			// Unordered streams are compared at flushes only: the DS
			// makes recompute requests where the reference had the
			// finer values in memory.
			un, ur := gdiffNew{nd}, gdiffRef{rd}
			if ordered && r.IntN(20) != 0 {
				continue
			}
			gn, gr := ns.settle(t, sc, un), rs.settle(t, sc, ur)
			if mode == gdiffOrdered && !slices.EqualFunc(gn, gr, sameUpdate) {
				t.Fatalf("%s: event %d: updates\n%v\nreference\n%v", name, ev, gn, gr)
			}
			gdiffSame(t, name, ev, ns, rs)
			if mode == gdiffRestored && r.IntN(10) == 0 {
				b := mustMarshal(t, nd)
				nd = NewDS(sc)
				if err := nd.UnmarshalBinary(b); err != nil {
					t.Fatalf("%s: event %d: restoring %x: %v", name, ev, b, err)
				}
				var err error
				if rd, err = refDecode(sc, b); err != nil {
					t.Fatalf("%s: event %d: reference restoring %x: %v", name, ev, b, err)
				}
			}
		}
	}
	ns.settle(t, sc, gdiffNew{nd})
	rs.settle(t, sc, gdiffRef{rd})
	gdiffSame(t, name, events, ns, rs)
}

// gdiffSame fails unless both storages hold the same slots, bit for bit.
func gdiffSame(t *testing.T, name string, ev int, ns, rs gdiffStore) {
	t.Helper()
	for k, b := range rs {
		if nb, ok := ns[k]; !ok || nb != b {
			t.Fatalf("%s: event %d: archive %d slot %d = %v (set %v), reference %v",
				name, ev, k[0], k[1], math.Float64frombits(nb), ok, math.Float64frombits(b))
		}
	}
	if len(ns) != len(rs) {
		t.Fatalf("%s: event %d: %d slots stored, reference %d", name, ev, len(ns), len(rs))
	}
}

// sameUpdate compares updates, their values bit for bit.
func sameUpdate(a, b Update) bool {
	va, vb := a.Value, b.Value
	a.Value, b.Value = 0, 0
	return a == b && math.Float64bits(va) == math.Float64bits(vb)
}

// gdiffGolden are states saved by the encoder before the DS kept running
// aggregates (commit 2590227), of the schema 10s:6h, 1m:7d, 1h:1y
// (average): a DS without points, one after 40 points and a late one
// (pending updates and a recompute request), and the same after its
// updates were taken.
var gdiffGolden = map[string]string{
	"fresh": "020080969800000000000304809698000000000070080000040087930300000000602700000400a493d6000000003822" +
		"000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000" +
		"00000000000000000000",
	"pending": "020180969800000000000304809698000000000070080000040087930300000000602700000400a493d6000000003822" +
		"0000809fccc0240a0600408248cf240a0600000000000000000000000000000000000000000000000000000000000000" +
		"000000000000220000000000dc02bf240a060001000000000000f03f0080729bbf240a06000100000000000000400000" +
		"0934c0240a06000100000000000010400100dc02bf240a060001000000000000124000003665c1240a06000100000000" +
		"00001c400080ccfdc1240a060001000000000000204000006396c2240a06000100000000000000000080f92ec3240a06" +
		"00010000000000000040000090c7c3240a060001000000000000084001006396c2240a06000100000000000010400080" +
		"2660c4240a06000100000000000014400000bdf8c4240a060001000000000000184000805391c5240a06000100000000" +
		"000020400000ea29c6240a0600010000000000000000008080c2c6240a060001000000000000f03f0000175bc7240a06" +
		"000100000000000008400100ea29c6240a0600010000000000000c400080adf3c7240a06000100000000000010400000" +
		"448cc8240a06000100000000000018400080da24c9240a0600010000000000001c40000071bdc9240a06000100000000" +
		"0000000000800756ca240a060001000000000000f03f00009eeeca240a0600010000000000000040010071bdc9240a06" +
		"0001555555555555094000803487cb240a06000100000000000010400000cb1fcc240a06000100000000000014400080" +
		"61b8cc240a0600010000000000001c400000f850cd240a060001000000000000204000808ee9cd240a06000100000000" +
		"0000f03f00002582ce240a06000100000000000000400100f850cd240a0600010000000000000c400080bb1acf240a06" +
		"0001000000000000084000809fccc0240a06000100000000000014400100dc02bf240a0600000000000000000000",
	"taken": "020180969800000000000304809698000000000070080000040087930300000000602700000400a493d6000000003822" +
		"0000809fccc0240a0600408248cf240a0600000000000000000000000000000000000000000000000000000000000000" +
		"00000000000000000000",
}

// TestGraphiteRestoresOldStates: states saved before the DS kept running
// aggregates restore, marshal back to the same bytes, and then behave as
// the reference restored from them: the same errors and, after every
// flush, the same storage, bit for bit.
func TestGraphiteRestoresOldStates(t *testing.T) {
	sc := gdiffSchema(t, "10s", "average", 0, []string{"10s:6h", "1m:7d", "1h:1y"})
	for name, h := range gdiffGolden {
		b, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		nd := NewDS(sc)
		if err := nd.UnmarshalBinary(b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := mustMarshal(t, nd); !bytes.Equal(got, b) {
			t.Errorf("%s: marshals back as\n%x\nwant\n%x", name, got, b)
		}
		rd, err := refDecode(sc, b)
		if err != nil {
			t.Fatalf("%s: reference: %v", name, err)
		}
		ns, rs := gdiffStore{}, gdiffStore{}
		r := rand.New(rand.NewPCG(27, uint64(len(name))))
		tm := int64(hour0+200) * 1e6
		for ev := range 3000 {
			if r.IntN(8) == 0 {
				tm -= r.Int64N(400) * 1e6 // back within the hour
			} else {
				tm += r.Int64N(20) * 1e6
			}
			now := tm + r.Int64N(10)*1e6
			v := gdiffValue(r, false)
			en, er := nd.Put(tm, v, now), rd.Put(tm, v, now)
			if fmt.Sprint(en) != fmt.Sprint(er) {
				t.Fatalf("%s: event %d: Put(%d, %v, %d) = %v, reference %v", name, ev, tm, v, now, en, er)
			}
			if r.IntN(20) == 0 || ev == 2999 {
				ns.settle(t, sc, gdiffNew{nd})
				rs.settle(t, sc, gdiffRef{rd})
				gdiffSame(t, name, ev, ns, rs)
			}
		}
	}
}
