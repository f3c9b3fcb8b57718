package render

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// streamSource holds 300 series x.s<i> and 40 series y.s<i> of twenty
// 60 s points of random floats (fixed seed) with a fifth of them null,
// and z.slow at a 120 s step.
func streamSource() *MemSource {
	m := NewMemSource()
	rng := rand.New(rand.NewPCG(7, 11))
	add := func(name string, n int) {
		v := make([]float64, n)
		for i := range v {
			if rng.IntN(5) == 0 {
				v[i] = math.NaN()
			} else {
				v[i] = rng.Float64()*1000 - 300
			}
		}
		m.Add(name, t0-600, 60, v...)
	}
	for i := range 300 {
		add(fmt.Sprintf("x.s%d", i), 20)
	}
	for i := range 40 {
		add(fmt.Sprintf("y.s%d", i), 20)
	}
	m.Add("z.slow", t0-600, 120, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	return m
}

// TestStreamAggregateMatchesOrdinary: an aggregate of path expressions,
// folded batch by batch while reading (under a small point limit, so in
// many batches), answers byte for byte what the ordinary evaluation of the
// same series answers (group() keeps the call from being folded).
func TestStreamAggregateMatchesOrdinary(t *testing.T) {
	src := streamSource()
	small := DefaultOptions()
	small.Now = func() time.Time { return testNow }
	small.MaxPoints = 1000 // batches of ~20 series of 20 points
	hs, err := New(src, small)
	if err != nil {
		t.Fatal(err)
	}
	ho := testHandler(t, src)
	type pair struct{ streamed, ordinary string }
	check := func(hs *Handler, c pair) {
		t.Helper()
		for _, q := range []url.Values{
			{"from": {"-20min"}, "until": {"now"}},
			{"from": {"-20min"}, "until": {"now"}, "maxDataPoints": {"7"}},
			// the request's xFilesFactor, set by an earlier target
			{"from": {"-20min"}, "until": {"now"}, "target": {"setXFilesFactor(y.s1,0.8)"}},
		} {
			q1, q2 := cloneValues(q), cloneValues(q)
			q1.Add("target", c.streamed)
			q2.Add("target", c.ordinary)
			code1, body1 := get(t, hs, "/render", q1)
			code2, body2 := get(t, ho, "/render", q2)
			if code1 != http.StatusOK || code2 != http.StatusOK || body1 != body2 {
				t.Errorf("%s %v: %d %s\nordinary %s: %d %s", c.streamed, q, code1, body1, c.ordinary, code2, body2)
			}
		}
	}
	// steps differ: evaluated the ordinary way, which holds every series
	check(ho, pair{"sumSeries(x.*,z.slow)", "sumSeries(group(x.*,z.slow))"})
	check(ho, pair{"countSeries(z.slow,y.*)", "countSeries(group(z.slow,y.*))"})
	for _, c := range []pair{
		{"sumSeries(x.*)", "sumSeries(group(x.*))"},
		{"sum(x.*)", "sum(group(x.*))"},
		{"averageSeries(x.*,y.*)", "averageSeries(group(x.*,y.*))"},
		{"minSeries(x.*)", "minSeries(group(x.*))"},
		{"maxSeries(y.*,x.s1*)", "maxSeries(group(y.*,x.s1*))"},
		{"countSeries(x.*,y.s3)", "countSeries(group(x.*,y.s3))"},
		{"sumSeries(x.s1*,x.s1)", "sumSeries(group(x.s1*,x.s1))"}, // a series twice
		{"sumSeries(x.s1,nothing.*)", "sumSeries(group(x.s1,nothing.*))"},
		{"sumSeries(nothing.*)", "sumSeries(group(nothing.*))"},
		{"countSeries(nothing.*)", "countSeries(group(nothing.*))"},
	} {
		check(hs, c)
	}
}

func cloneValues(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// TestStreamAggregateLimitCountsHeld: the point limit counts what a
// folded aggregate holds (a batch and the result), not every value read;
// the series themselves, all held, are still refused.
func TestStreamAggregateLimitCountsHeld(t *testing.T) {
	opts := DefaultOptions()
	opts.Now = func() time.Time { return testNow }
	opts.MaxPoints = 1000 // 300 series of 20 points read: 6,000
	h, err := New(streamSource(), opts)
	if err != nil {
		t.Fatal(err)
	}
	q := url.Values{"from": {"-20min"}, "until": {"now"}}
	q.Set("target", "sumSeries(x.*)")
	if code, body := get(t, h, "/render", q); code != http.StatusOK {
		t.Errorf("sumSeries(x.*): %d %s", code, body)
	}
	q.Set("target", "x.*")
	if code, body := get(t, h, "/render", q); code != http.StatusBadRequest {
		t.Errorf("x.*: %d %.200s, want 400", code, body)
	}
	// a single series longer than the limit is refused, folded or not
	opts.MaxPoints = 30
	h, err = New(streamSource(), opts)
	if err != nil {
		t.Fatal(err)
	}
	q.Set("target", "sumSeries(x.*)")
	if code, body := get(t, h, "/render", q); code != http.StatusBadRequest {
		t.Errorf("sumSeries(x.*) with a limit of 30 points: %d %.200s, want 400", code, body)
	}
}

// windowMem is a MemSource that also cuts what it returns (WindowSource),
// counting the cuts asked for; with emptyNil, a cut of a series that
// holds no value comes back without values, as the store returns one.
type windowMem struct {
	*MemSource
	cuts     int
	emptyNil bool
}

func (m *windowMem) FetchWindow(ctx context.Context, names []string, from, until, now int64, maxDataPoints, lo, hi int) ([]Series, error) {
	m.cuts++
	all, err := m.Fetch(ctx, names, from, until, maxDataPoints)
	if err != nil {
		return nil, err
	}
	for i, s := range all {
		n := len(s.Values)
		l, h := min(lo, n), min(hi, n)
		all[i] = Series{Name: s.Name, Start: s.Start + int64(l)*s.Step, Step: s.Step, Values: s.Values[l:h], Total: n}
		if m.emptyNil && countNonNull(s.Values[l:h]) == 0 {
			all[i].Values = nil
		}
	}
	return all, nil
}

// TestStreamAggregateWindows: over a WindowSource the fold reads cuts of
// slots of every series (under a small point limit, many cuts) and
// answers what the ordinary evaluation answers, also where the source
// returns the cuts that hold no value without values.
func TestStreamAggregateWindows(t *testing.T) {
	for _, emptyNil := range []bool{false, true} {
		t.Run(fmt.Sprintf("emptyNil=%v", emptyNil), func(t *testing.T) {
			testStreamAggregateWindows(t, &windowMem{MemSource: streamSource(), emptyNil: emptyNil})
		})
	}
}

func testStreamAggregateWindows(t *testing.T, src *windowMem) {
	small := DefaultOptions()
	small.Now = func() time.Time { return testNow }
	small.MaxPoints = 1500 // cuts of 2 slots of 340 series
	hs, err := New(src, small)
	if err != nil {
		t.Fatal(err)
	}
	ho := testHandler(t, src.MemSource)
	for _, c := range [][2]string{
		{"sumSeries(x.*)", "sumSeries(group(x.*))"},
		{"averageSeries(x.*,y.*)", "averageSeries(group(x.*,y.*))"},
		{"minSeries(x.*)", "minSeries(group(x.*))"},
		{"maxSeries(y.*,x.s1*)", "maxSeries(group(y.*,x.s1*))"},
		{"countSeries(x.*,y.s3)", "countSeries(group(x.*,y.s3))"},
		{"sumSeries(x.s1*,x.s1)", "sumSeries(group(x.s1*,x.s1))"},
		{"sumSeries(nothing.*)", "sumSeries(group(nothing.*))"},
	} {
		for _, q := range []url.Values{
			{"from": {"-20min"}, "until": {"now"}},
			{"from": {"-20min"}, "until": {"now"}, "maxDataPoints": {"7"}},
			{"from": {"-20min"}, "until": {"now"}, "target": {"setXFilesFactor(y.s1,0.8)"}},
		} {
			q1, q2 := cloneValues(q), cloneValues(q)
			q1.Add("target", c[0])
			q2.Add("target", c[1])
			src.cuts = 0
			code1, body1 := get(t, hs, "/render", q1)
			code2, body2 := get(t, ho, "/render", q2)
			if code1 != http.StatusOK || code2 != http.StatusOK || body1 != body2 {
				t.Errorf("%s %v: %d %s\nordinary %s: %d %s", c[0], q, code1, body1, c[1], code2, body2)
			}
			if c[0] == "sumSeries(x.*)" && src.cuts < 5 {
				t.Errorf("%s: %d cuts, want many under a limit of 1,500 points", c[0], src.cuts)
			}
		}
	}
}
