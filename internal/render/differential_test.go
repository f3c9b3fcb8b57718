package render

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
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
	for _, c := range errorCases {
		targets = append(targets, c.target)
	}
	differential(t, py, webapp, valuesSource(), targets, vt0-60, vt0+240)
	targets = nil
	for _, c := range functionCases {
		targets = append(targets, c.target)
	}
	targets = append(targets, differentialExtras...)
	differential(t, py, webapp, testSource(), append(targets, differentialMixed...), t0-1, t0+599)
}

// differentialExtras are compared with graphite-web only: edge cases of
// nulls, mixed steps, wrapped names and arguments.
// differentialInts are asked without maxDataPoints (which would average
// them to floats): aggregating Python ints keeps them for sum, diff, min,
// max and last, and count is always one.
var differentialInts = []string{
	"sumSeries(isNonNull(servers.*.cpu))", "diffSeries(isNonNull(servers.*.cpu))", "maxSeries(transformNull(servers.web*.cpu))",
	"minSeries(transformNull(servers.web*.cpu))", "aggregate(servers.*.cpu, 'count')", "aggregate(transformNull(servers.web*.cpu), 'last')",
	"averageSeries(isNonNull(servers.*.cpu))", "aggregate(isNonNull(servers.*.cpu), 'median')",
}

