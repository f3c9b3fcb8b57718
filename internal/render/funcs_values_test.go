package render

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The expected values below were worked out by hand from graphite-web
// 1.1.10's render/functions.py (and functions/safe.py, aggfuncs.py,
// tags/utils.py, tags/localdatabase.py), not by running this code: each
// row's comment names the graphite-web behaviour it pins.

// vt0 is the first point of every test series: a multiple of 60.
const vt0 = 1699999980

var N = math.NaN()

// valuesSource holds five 60 s points from vt0 for each metric; the
// requests cover (vt0-60, vt0+240], exactly those five points.
func valuesSource() *MemSource {
	m := NewMemSource()
	m.Add("a.x.cpu", vt0, 60, 1, 2, 3, 4, 5)
	m.Add("a.y.cpu", vt0, 60, 10, N, 30, 40, 50)
	m.Add("b.x.cpu", vt0, 60, 2, 2, 2, 2, 2)
	m.Add("a.x.mem", vt0, 60, 0, -1, 4, N, N)
	m.Add("cpu;dc=eu;host=web1", vt0, 60, 1, 1, 1, 1, 1)
	m.Add("cpu;dc=us;host=web2", vt0, 60, 3, 3, 3, 3, 3)
	m.Add("disk;dc=eu", vt0, 60, 7, 7, 7, 7, 7)
	return m
}

// evalValues evaluates target over the standard range.
func evalValues(t *testing.T, target string) ([]*series, error) {
	t.Helper()
	e, err := Parse(target, 32)
	if err != nil {
		t.Fatalf("%s: %v", target, err)
	}
	opts := DefaultOptions()
	req := &request{ctx: context.Background(), src: valuesSource(), opts: &opts,
		loc: time.UTC, now: time.Unix(vt0+240, 0)}
	ev := &evaluator{req: req, from: vt0 - 60, until: vt0 + 240}
	return ev.evalTarget(e)
}

type want struct {
	name string
	vals []float64
}

func w(name string, vals ...float64) want { return want{name, vals} }

func sameValue(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b || math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b))
}

func TestFunctionValues(t *testing.T) {
	ts := func(t int64) string { return strconv.FormatInt(t, 10) }
	for _, c := range valueCases(ts) {
		checkValues(t, c.target, c.want)
	}
}

// valueCase is one row of TestFunctionValues.
type valueCase struct {
	target string
	want   []want
}

