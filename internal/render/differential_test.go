package render

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"
)

// TestGraphiteWebDifferential evaluates every value and golden case with
// graphite-web 1.1.10's own evaluator (testdata/graphiteweb) over the same
// data and compares names, tags, timestamps and values. It runs when
// PGTS_GRAPHITE_WEB_PYTHON names a Python with graphite-web's dependencies
// and PGTS_GRAPHITE_WEB_WEBAPP its webapp directory (see docs/render.md);
// every accepted difference is in graphiteWebDifferences with its reason.
func TestGraphiteWebDifferential(t *testing.T) {
	py, webapp := os.Getenv("PGTS_GRAPHITE_WEB_PYTHON"), os.Getenv("PGTS_GRAPHITE_WEB_WEBAPP")
	if py == "" || webapp == "" {
		t.Skip("PGTS_GRAPHITE_WEB_PYTHON and PGTS_GRAPHITE_WEB_WEBAPP not set")
	}
	ts := func(t int64) string { return strconv.FormatInt(t, 10) }
	var targets []string
	for _, c := range valueCases(ts) {
		targets = append(targets, c.target)
	}
	differential(t, py, webapp, valuesSource(), targets, vt0-60, vt0+240)
	targets = nil
	for _, c := range functionCases {
		targets = append(targets, c.target)
	}
	differential(t, py, webapp, testSource(), targets, t0-1, t0+599)
}

// graphiteWebDifferences are the accepted differences: target → reason.
var graphiteWebDifferences = map[string]string{
	"randomWalk('r')":         "random values",
	"randomWalkFunction('r')": "random values",
	// graphite-web compares a null with maxValue (Python 3 TypeError, a
	// 500); pgts treats the null as a missing point
	"nonNegativeDerivative(servers.web1.requests, 200)": "graphite-web fails on a null with maxValue",
	// graphite-web prefetches only positional arguments: a series list
	// given as a keyword argument arrives empty and is ignored; pgts
	// evaluates it
	"transformNull(servers.empty.cpu, -1, referenceSeries=servers.web2.cpu)": "graphite-web drops series given as keyword arguments",
}

type refSeries struct {
	Name   string            `json:"name"`
	Tags   map[string]string `json:"tags"`
	Start  float64           `json:"start"`
	End    float64           `json:"end"`
	Step   float64           `json:"step"`
	Values []*float64        `json:"values"`
}

func differential(t *testing.T, py, webapp string, src *MemSource, targets []string, from, until int64) {
	t.Helper()
	series := map[string]any{}
	for name, mm := range src.metrics {
		var ts []int64
		for k := range mm.points {
			ts = append(ts, k)
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		var vals []any
		if len(ts) > 0 {
			for x := ts[0]; x <= ts[len(ts)-1]; x += mm.step {
				if v, ok := mm.points[x]; ok {
					vals = append(vals, v)
				} else {
					vals = append(vals, nil)
				}
			}
			series[name] = []any{ts[0], mm.step, vals}
		} else {
			series[name] = []any{from, mm.step, []any{}}
		}
	}
	in, err := json.Marshal(map[string]any{"series": series, "targets": targets, "from": from, "until": until})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dataPath := filepath.Join(dir, "data.json")
	if err := os.WriteFile(dataPath, in, 0o644); err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs(filepath.Join("testdata", "graphiteweb", "evaluate.py"))
	cmd := exec.Command(py, script)
	cmd.Env = append(os.Environ(), "GW_DATA="+dataPath, "GW_WEBAPP="+webapp, "GW_LOGDIR="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("graphite-web: %v\n%s", err, stderr.String())
	}
	var ref map[string]json.RawMessage
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	for _, target := range targets {
		if reason, ok := graphiteWebDifferences[target]; ok {
			t.Logf("%s: difference accepted: %s", target, reason)
			continue
		}
		var want []refSeries
		refErr := json.Unmarshal(ref[target], &want) != nil
		e, err := Parse(target, 32)
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		req := &request{ctx: context.Background(), src: src, opts: &opts, loc: time.UTC, now: time.Unix(until, 0)}
		got, err := (&evaluator{req: req, from: from, until: until}).evalTarget(e)
		switch {
		case refErr && err == nil:
			t.Errorf("%s: graphite-web fails (%s), pgts answers", target, ref[target])
			continue
		case refErr:
			continue
		case err != nil:
			t.Errorf("%s: %v; graphite-web answers", target, err)
			continue
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d series, graphite-web %d", target, len(got), len(want))
			continue
		}
		for i, w := range want {
			compareRef(t, target, got[i], w)
		}
	}
}

func compareRef(t *testing.T, target string, s *series, w refSeries) {
	t.Helper()
	if s.name != w.Name {
		t.Errorf("%s: name %q, graphite-web %q", target, s.name, w.Name)
	}
	tags := map[string]string{}
	for _, x := range s.tags {
		tags[x.k] = x.v
	}
	if len(tags) != len(w.Tags) {
		t.Errorf("%s: tags %v, graphite-web %v", target, tags, w.Tags)
	} else {
		for k, v := range w.Tags {
			if tags[k] != v {
				t.Errorf("%s: tags %v, graphite-web %v", target, tags, w.Tags)
				break
			}
		}
	}
	got := datapoints(s.values, s.start, s.end, s.step)
	n := 0
	if w.End >= w.Start && w.Step > 0 {
		n = int((w.End-w.Start)/w.Step) + 1
	}
	start, step := int64(w.Start), int64(w.Step)
	n = min(n, len(w.Values))
	ok := len(got) == n
	for i := 0; ok && i < n; i++ {
		wv := math.NaN()
		if w.Values[i] != nil {
			wv = *w.Values[i]
		}
		ok = got[i].ts == start+int64(i)*step && sameRef(got[i].v, wv)
	}
	if !ok {
		t.Errorf("%s: %s points %v, graphite-web start %d step %d values %v", target, s.name, got, start, step, derefAll(w.Values))
	}
}

func sameRef(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

func derefAll(vs []*float64) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = math.NaN()
		if v != nil {
			out[i] = *v
		}
	}
	return out
}