var differentialExtras = []string{
	// maxDataPoints keeps Python ints for sum, max, min, first and last
	"consolidateBy(isNonNull(servers.web2.cpu), 'sum')", "consolidateBy(isNonNull(servers.web2.cpu), 'max')",
	"consolidateBy(transformNull(servers.web2.cpu), 'min')", "consolidateBy(changed(servers.web2.cpu), 'last')",
	"consolidateBy(countSeries(servers.*.cpu), 'first')", "consolidateBy(transformNull(servers.web2.cpu), 'avg_zero')",
	"sumSeries(servers.*.cpu, other.slow.x)", "averageSeries(servers.web2.cpu, other.slow.x)",
	"diffSeries(servers.*.cpu)", "multiplySeries(servers.*.cpu)", "stddevSeries(servers.*.cpu)",
	"rangeOfSeries(servers.*.cpu)", "countSeries(servers.*.cpu, other.slow.x)",
	"divideSeries(servers.*.cpu, servers.db1.cpu)", "divideSeries(servers.web2.cpu, other.slow.x)",
	"divideSeriesLists(servers.web*.cpu, servers.web*.requests)",
	"percentileOfSeries(servers.*.cpu, 75)", "percentileOfSeries(servers.*.cpu, 75, true)",
	"percentileOfSeries(servers.*.cpu, 100)", "nPercentile(servers.*.cpu, 90)",
	"aggregate(servers.*.cpu, 'median')", "aggregate(servers.*.cpu, 'avg_zero')", "aggregate(servers.*.cpu, 'count')",
	"aggregate(servers.*.cpu, 'last')", "aggregate(servers.*.cpu, 'diff', 0.5)",
	"aggregateWithWildcards(servers.*.*, 'max', 1)", "sumSeriesWithWildcards(servers.*.*, 2)",
	"groupByNodes(servers.*.*, 'avg', 1, 2)", "groupByNodes(servers.*.*, 'maxSeries', 2)",
	"groupByNode(servers.*.*, -1, 'count')", "applyByNode(servers.*.cpu, 1, 'scale(%.cpu, 2)', '%.doubled')",
	"weightedAverage(servers.web*.cpu, servers.web*.requests, 1)",
	"scaleToSeconds(servers.web2.cpu, 1)", "pow(servers.web2.cpu, 0.5)", "pow(servers.web2.cpu, -1)",
	"squareRoot(servers.web2.cpu)", "invert(servers.web2.cpu)", "log(servers.web2.cpu, 2)", "exp(servers.db1.cpu)",
	"add(servers.web2.cpu, -3)", "round(scale(servers.web2.cpu, 0.011), 1)", "round(servers.web2.cpu, -2)",
	"offsetToZero(servers.web2.cpu)", "minMax(servers.web2.cpu)", "changed(servers.web2.cpu)", "isNonNull(servers.web2.cpu)",
	"delay(servers.web2.cpu, 3)", "delay(servers.web2.cpu, -3)", "delay(servers.web2.cpu, 30)",
	"integralByInterval(servers.web2.cpu, '3min')", "interpolate(servers.web2.cpu)", "interpolate(servers.web2.cpu, 2)",
	"keepLastValue(servers.web1.requests)", "movingMedian(servers.web2.cpu, 4)", "movingSum(servers.web2.cpu, '3min')",
	"movingMin(servers.web2.cpu, 3, 0.5)", "movingMax(other.slow.x, 2)", "movingWindow(servers.web2.cpu, 3, 'stddev')",
	"movingWindow(servers.web2.cpu, '4min', 'median', 0.3)", "movingAverage(servers.web2.cpu, 3, 0.9)",
	"exponentialMovingAverage(servers.web2.cpu, 3)", "exponentialMovingAverage(servers.web2.cpu, '3min')",
	"stdev(servers.web2.cpu, 3)", "stdev(servers.web2.cpu, 4, 0.6)", "linearRegression(servers.web2.cpu)",
	"holtWintersForecast(servers.web2.cpu, '5min', '2min')", "holtWintersConfidenceBands(servers.web2.cpu, 2, '5min', '3min')",
	"holtWintersAberration(servers.web2.cpu, 3, '5min', '2min')",
	"hitcount(servers.web2.cpu, '3min')", "hitcount(servers.web1.cpu, '90s')", "hitcount(other.slow.x, '5min')",
	"smartSummarize(servers.web2.cpu, '3min', 'max')", "smartSummarize(servers.web2.cpu, '4min', 'average')",
	"summarize(servers.web2.cpu, '3min', 'last')", "summarize(other.slow.x, '5min', 'avg', true)",
	"timeStack(servers.web1.cpu, '2min', 1, 3)", "timeShift(servers.web1.cpu, '-2min')",
	"timeSlice(servers.web1.cpu, '-5min', '-2min')",
	"consolidateBy(servers.web1.cpu, 'min')", "cumulative(servers.web1.cpu)", "setXFilesFactor(servers.web2.cpu, 0.25)",
	"removeAboveValue(servers.web2.cpu, 100)", "removeBelowValue(servers.web2.cpu, 100)",
	"removeAbovePercentile(servers.web2.cpu, 60)", "removeBelowPercentile(servers.web2.cpu, 60)",
	"removeEmptySeries(servers.*.cpu)", "removeEmptySeries(servers.*.cpu, 0.9)",
	"highest(servers.*.cpu, 2, 'max')", "lowest(servers.*.cpu, 2, 'min')", "highestCurrent(servers.*.cpu, 2)",
	"lowestCurrent(servers.*.cpu, 2)", "currentAbove(servers.*.cpu, 15)", "currentBelow(servers.*.cpu, 15)",
	"averageAbove(servers.*.cpu, 10)", "averageBelow(servers.*.cpu, 10)", "maximumAbove(servers.*.cpu, 100)",
	"minimumBelow(servers.*.cpu, 6)", "filterSeries(servers.*.cpu, 'sum', '>=', 100)", "mostDeviant(servers.*.cpu, 2)",
	"sortBy(servers.*.cpu, 'last')", "sortBy(servers.*.cpu, 'min', true)", "sortByMinima(servers.*.cpu)",
	"sortByName(servers.*.*, true)", "sortByName(servers.*.*, false, true)", "sortByTotal(servers.*.cpu)",
	"exclude(servers.*.*, 'web')", "grep(servers.*.*, 'req')", "unique(servers.*.cpu, servers.web*.cpu)",
	"aliasByMetric(servers.web1.cpu)", "aliasByNode(summarize(servers.web1.cpu, '5min'), 1)",
	"aliasByTags(servers.web1.cpu, 1, 'name')", `aliasSub(servers.*.cpu, 'servers\.(\w+)\.cpu', 'host \1')`,
	"substr(servers.web1.cpu, 1)", "substr(scale(servers.web1.cpu, 2), 0, 2)", "upper(servers.web1.cpu)",
	"lower(upper(servers.web1.cpu, 0, 2))", "legendValue(servers.web1.cpu, 'max', 'min', 'si')",
	"legendValue(servers.web2.cpu, 'last', 'bogus')", "cactiStyle(servers.*.cpu)", "cactiStyle(servers.web1.requests, 'si', 'req')",
	"stacked(servers.web*.cpu)", "stacked(servers.web*.cpu, 'x')", "areaBetween(servers.web*.cpu)", "secondYAxis(servers.web1.cpu)",
	"dashed(servers.web1.cpu, 3)", "drawAsInfinite(servers.web1.cpu)", "threshold(3.5, 'limit', 'red')",
	"aggregateLine(servers.web2.cpu, 'max')", "aggregateLine(servers.web2.cpu, 'avg', true)", "aggregateLine(servers.empty.cpu)",
	"constantLine(1.5)", "identity('x')", "timeFunction('x', 30)", "sinFunction('s', 3, 100)",
	"fallbackSeries(servers.none, constantLine(1))", "group(servers.web1.cpu, servers.db1.cpu)",
	"countSeries()", "isNonNull(servers.empty.cpu)", "asPercent(servers.web*.cpu, servers.db1.cpu)",
	"compressPeriodicGaps(other.slow.x)", "reduceSeries(mapSeries(servers.*.*, 1), 'asPercent', 2, 'requests', 'cpu')",
	"powSeries(servers.web1.cpu, servers.db1.cpu)", "multiplySeriesWithWildcards(servers.*.cpu, 1)",
	"averageOutsidePercentile(servers.*.cpu, 30)", "removeBetweenPercentile(servers.web1.cpu, servers.db1.cpu, 30)",
	"sigmoid(servers.web1.cpu)", "logit(scale(servers.web1.cpu, 0.04))",
}