func valueCases(ts func(int64) string) []valueCase {
	return []valueCase{
		// divideSeries: safeDiv per point, name "divideSeries(a,b)"
		{"divideSeries(a.x.cpu,b.x.cpu)", []want{w("divideSeries(a.x.cpu,b.x.cpu)", 0.5, 1, 1.5, 2, 2.5)}},
		// divideSeries with no divisor: MISSING, all null
		{"divideSeries(a.x.cpu,no.such)", []want{w("divideSeries(a.x.cpu,MISSING)", N, N, N, N, N)}},
		// safeDiff: first non-null minus the rest
		{"diffSeries(a.y.cpu,a.x.cpu)", []want{w("diffSeries(a.y.cpu,a.x.cpu)", 9, 2, 27, 36, 45)}},
		{"multiplySeries(a.x.cpu,b.x.cpu)", []want{w("multiplySeries(a.x.cpu,b.x.cpu)", 2, 4, 6, 8, 10)}},
		// multiplySeries of one series returns it unchanged (legacy)
		{"multiplySeries(a.x.cpu)", []want{w("a.x.cpu", 1, 2, 3, 4, 5)}},
		// countSeries counts every series of the row, nulls included
		{"countSeries(a.*.cpu)", []want{w("countSeries(a.*.cpu)", 2, 2, 2, 2, 2)}},
		{"rangeOfSeries(a.*.cpu)", []want{w("rangeOfSeries(a.*.cpu)", 9, 0, 27, 36, 45)}},
		{"stddevSeries(a.x.cpu,b.x.cpu)", []want{w("stddevSeries(a.x.cpu,b.x.cpu)", 0.5, 0, 0.5, 1, 1.5)}},
		// aggregate(..., xFilesFactor): a row needs nonNull/len >= xff
		{`aggregate(a.*.cpu,"max",0.6)`, []want{w("maxSeries(a.*.cpu)", 10, N, 30, 40, 50)}},
		{`aggregate(a.*.cpu,"sumSeries")`, []want{w("sumSeries(a.*.cpu)", 11, 2, 33, 44, 55)}},
		// setXFilesFactor sets the request's xFilesFactor for aggregate
		{"averageSeries(setXFilesFactor(a.*.cpu,0.6))", []want{w("averageSeries(a.*.cpu)", 5.5, N, 16.5, 22, 27.5)}},
		{"sumSeriesLists(a.*.cpu,a.*.cpu)", []want{w("sumSeries(a.x.cpu,a.x.cpu)", 2, 4, 6, 8, 10), w("sumSeries(a.y.cpu,a.y.cpu)", 20, N, 60, 80, 100)}},
		{"divideSeriesLists(a.*.cpu,a.*.cpu)", []want{w("divideSeries(a.x.cpu,a.x.cpu)", 1, 1, 1, 1, 1), w("divideSeries(a.y.cpu,a.y.cpu)", 1, N, 1, 1, 1)}},
		{"powSeries(b.x.cpu,b.x.cpu)", []want{w("powSeries(b.x.cpu,b.x.cpu)", 4, 4, 4, 4, 4)}},
		// _getPercentile: rank = ceil(n/100*(len+1)) over non-null values
		{"percentileOfSeries(a.*.cpu,50)", []want{w("percentileOfSeries(a.*.cpu,50)", 10, 2, 30, 40, 50)}},
		// nPercentile: a flat line, (end-start)/step points
		{"nPercentile(a.y.cpu,50)", []want{w("nPercentile(a.y.cpu, 50)", 40, 40, 40, 40, 40)}},
		// aggregateWithWildcards: key drops the positions
		{"sumSeriesWithWildcards(a.*.cpu,1)", []want{w("a.cpu", 11, 2, 33, 44, 55)}},
		// a callback naming a series function runs it (graphite-web checks
		// SeriesFunctions first): multiplySeries keeps a lone series
		{"groupByNodes(a.*.cpu,'multiplySeries',2)", []want{w("cpu", 10, N, 90, 160, 250)}},
		{"groupByNode(b.x.cpu,1,'multiplySeries')", []want{w("x", 2, 2, 2, 2, 2)}},
		{"groupByNodes(a.*.*,'sum',1)", []want{w("x", 1, 1, 7, 4, 5), w("y", 10, N, 30, 40, 50)}},
		// applyByNode: one evaluation per sorted prefix
		{"applyByNode(a.*.cpu,1,'sumSeries(%.*)')", []want{w("sumSeries(a.x.*)", 1, 1, 7, 4, 5), w("sumSeries(a.y.*)", 10, N, 30, 40, 50)}},
		{"reduceSeries(mapSeries(a.x.*,1),'divideSeries',2,'mem','cpu')", []want{w("a.x.reduce.divideSeries", 0, -0.5, 4.0/3, N, N)}},
		// the second list is bound positionally, to asPercent's total
		{"reduceSeries(mapSeries(a.x.*,1),'asPercent',2,'mem','cpu')", []want{w("a.x.reduce.asPercent", 0, -50, 400.0/3, N, N)}},
		// scaleToSeconds: round(v*seconds/step, 6), name with %d
		{"scaleToSeconds(a.x.cpu,30)", []want{w("scaleToSeconds(a.x.cpu,30)", 0.5, 1, 1.5, 2, 2.5)}},
		{"removeBelowValue(a.y.cpu,30)", []want{w("removeBelowValue(a.y.cpu, 30)", N, N, 30, 40, 50)}},
		{"removeAboveValue(a.y.cpu,30)", []want{w("removeAboveValue(a.y.cpu, 30)", 10, N, 30, N, N)}},
		{"removeAbovePercentile(a.x.cpu,50)", []want{w("removeAbovePercentile(a.x.cpu, 50)", 1, 2, 3, N, N)}},
		// removeEmptySeries: nonNull/len >= xFilesFactor
		{"removeEmptySeries(a.x.mem,0.5)", []want{w("a.x.mem", 0, -1, 4, N, N)}},
		{"removeEmptySeries(a.x.mem,0.7)", nil},
		{"sortByName(group(b.x.cpu,a.y.cpu,a.x.cpu))", []want{w("a.x.cpu"), w("a.y.cpu"), w("b.x.cpu")}},
		{"sortByTotal(a.*.cpu)", []want{w("a.y.cpu"), w("a.x.cpu")}},
		// sortByMinima keeps series with a positive maximum, lowest minimum first
		{"sortByMinima(a.*.*)", []want{w("a.x.mem"), w("a.x.cpu"), w("a.y.cpu")}},
		{"highestCurrent(group(a.x.cpu,b.x.cpu),1)", []want{w("a.x.cpu")}},
		{"currentAbove(group(a.x.cpu,b.x.cpu),3)", []want{w("a.x.cpu")}},
		{"currentBelow(group(a.x.cpu,b.x.cpu),3)", []want{w("b.x.cpu")}},
		{"highest(a.*.cpu,1,'sum')", []want{w("a.y.cpu")}},
		{"lowest(a.*.cpu,1)", []want{w("a.x.cpu")}},
		{"filterSeries(a.*.cpu,'max','>',10)", []want{w("a.y.cpu")}},
		{"mostDeviant(a.*.cpu,1)", []want{w("a.y.cpu")}},
		{`exclude(a.*.*,"mem")`, []want{w("a.x.cpu"), w("a.y.cpu")}},
		{`grep(a.*.*,"mem")`, []want{w("a.x.mem")}},
		{"unique(a.x.cpu,a.x.cpu)", []want{w("a.x.cpu")}},
		{"fallbackSeries(no.such,b.x.cpu)", []want{w("b.x.cpu")}},
		// (graphite-web compares None with a number when a series has a null:
		// a 500 there; the inputs here have none)
		{`useSeriesAbove(group(a.x.cpu,b.x.cpu),4,"cpu","mem")`, []want{w("a.x.mem")}},
		// aliasByMetric is substr(-1): inside the innermost parens, cut at ','
		{"aliasByMetric(scale(a.x.cpu,2))", []want{w("cpu")}},
		{"substr(a.x.cpu,1,2)", []want{w("x")}},
		{"upper(a.x.cpu)", []want{w("A.X.CPU")}},
		{`legendValue(a.x.cpu,"avg")`, []want{w("a.x.cpu (avg: 3.0)")}},
		{"cactiStyle(a.x.cpu)", []want{w("a.x.cpu Current:5.00    Max:5.00    Min:1.00    ")}},
		{`aliasQuery(a.x.cpu,"a\.x\.cpu","b.x.cpu","v=%d")`, []want{w("v=2")}},
		// delay: nulls in front; delay(x, 0) is empty (Python's s[:-0])
		{"delay(a.x.cpu,2)", []want{w("delay(a.x.cpu,2)", N, N, 1, 2, 3)}},
		{"delay(a.x.cpu,-2)", []want{w("delay(a.x.cpu,-2)", 3, 4, 5, N, N)}},
		{"delay(a.x.cpu,0)", []want{w("delay(a.x.cpu,0)")}},
		// integralByInterval resets where (t-from)//interval changes
		{"integralByInterval(a.x.cpu,'2min')", []want{w("integralByInterval(a.x.cpu,'2min')", 1, 2, 5, 4, 9)}},
		{"interpolate(a.y.cpu)", []want{w("interpolate(a.y.cpu)", 10, 20, 30, 40, 50)}},
		// interpolate never fills trailing nulls
		{"interpolate(a.x.mem)", []want{w("interpolate(a.x.mem)", 0, -1, 4, N, N)}},
		// movingWindow: series[i-w:i] of the preview list
		{"movingSum(a.x.cpu,2)", []want{w("movingSum(a.x.cpu,2)", 1, 3, 5, 7, 9)}},
		{"movingMax(a.y.cpu,'2min')", []want{w(`movingMax(a.y.cpu,"2min")`, 10, 10, 30, 40, 50)}},
		{"movingMedian(a.x.cpu,3)", []want{w("movingMedian(a.x.cpu,3)", 1, 1.5, 2, 3, 4)}},
		{"movingWindow(a.x.cpu,2,'min')", []want{w("movingMin(a.x.cpu,2)", 1, 1, 2, 3, 4)}},
		// xFilesFactor 0.6: a window of two needs both values
		{"movingMin(a.y.cpu,2,0.6)", []want{w("movingMin(a.y.cpu,2)", N, N, N, 30, 40)}},
		// EMA seeded with safeAvg(first window) or 0, rounded to 6 places
		{"exponentialMovingAverage(a.x.cpu,2)", []want{w("exponentialMovingAverage(a.x.cpu,2)", 0, 0.666667, 1.555556, 2.518519, 3.506173, 4.502058)}},
		{"stdev(a.x.cpu,2)", []want{w("stdev(a.x.cpu,2)", 0, 0.5, 0.5, 0.5, 0.5)}},
		{"linearRegression(a.x.cpu)", []want{w("linearRegression(a.x.cpu, "+ts(vt0-60)+", "+ts(vt0+240)+")", 1, 2, 3, 4, 5)}},
		// Python 3 round(): ties to even
		{"round(divideSeries(a.x.cpu,b.x.cpu))", []want{w("round(divideSeries(a.x.cpu,b.x.cpu))", 0, 1, 2, 2, 2)}},
		{"pow(b.x.cpu,3)", []want{w("pow(b.x.cpu,3)", 8, 8, 8, 8, 8)}},
		// safePow(0, -1) is a domain error: null
		{"invert(a.x.mem)", []want{w("invert(a.x.mem)", N, -1, 0.25, N, N)}},
		{"log(a.x.mem)", []want{w("log(a.x.mem, 10)", N, N, 0.6020599913279623, N, N)}},
		{"add(a.x.cpu,1.5)", []want{w("add(a.x.cpu,1)", 2.5, 3.5, 4.5, 5.5, 6.5)}},
		{"squareRoot(b.x.cpu)", []want{w("squareRoot(b.x.cpu)", math.Sqrt2, math.Sqrt2, math.Sqrt2, math.Sqrt2, math.Sqrt2)}},
		{"offsetToZero(a.x.mem)", []want{w("offsetToZero(a.x.mem)", 1, 0, 5, N, N)}},
		{"minMax(a.x.cpu)", []want{w("minMax(a.x.cpu)", 0, 0.25, 0.5, 0.75, 1)}},
		{"isNonNull(a.y.cpu)", []want{w("isNonNull(a.y.cpu)", 1, 0, 1, 1, 1)}},
		{"changed(a.y.cpu)", []want{w("changed(a.y.cpu)", 0, 0, 1, 1, 1)}},
		// timeSlice walks from the request's start, not the series' start
		{"timeSlice(a.x.cpu,'" + ts(vt0+60) + "','" + ts(vt0+180) + "')", []want{w("timeSlice(a.x.cpu, "+ts(vt0+60)+", "+ts(vt0+180)+")", N, N, 3, 4, 5)}},
		// hitcount: buckets end at the series end
		{`hitcount(a.x.cpu,"2min")`, []want{w(`hitcount(a.x.cpu, "2min")`, 60, 300, 540)}},
		{`smartSummarize(a.x.cpu,"2min","sum")`, []want{w(`smartSummarize(a.x.cpu, "2min", "sum")`, 3, 7, 5)}},
		{`timeStack(a.x.cpu,"1min",0,2)`, []want{w("timeShift(a.x.cpu, -1min, 0)", 1, 2, 3, 4, 5), w("timeShift(a.x.cpu, -1min, 1)", N, 1, 2, 3, 4)}},
		{"stacked(a.*.cpu)", []want{w("stacked(a.x.cpu)", 1, 2, 3, 4, 5), w("stacked(a.y.cpu)", 11, N, 33, 44, 55)}},
		{"secondYAxis(a.x.cpu)", []want{w("secondYAxis(a.x.cpu)", 1, 2, 3, 4, 5)}},
		{"dashed(a.x.cpu)", []want{w("dashed(a.x.cpu, 5)", 1, 2, 3, 4, 5)}},
		{`color(lineWidth(alpha(a.x.cpu,0.5),2),"red")`, []want{w("a.x.cpu", 1, 2, 3, 4, 5)}},
		{`consolidateBy(a.x.cpu,"max")`, []want{w(`consolidateBy(a.x.cpu,"max")`, 1, 2, 3, 4, 5)}},
		{"cumulative(a.x.cpu)", []want{w(`consolidateBy(a.x.cpu,"sum")`, 1, 2, 3, 4, 5)}},
		{"aggregateLine(a.x.cpu)", []want{w("aggregateLine(a.x.cpu, 3)", 3, 3, 3)}},
		{`threshold(5,"five")`, []want{w("five", 5, 5, 5)}},
		{`identity("t")`, []want{w("t", vt0-60, vt0, vt0+60, vt0+120, vt0+180)}},
		{`time("t",120)`, []want{w("t", vt0-60, vt0+60, vt0+180)}},
		{"countSeries()", []want{w("0", 0, 0, 0)}},
		// tags: seriesByTag finds tagged series only; a glob never does
		{"seriesByTag('name=cpu','dc=eu')", []want{w("cpu;dc=eu;host=web1", 1, 1, 1, 1, 1)}},
		{"seriesByTag('name=~cp','host!=web1')", []want{w("cpu;dc=us;host=web2", 3, 3, 3, 3, 3)}},
		// a term matching the empty value selects series without the tag
		{"seriesByTag('dc=eu','host=')", []want{w("disk;dc=eu", 7, 7, 7, 7, 7)}},
		{"aliasByTags(seriesByTag('name=cpu'),'host','dc')", []want{w("web1.eu"), w("web2.us")}},
		// the path expression is the call as written (grammar's call.raw)
		{`sumSeries(seriesByTag('name=cpu',  "dc=eu"))`, []want{w(`sumSeries(seriesByTag('name=cpu',  "dc=eu"))`, 1, 1, 1, 1, 1)}},
		{"aliasByTags(seriesByTag('name=cpu'),'name',1)", []want{w("cpu."), w("cpu.")}},
		{"groupByTags(seriesByTag('dc=~.'),'sum','dc')", []want{w("sum;dc=eu", 8, 8, 8, 8, 8), w("sum;dc=us", 3, 3, 3, 3, 3)}},
		{"groupByTags(seriesByTag('name=cpu'),'sum','dc')", []want{w("cpu;dc=eu", 1, 1, 1, 1, 1), w("cpu;dc=us", 3, 3, 3, 3, 3)}},
		{"cpu*", nil},
		// a tagged series by its exact name; graphite-web does not sort
		// the tags of a query, so another order finds nothing
		{"cpu;dc=eu;host=web1", []want{w("cpu;dc=eu;host=web1", 1, 1, 1, 1, 1)}},
		{"cpu;host=web1;dc=eu", nil},
		{"scale(disk;dc=eu,2)", []want{w("scale(disk;dc=eu,2)", 14, 14, 14, 14, 14)}},
		{"sigmoid(b.x.cpu)", []want{w("sigmoid(b.x.cpu)", 0.8807970779778823, 0.8807970779778823, 0.8807970779778823, 0.8807970779778823, 0.8807970779778823)}},
		{"exp(b.x.cpu)", []want{w("exp(b.x.cpu)", 7.38905609893065, 7.38905609893065, 7.38905609893065, 7.38905609893065, 7.38905609893065)}},
		{"logit(scale(a.x.cpu,0.1))", []want{w("logit(scale(a.x.cpu,0.1))", -2.197224577336219, -1.3862943611198906, -0.8472978603872034, -0.4054651081081643, 0)}},
		// logit outside (0, 1) raises in Python: null
		{"logit(a.x.mem)", []want{w("logit(a.x.mem)", N, N, N, N, N)}},
		{"sortBy(a.*.cpu,'max',true)", []want{w("a.y.cpu"), w("a.x.cpu")}},
		{"lowestCurrent(group(a.x.cpu,b.x.cpu),1)", []want{w("b.x.cpu")}},
		{"maximumAbove(a.*.cpu,5)", []want{w("a.y.cpu")}},
		{"maximumBelow(a.*.cpu,5)", []want{w("a.x.cpu")}},
		{"minimumAbove(a.*.cpu,1)", []want{w("a.y.cpu")}},
		{"minimumBelow(a.*.cpu,1)", []want{w("a.x.cpu")}},
		{"averageAbove(a.*.cpu,3)", []want{w("a.y.cpu")}},
		{"averageBelow(a.*.cpu,3)", []want{w("a.x.cpu")}},
		{"removeBelowPercentile(a.x.cpu,50)", []want{w("removeBelowPercentile(a.x.cpu, 50)", N, N, 3, 4, 5)}},
		// keeps series whose average is not strictly inside the band
		{"averageOutsidePercentile(group(a.*.*,b.x.cpu),70)", []want{w("a.x.mem"), w("a.y.cpu"), w("b.x.cpu")}},
		{"removeBetweenPercentile(group(a.x.cpu,b.x.cpu,scale(a.x.cpu,10)),70)", []want{w("a.x.cpu"), w("b.x.cpu"), w("scale(a.x.cpu,10)")}},
		{"weightedAverage(a.x.cpu,b.x.cpu,1)", []want{w("weightedAverage(a.x.cpu, b.x.cpu, 1)", 1, 2, 3, 4, 5)}},
		{"drawAsInfinite(a.x.cpu)", []want{w("drawAsInfinite(a.x.cpu)", 1, 2, 3, 4, 5)}},
		{"areaBetween(group(a.x.cpu,b.x.cpu))", []want{w("areaBetween(b.x.cpu)", 1, 2, 3, 4, 5), w("areaBetween(b.x.cpu)", 2, 2, 2, 2, 2)}},
		{"aggregateSeriesLists(a.*.cpu,a.*.cpu,'max')", []want{w("maxSeries(a.x.cpu,a.x.cpu)", 1, 2, 3, 4, 5), w("maxSeries(a.y.cpu,a.y.cpu)", 10, N, 30, 40, 50)}},
		{"diffSeriesLists(a.*.cpu,a.*.cpu)", []want{w("diffSeries(a.x.cpu,a.x.cpu)", 0, 0, 0, 0, 0), w("diffSeries(a.y.cpu,a.y.cpu)", 0, N, 0, 0, 0)}},
		{"multiplySeriesLists(a.x.cpu,a.x.cpu)", []want{w("multiplySeries(a.x.cpu,a.x.cpu)", 1, 4, 9, 16, 25)}},
		// safeMul: one null factor makes the product null
		{"multiplySeriesWithWildcards(a.*.cpu,1)", []want{w("a.cpu", 10, N, 90, 160, 250)}},
		{"averageSeriesWithWildcards(a.*.cpu,1)", []want{w("a.cpu", 5.5, 2, 16.5, 22, 27.5)}},
		{"aggregateWithWildcards(a.*.cpu,'min',1)", []want{w("a.cpu", 1, 2, 3, 4, 5)}},
		{"averageSeries(xFilesFactor(a.*.cpu,0.6))", []want{w("averageSeries(a.*.cpu)", 5.5, N, 16.5, 22, 27.5)}},
		{"verticalLine('" + ts(vt0+60) + "','deploy')", []want{w("deploy", 1)}},
		{"sin('s',2,120)", []want{w("s", -0.2982970110823726, -1.3911016225478843, -1.96691992721185)}},
		{"sinFunction('s',2,120)", []want{w("s", -0.2982970110823726, -1.3911016225478843, -1.96691992721185)}},
		{"randomWalk('r')", []want{w("r")}},
		{"randomWalkFunction('r')", []want{w("r")}},
		{"timeFunction('t',120)", []want{w("t", vt0-60, vt0+60, vt0+180)}},
		{"lower(upper(a.x.cpu))", []want{w("a.x.cpu")}},
		{"upper(a.x.cpu,0,-1)", []want{w("A.x.cpU")}},
		{"compressPeriodicGaps(a.x.cpu)", []want{w("compressPeriodicGaps(a.x.cpu)", 1, 2, 3, 4, 5)}},
		{"pct(a.x.cpu,b.x.cpu)", []want{w("asPercent(a.x.cpu,b.x.cpu)", 50, 100, 150, 200, 250)}},
		{"sum(a.*.cpu)", []want{w("sumSeries(a.*.cpu)", 11, 2, 33, 44, 55)}},
		{"avg(b.x.cpu)", []want{w("averageSeries(b.x.cpu)", 2, 2, 2, 2, 2)}},
		{"reduce(map(a.x.*,1),'divideSeries',2,'mem','cpu')", []want{w("a.x.reduce.divideSeries", 0, -0.5, 4.0/3, N, N)}},
		// Holt-Winters: values from graphite-web's holtWintersAnalysis over
		// the 2-minute bootstrap, season of two points
		{"holtWintersForecast(a.x.cpu,'2min','2min')", []want{w("holtWintersForecast(a.x.cpu)", N, 1, 1.1003500000000002, 1.3813298775000002, 1.7260968017928753)}},
		{"holtWintersConfidenceBands(a.x.cpu,3,'2min','2min')", []want{
			w("holtWintersConfidenceLower(a.x.cpu)", N, 0.7, 0.2604550000000001, 0.3257288407500003, -0.011979657669262123),
			w("holtWintersConfidenceUpper(a.x.cpu)", N, 1.3, 1.9402450000000002, 2.4369309142500004, 3.464173261255013)}},
		{"holtWintersAberration(a.x.cpu,3,'2min','2min')", []want{w("holtWintersAberration(a.x.cpu)", 0, 0.7, 1.0597549999999998, 1.5630690857499996, 1.535826738744987)}},
		{"holtWintersConfidenceArea(a.x.cpu,3,'2min','2min')", []want{
			w("holtWintersConfidenceArea(a.x.cpu)", N, 0.7, 0.2604550000000001, 0.3257288407500003, -0.011979657669262123),
			w("holtWintersConfidenceArea(a.x.cpu)", N, 1.3, 1.9402450000000002, 2.4369309142500004, 3.464173261255013)}},
	}
}

