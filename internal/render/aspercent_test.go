package render

import (
	"context"
	"testing"
	"time"
)

// asPercent over series of different steps answers as graphite-web 1.1.10
// does; the expected values are graphite-web's answers over testSource
// (TestGraphiteWebDifferential compares these and the mixed-step cases of
// the other combining functions with graphite-web itself). One series
// with one total of another step is a pair, normalized on its own: the
// pair's step, from the earlier start. Pairs are made of the series as
// fetched, not as normalized with the whole list; so are the groups of
// nodes. A number total is repeated as many times as the first series has
// raw values.
func TestAsPercentMixedSteps(t *testing.T) {
	for _, c := range []struct {
		target      string
		i           int // which result series
		start, step int64
		vals        []float64
	}{
		{"asPercent(servers.web2.cpu, other.slow.x)", 0, t0, 120, []float64{916.6666666666666, -35.714285714285715, 937.5, N, N}},
		{"pct(servers.web2.cpu, other.slow.x)", 0, t0, 120, []float64{916.6666666666666, -35.714285714285715, 937.5, N, N}},
		{"asPercent(other.slow.x, servers.web2.cpu)", 0, t0, 120, []float64{10.909090909090908, -280, 10.666666666666668, N, N}},
		{"asPercent(servers.web2.cpu, summarize(servers.web1.cpu, '3min', 'sum'))", 0, t0 - 60, 180,
			[]float64{521.7391304347826, 11.904761904761903, 372.54901960784315, 512.8205128205128}},
		{"asPercent(group(servers.web1.cpu, other.slow.x), group(servers.db1.cpu, servers.web2.cpu))", 1, t0, 60,
			[]float64{10, N, 10, -10, 10, N, N, N, 10, 10}},
		{"asPercent(group(servers.web2.cpu, other.slow.x), 50)", 0, t0, 60, []float64{220.00000000000003, -10, 300, N, 390, N, N, N, N, N}},
		{"asPercent(group(servers.web2.cpu, other.slow.x), 50)", 1, t0 + 60, 120, []float64{24, 28.000000000000004, 32, 36, N, N, N, N, N, N}},
		{"asPercent(group(servers.web2.cpu, aliasSub(other.slow.x, 'other.slow.x', 'servers.slow.cpu')), None, 2)", 0, t0, 120,
			[]float64{90.1639344262295, -55.55555555555556, 90.36144578313254, N, 100}},
	} {
		e, err := Parse(c.target, 32)
		if err != nil {
			t.Fatalf("%s: %v", c.target, err)
		}
		opts := DefaultOptions()
		req := &request{ctx: context.Background(), src: testSource(), opts: &opts, loc: time.UTC, now: testNow}
		ev := &evaluator{req: req, from: t0 - 1, until: t0 + 599}
		out, err := ev.evalTarget(e)
		if err != nil {
			t.Errorf("%s: %v", c.target, err)
			continue
		}
		if c.i >= len(out) {
			t.Errorf("%s: %d series, want at least %d", c.target, len(out), c.i+1)
			continue
		}
		s := out[c.i]
		ok := s.start == c.start && s.step == c.step && len(s.values) == len(c.vals)
		for j := 0; ok && j < len(s.values); j++ {
			ok = sameValue(s.values[j], c.vals[j])
		}
		if !ok {
			t.Errorf("%s: series %d %s: start %d step %d %v\nwant start %d step %d %v",
				c.target, c.i, s.name, s.start-t0, s.step, s.values, c.start-t0, c.step, c.vals)
		}
	}
}