// differentialMixed are the combining functions (graphite-web's
// "Combine" group) over series of different steps: other.slow.x is 120 s,
// the servers 60 s; aliasSub gives the slow series a name that groups
// with a fast one. groupByTags is left out: series of different names
// never share its groups here.
var differentialMixed = []string{
	"aggregate(group(servers.web2.cpu, other.slow.x), 'max')",
	"aggregateSeriesLists(group(servers.web1.cpu, servers.web2.cpu), group(other.slow.x, servers.db1.cpu), 'sum')",
	"sumSeriesLists(servers.web2.cpu, other.slow.x)",
	"sumSeriesWithWildcards(group(servers.web2.cpu, " + slowAsServer + "), 1)",
	"averageSeriesWithWildcards(group(servers.web2.cpu, " + slowAsServer + "), 1)",
	"multiplySeriesWithWildcards(group(servers.web2.cpu, " + slowAsServer + "), 1)",
	"aggregateWithWildcards(group(servers.web2.cpu, " + slowAsServer + "), 'min', 1)",
	"diffSeries(servers.web2.cpu, other.slow.x)", "diffSeriesLists(servers.web2.cpu, other.slow.x)",
	"stddevSeries(servers.web2.cpu, other.slow.x)", "minSeries(servers.web2.cpu, other.slow.x)",
	"maxSeries(other.slow.x, servers.web2.cpu)", "rangeOfSeries(servers.web2.cpu, other.slow.x)",
	"percentileOfSeries(group(servers.web2.cpu, other.slow.x), 50)",
	"asPercent(servers.web2.cpu, other.slow.x)", "asPercent(other.slow.x, servers.web2.cpu)",
	"asPercent(servers.web*.cpu, other.slow.x)", "asPercent(other.slow.x, servers.web*.cpu)",
	"asPercent(group(servers.web2.cpu, other.slow.x))", "asPercent(group(servers.web2.cpu, other.slow.x), 50)",
	"asPercent(group(servers.web1.cpu, other.slow.x), group(servers.db1.cpu, servers.web2.cpu))",
	"asPercent(group(servers.web2.cpu, " + slowAsServer + "), None, 2)",
	"asPercent(servers.web2.cpu, group(" + slowAsServer + ", servers.db1.cpu), 2)",
	"asPercent(servers.web2.cpu, summarize(servers.web1.cpu, '3min', 'sum'))",
	"asPercent(summarize(servers.web1.cpu, '3min', 'sum'), servers.web2.cpu)",
	"pct(servers.web2.cpu, other.slow.x)",
	"divideSeriesLists(servers.web2.cpu, other.slow.x)", "divideSeries(other.slow.x, servers.web2.cpu)",
	"multiplySeries(servers.web2.cpu, other.slow.x)", "multiplySeriesLists(servers.web2.cpu, other.slow.x)",
	"weightedAverage(servers.web2.cpu, aliasSub(other.slow.x, 'other.slow.x', 'servers.web2.w'), 1)",
	"powSeries(servers.web2.cpu, other.slow.x)", "countSeries(servers.web2.cpu, other.slow.x)",
	"group(servers.web1.cpu, other.slow.x)",
	"reduceSeries(mapSeries(group(servers.web2.cpu, aliasSub(other.slow.x, 'other.slow.x', 'servers.web2.slow')), 1), 'asPercent', 2, 'cpu', 'slow')",
	"reduceSeries(mapSeries(group(servers.web2.cpu, aliasSub(other.slow.x, 'other.slow.x', 'servers.web2.slow')), 1), 'divideSeries', 2, 'slow', 'cpu')",
	"applyByNode(servers.web*.cpu, 1, 'sumSeries(%.cpu, other.slow.x)')",
	"groupByNode(group(servers.web2.cpu, " + slowAsServer + "), 2, 'sum')",
	"groupByNodes(group(servers.web2.cpu, " + slowAsServer + "), 'average', 2)",
}