func checkValues(t *testing.T, target string, wants []want) {
	t.Helper()
	got, err := evalValues(t, target)
	if err != nil {
		t.Errorf("%s: %v", target, err)
		return
	}
	if len(got) != len(wants) {
		var names []string
		for _, s := range got {
			names = append(names, s.name)
		}
		t.Errorf("%s: %d series %q, want %d", target, len(got), names, len(wants))
		return
	}
	for i, wt := range wants {
		s := got[i]
		if s.name != wt.name {
			t.Errorf("%s: series %d named %q, want %q", target, i, s.name, wt.name)
		}
		if wt.vals == nil && !strings.HasPrefix(target, "delay") {
			continue
		}
		pts := datapoints(nil, s.values, s.start, s.end, s.step)
		ok := len(pts) == len(wt.vals)
		for j := 0; ok && j < len(pts); j++ {
			ok = sameValue(pts[j].v, wt.vals[j])
		}
		if !ok {
			var vs []float64
			for _, p := range pts {
				vs = append(vs, p.v)
			}
			t.Errorf("%s: %s = %v, want %v", target, s.name, vs, wt.vals)
		}
	}
}

// errorCases are targets graphite-web refuses too.
var errorCases = []struct{ target, want string }{
	// localdatabase: at least one tagspec must not match the empty string
	{"seriesByTag('dc!=eu')", "At least one tagspec"},
	{"seriesByTag('bogus')", "invalid tagspec"},
	{`events("deploy")`, "not available"},
	{"divideSeries(a.x.cpu,a.*.cpu)", "exactly 1 series"},
	{"percentileOfSeries(a.*.cpu,0)", "greater than 0"},
	{"aggregate(a.*.cpu,'nope')", "unsupported aggregation"},
	{"consolidateBy(a.x.cpu,'median')", "Invalid consolidation function"},
	{"filterSeries(a.*.cpu,'max','<>',1)", "Unsupported operator"},
	{"groupByTags(a.*.cpu,'sum')", "missing required argument"},
}