// slowAsServer is other.slow.x named servers.slow.cpu.
const slowAsServer = "aliasSub(other.slow.x, 'other.slow.x', 'servers.slow.cpu')"

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
	// graphite-web reads relative slice times against the wall clock, not
	// the request's clock (here injected)
	"timeSlice(servers.web1.cpu, '-5min', '-2min')": "graphite-web uses the wall clock for relative times",
	// a missing matcher (servers.db1 has no requests) and an all-null
	// average make graphite-web raise (500); pgts answers
	"reduceSeries(mapSeries(servers.*.*, 1), 'asPercent', 2, 'requests', 'cpu')": "graphite-web fails when a matcher is missing",
	"averageOutsidePercentile(servers.*.cpu, 30)":                                "graphite-web fails on an all-null series",
	// graphite-web fails only once points are merged (maxDataPoints,
	// mixed steps); pgts refuses the unknown function up front
	"consolidateBy(a.x.cpu,'median')": "refused up front, not at consolidation",
	// Go's math.Sin and C's sin differ in the last bit for large arguments
	"sinFunction('s', 3, 100)": "last-bit difference of sin",
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
	got := datapoints(nil, s.values, s.start, s.end, s.step)
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

// TestGraphiteWebFunctionList compares /functions with graphite-web's
// function list: names, signatures, groups, modules and parameters (types,
// defaults, options, suggestions) must be equal; descriptions are pgts'
// own. Runs under the same conditions as TestGraphiteWebDifferential.
func TestGraphiteWebFunctionList(t *testing.T) {
	py, webapp := os.Getenv("PGTS_GRAPHITE_WEB_PYTHON"), os.Getenv("PGTS_GRAPHITE_WEB_WEBAPP")
	if py == "" || webapp == "" {
		t.Skip("PGTS_GRAPHITE_WEB_PYTHON and PGTS_GRAPHITE_WEB_WEBAPP not set")
	}
	script, _ := filepath.Abs(filepath.Join("testdata", "graphiteweb", "functions.py"))
	cmd := exec.Command(py, script)
	cmd.Env = append(os.Environ(), "GW_WEBAPP="+webapp, "GW_LOGDIR="+t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("graphite-web: %v", err)
	}
	// graphite-web spells an infinite default 1e9999, which encoding/json
	// refuses; both sides compare it as a string
	inf := func(b []byte) []byte {
		return bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("1e9999"), []byte(`"inf"`)), []byte("Infinity"), []byte(`"inf"`))
	}
	var ref map[string]map[string]any
	if err := json.Unmarshal(inf(out), &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref) != len(functionNames) {
		t.Errorf("graphite-web lists %d functions, pgts %d", len(ref), len(functionNames))
	}
	for name, want := range ref {
		fd, ok := functionIndex[name]
		if !ok {
			t.Errorf("%s: missing", name)
			continue
		}
		var got map[string]any
		if err := json.Unmarshal(inf(appendPyJSON(nil, fd.info(name), true)), &got); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"name", "function", "group", "module", "params"} {
			g, _ := json.Marshal(got[k])
			w, _ := json.Marshal(want[k])
			if !bytes.Equal(g, w) {
				t.Errorf("%s: %s is %s, graphite-web %s", name, k, g, w)
			}
		}
	}
}

var idField = regexp.MustCompile(`"id": \d+`)

// TestGraphiteWebTags sends the /tags requests of TestTagsEndpoints to
// graphite-web's views over its local database tag store holding the same
// tagged series, and compares status and body; ids are database row ids
// there and ordinals here, so they are left out.
func TestGraphiteWebTags(t *testing.T) {
	py, webapp := os.Getenv("PGTS_GRAPHITE_WEB_PYTHON"), os.Getenv("PGTS_GRAPHITE_WEB_WEBAPP")
	if py == "" || webapp == "" {
		t.Skip("PGTS_GRAPHITE_WEB_PYTHON and PGTS_GRAPHITE_WEB_WEBAPP not set")
	}
	src := valuesSource()
	names, _ := src.FindTagged(context.Background(), nil)
	var reqs [][2]any
	for _, c := range tagCases {
		q := map[string][]string(c.q)
		if q == nil {
			q = map[string][]string{}
		}
		reqs = append(reqs, [2]any{strings.TrimPrefix(c.path, "/tags"), q})
	}
	in, _ := json.Marshal(map[string]any{"series": names, "requests": reqs})
	dir := t.TempDir()
	dataPath := filepath.Join(dir, "tags.json")
	if err := os.WriteFile(dataPath, in, 0o644); err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs(filepath.Join("testdata", "graphiteweb", "tags.py"))
	cmd := exec.Command(py, script)
	cmd.Env = append(os.Environ(), "GW_DATA="+dataPath, "GW_WEBAPP="+webapp, "GW_LOGDIR="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("graphite-web: %v\n%s", err, stderr.String())
	}
	var ref [][2]any
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatal(err)
	}
	h := testHandler(t, src)
	for i, c := range tagCases {
		code, body := get(t, h, c.path, c.q)
		wantCode, wantBody := int(ref[i][0].(float64)), ref[i][1].(string)
		if code != wantCode || idField.ReplaceAllString(body, `"id": 0`) != idField.ReplaceAllString(wantBody, `"id": 0`) {
			t.Errorf("%s?%s: %d %s, graphite-web %d %s", c.path, c.q.Encode(), code, body, wantCode, wantBody)
		}
	}
}