func TestFunctionValueErrors(t *testing.T) {
	for _, c := range errorCases {
		_, err := evalValues(t, c.target)
		if err == nil || !strings.Contains(err.Error(), c.want) || !IsInputError(err) {
			t.Errorf("%s: error %v, want an input error containing %q", c.target, err, c.want)
		}
	}
}

// TestFunctionTagsObject pins the tags object: parsed from a tagged name
// (tags in name order, then "name"), aggregatedBy on aggregates.
func TestFunctionTagsObject(t *testing.T) {
	for _, c := range []struct{ target, want string }{
		{"seriesByTag('name=cpu','dc=eu')", "dc=eu host=web1 name=cpu"},
		{"a.x.cpu", "name=a.x.cpu"},
		{"sumSeries(seriesByTag('name=cpu'))", "name=cpu aggregatedBy=sum"},
		// a float parameter reaches the function as a Python float (params.py
		// validateFloat): the tag is str(2.0)
		{"scale(a.x.cpu,2)", "name=a.x.cpu scale=2.0"},
		{`movingMax(a.y.cpu,'2min')`, "name=a.y.cpu movingMax=2min"},
		{`delay(a.x.cpu,2)`, "name=a.x.cpu delay=2"},
		{`consolidateBy(a.x.cpu,"max")`, "name=a.x.cpu consolidateBy=max"},
		{"groupByTags(seriesByTag('name=cpu'),'sum','dc')", "dc=eu name=cpu"},
		{"groupByNode(b.x.cpu,1,'multiplySeries')", "name=b.x.cpu"},
		{"groupByNode(a.*.cpu,2,'avg')", "name=averageSeries(a.*.cpu) aggregatedBy=average"},
		{"groupByNode(a.*.cpu,2,'max')", "name=maxSeries(a.*.cpu) aggregatedBy=max"},
	} {
		got, err := evalValues(t, c.target)
		if err != nil || len(got) == 0 {
			t.Errorf("%s: %v", c.target, err)
			continue
		}
		var parts []string
		for _, tg := range got[0].tags {
			parts = append(parts, tg.k+"="+tg.v)
		}
		if s := strings.Join(parts, " "); s != c.want {
			t.Errorf("%s: tags %q, want %q", c.target, s, c.want)
		}
	}
}