// TestGraphiteWebRender sends whole /render requests (JSON, with and
// without maxDataPoints and noNullPoints) to graphite-web's render view
// over the same data and compares the answers byte for byte.
func TestGraphiteWebRender(t *testing.T) {
	py, webapp := os.Getenv("PGTS_GRAPHITE_WEB_PYTHON"), os.Getenv("PGTS_GRAPHITE_WEB_WEBAPP")
	if py == "" || webapp == "" {
		t.Skip("PGTS_GRAPHITE_WEB_PYTHON and PGTS_GRAPHITE_WEB_WEBAPP not set")
	}
	var reqs []url.Values
	for _, c := range functionCases {
		for _, extra := range []url.Values{{}, {"maxDataPoints": {"4"}}, {"maxDataPoints": {"1"}}, {"maxDataPoints": {"3"}, "noNullPoints": {"1"}}} {
			q := url.Values{"target": {c.target}, "from": {strconv.FormatInt(t0-1, 10)}, "until": {strconv.FormatInt(t0+599, 10)}, "format": {"json"}}
			for k, v := range extra {
				q[k] = v
			}
			reqs = append(reqs, q)
		}
	}
	for _, target := range differentialExtras {
		reqs = append(reqs, url.Values{"target": {target}, "from": {strconv.FormatInt(t0-1, 10)}, "until": {strconv.FormatInt(t0+599, 10)}, "format": {"json"}, "maxDataPoints": {"4"}})
	}
	for _, target := range differentialInts {
		reqs = append(reqs, url.Values{"target": {target}, "from": {strconv.FormatInt(t0-1, 10)}, "until": {strconv.FormatInt(t0+599, 10)}, "format": {"json"}})
	}
	renderDifferential(t, py, webapp, testSource(), reqs)
	reqs = nil
	for _, c := range valueCases(func(x int64) string { return strconv.FormatInt(x, 10) }) {
		reqs = append(reqs, url.Values{"target": {c.target}, "from": {strconv.FormatInt(vt0-60, 10)}, "until": {strconv.FormatInt(vt0+240, 10)}, "format": {"json"}, "maxDataPoints": {"2"}})
	}
	renderDifferential(t, py, webapp, valuesSource(), reqs)
}

func renderDifferential(t *testing.T, py, webapp string, src *MemSource, reqs []url.Values) {
	t.Helper()
	series := map[string]any{}
	for name, mm := range src.metrics {
		var ts []int64
		for k := range mm.points {
			ts = append(ts, k)
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		vals := []any{}
		start := int64(0)
		if len(ts) > 0 {
			start = ts[0]
			for x := ts[0]; x <= ts[len(ts)-1]; x += mm.step {
				if v, ok := mm.points[x]; ok {
					vals = append(vals, v)
				} else {
					vals = append(vals, nil)
				}
			}
		}
		series[name] = []any{start, mm.step, vals}
	}
	in, _ := json.Marshal(map[string]any{"series": series, "requests": reqs})
	dir := t.TempDir()
	dataPath := filepath.Join(dir, "render.json")
	if err := os.WriteFile(dataPath, in, 0o644); err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs(filepath.Join("testdata", "graphiteweb", "render.py"))
	cmd := exec.Command(py, script)
	cmd.Env = append(os.Environ(), "GW_DATA="+dataPath, "GW_WEBAPP="+webapp, "GW_LOGDIR="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("graphite-web: %v\n%s", err, stderr.String())
	}
	var ref [][3]any
	if err := json.Unmarshal(out, &ref); err != nil {
		t.Fatal(err)
	}
	h := testHandler(t, src)
	for i, q := range reqs {
		if _, ok := graphiteWebDifferences[q.Get("target")]; ok {
			continue
		}
		code, body := get(t, h, "/render", q)
		wantCode, wantBody := int(ref[i][0].(float64)), ref[i][2].(string)
		if wantCode != http.StatusOK {
			continue // graphite-web failed; TestGraphiteWebDifferential covers errors
		}
		if code != wantCode || body != wantBody {
			t.Errorf("%s:\n got %d %s\nwant %d %s", q.Encode(), code, body, wantCode, wantBody)
		}
	}
}