// FuzzEvaluate runs hostile targets through every function: an
// evaluation may fail, but only with an error, never a panic.
func FuzzEvaluate(f *testing.F) {
	for _, c := range valueCases(func(int64) string { return "1700000000" }) {
		f.Add(c.target)
	}
	for _, s := range []string{
		"round(a.x.cpu,1000000000)", "percentileOfSeries(a.*.cpu,1e300,true)", "nPercentile(a.x.cpu,-5)",
		"holtWintersForecast(a.x.cpu,'1min','1min')", "movingSum(a.x.cpu,1e18)", "aliasQuery(a.x.cpu,'a','a','%999999999d')",
		"timeStack(a.x.cpu,'1d',-1e300,1e300)", "substr(a.x.cpu,-1e300,1e300)", "upper(a.x.cpu,1e300)",
	} {
		f.Add(s)
	}
	src := valuesSource()
	f.Fuzz(func(t *testing.T, target string) {
		e, err := Parse(target, 16)
		if err != nil {
			return
		}
		opts := DefaultOptions()
		opts.MaxPoints = 100_000
		req := &request{ctx: context.Background(), src: src, opts: &opts, loc: time.UTC, now: time.Unix(vt0+240, 0)}
		ev := &evaluator{req: req, from: vt0 - 60, until: vt0 + 240}
		_, _ = ev.evalTarget(e)
	})
}
