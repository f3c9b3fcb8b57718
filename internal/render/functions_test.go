package render

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// functionCases are the golden cases: testdata/functions/<name>.golden
// holds the JSON /render returns for the target over the last 10 minutes.
var functionCases = []struct{ name, target string }{
	{"sumSeries", "sumSeries(servers.*.cpu)"},
	{"sumSeries_two_args", "sumSeries(servers.web1.cpu, servers.db1.cpu)"},
	{"sumSeries_mixed_steps", "sumSeries(servers.web1.cpu, other.slow.x)"},
	{"sumSeries_nothing", "sumSeries(no.such.metric)"},
	{"averageSeries", "averageSeries(servers.*.cpu)"},
	{"maxSeries", "maxSeries(servers.web*.cpu)"},
	{"minSeries", "minSeries(servers.web*.cpu)"},
	{"scale", "scale(servers.web*.cpu, 2)"},
	{"scale_float", "scale(servers.web1.cpu, 0.5)"},
	{"offset", "offset(servers.web2.cpu, -10)"},
	{"alias", `alias(sumSeries(servers.*.cpu), "total")`},
	{"aliasByNode", "aliasByNode(servers.*.cpu, 1)"},
	{"aliasByNode_wrapped", "aliasByNode(scale(servers.web*.cpu, 2), 1, -1)"},
	{"aliasSub", `aliasSub(servers.web*.cpu, "^servers\.(\w+)\..*$", "host \1")`},
	{"derivative", "derivative(servers.web2.cpu)"},
	{"nonNegativeDerivative", "nonNegativeDerivative(servers.*.requests)"},
	{"nonNegativeDerivative_maxValue", "nonNegativeDerivative(servers.web1.requests, 200)"},
	{"perSecond", "perSecond(servers.*.requests)"},
	{"integral", "integral(servers.web2.cpu)"},
	{"movingAverage", "movingAverage(servers.web1.cpu, 3)"},
	{"movingAverage_interval", "movingAverage(servers.web2.cpu, '5min')"},
	{"summarize", `summarize(servers.web1.cpu, "5min")`},
	{"summarize_alignToFrom", `summarize(servers.web2.cpu, "4min", "max", true)`},
	{"timeShift", `timeShift(servers.web1.cpu, "5min")`},
	{"highestMax", "highestMax(servers.*.cpu, 2)"},
	{"highestAverage", "highestAverage(servers.*.cpu, 1)"},
	{"lowestAverage", "lowestAverage(servers.*.cpu, 2)"},
	{"sortByMaxima", "sortByMaxima(servers.*.cpu)"},
	{"limit", "limit(servers.*.cpu, 2)"},
	{"absolute", "absolute(servers.web2.cpu)"},
	{"keepLastValue", "keepLastValue(servers.web2.cpu)"},
	{"keepLastValue_limit", "keepLastValue(servers.web2.cpu, 2)"},
	{"transformNull", "transformNull(servers.web2.cpu)"},
	{"transformNull_reference", "transformNull(servers.empty.cpu, -1, referenceSeries=servers.web2.cpu)"},
	{"asPercent", "asPercent(servers.web*.cpu)"},
	{"asPercent_number", "asPercent(servers.web1.cpu, 50)"},
	{"asPercent_one_total", "asPercent(servers.web*.cpu, servers.db1.cpu)"},
	{"asPercent_matched", "asPercent(servers.web*.cpu, servers.web*.requests)"},
	{"asPercent_nodes", "asPercent(servers.*.*, None, 1)"},
	{"groupByNode", "groupByNode(servers.*.*, 2, 'sum')"},
	{"groupByNode_average", "groupByNode(servers.*.cpu, 2)"},
	{"groupByNode_seriesFunc", "groupByNode(servers.*.requests, 2, 'maxSeries')"},
	{"constantLine", "constantLine(100)"},
	{"nested", `alias(scale(sumSeries(servers.web*.cpu), 0.1), "x")`},
	{"pipe", `servers.web1.cpu | scale(3) | alias("tripled")`},
	{"glob_braces", "servers.{web1,db1}.cpu"},
	{"glob_set", "servers.web[2-9].cpu"},
}

func TestFunctionGoldens(t *testing.T) {
	h := testHandler(t, testSource())
	for _, c := range functionCases {
		t.Run(c.name, func(t *testing.T) {
			code, body := get(t, h, "/render", url.Values{"target": {c.target}, "from": {"-10min"}, "until": {"now"}, "format": {"json"}})
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			golden(t, "functions/"+c.name, body+"\n")
		})
	}
}

// TestEveryFunctionHasAGolden keeps the table above complete.
func TestEveryFunctionHasAGolden(t *testing.T) {
	used := map[string]bool{}
	var walk func(e *Expr)
	walk = func(e *Expr) {
		if e.Kind == ExprCall {
			used[e.Str] = true
		}
		for _, a := range e.Args {
			walk(a)
		}
		for _, k := range e.Kwargs {
			walk(k.Value)
		}
	}
	targets := []string{`events("x")`}
	for _, c := range functionCases {
		targets = append(targets, c.target)
	}
	for _, c := range valueCases(func(int64) string { return "0" }) {
		targets = append(targets, c.target)
	}
	for _, target := range targets {
		e, err := Parse(target, 0)
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		walk(e)
	}
	for _, name := range Functions() {
		if !used[name] {
			t.Errorf("function %s has no golden or value case", name)
		}
	}
}

// graphiteWebFunctions are the keys of graphite-web 1.1.10's
// SeriesFunctions, aliases included.
var graphiteWebFunctions = strings.Fields(`absolute add aggregate aggregateLine aggregateSeriesLists aggregateWithWildcards alias aliasByMetric aliasByNode aliasByTags aliasQuery aliasSub alpha applyByNode areaBetween asPercent averageAbove averageBelow averageOutsidePercentile averageSeries averageSeriesWithWildcards avg cactiStyle changed color compressPeriodicGaps consolidateBy constantLine countSeries cumulative currentAbove currentBelow dashed delay derivative diffSeries diffSeriesLists divideSeries divideSeriesLists drawAsInfinite events exclude exp exponentialMovingAverage fallbackSeries filterSeries grep group groupByNode groupByNodes groupByTags highest highestAverage highestCurrent highestMax hitcount holtWintersAberration holtWintersConfidenceArea holtWintersConfidenceBands holtWintersForecast identity integral integralByInterval interpolate invert isNonNull keepLastValue legendValue limit lineWidth linearRegression log logit lower lowest lowestAverage lowestCurrent map mapSeries maxSeries maximumAbove maximumBelow minMax minSeries minimumAbove minimumBelow mostDeviant movingAverage movingMax movingMedian movingMin movingSum movingWindow multiplySeries multiplySeriesLists multiplySeriesWithWildcards nPercentile nonNegativeDerivative offset offsetToZero pct perSecond percentileOfSeries pow powSeries randomWalk randomWalkFunction rangeOfSeries reduce reduceSeries removeAbovePercentile removeAboveValue removeBelowPercentile removeBelowValue removeBetweenPercentile removeEmptySeries round scale scaleToSeconds secondYAxis seriesByTag setXFilesFactor sigmoid sin sinFunction smartSummarize sortBy sortByMaxima sortByMinima sortByName sortByTotal squareRoot stacked stddevSeries stdev substr sum sumSeries sumSeriesLists sumSeriesWithWildcards summarize threshold time timeFunction timeShift timeSlice timeStack transformNull unique upper useSeriesAbove verticalLine weightedAverage xFilesFactor`)

// TestAllGraphiteWebFunctions: every graphite-web function is known
// (answers anything but "unknown function"), and nothing else is listed.
func TestAllGraphiteWebFunctions(t *testing.T) {
	if len(graphiteWebFunctions) != 154 {
		t.Fatalf("%d names, graphite-web 1.1.10 has 154", len(graphiteWebFunctions))
	}
	for _, name := range graphiteWebFunctions {
		if _, ok := functionIndex[name]; !ok {
			t.Errorf("%s is missing", name)
		}
	}
	if n := len(Functions()); n != len(graphiteWebFunctions) {
		t.Errorf("%d functions listed, want %d", n, len(graphiteWebFunctions))
	}
}

func TestRenderErrors(t *testing.T) {
	h := testHandler(t, testSource())
	tests := []struct {
		q    url.Values
		want string
	}{
		{url.Values{"target": {"noSuchFunction(a.b)"}}, "unknown function: noSuchFunction"},
		{url.Values{"target": {"sumSeries(a.b"}}, "syntax error at position 13"},
		{url.Values{"target": {"scale(a.b)"}}, `missing required argument "factor"`},
		{url.Values{"target": {"scale(a.b, 'x')"}}, `argument "factor" must be a number`},
		{url.Values{"target": {"summarize(a.b, 'bogus')"}}, "interval string"},
		{url.Values{"target": {"groupByNode(a.b, 1, 'nope')"}}, `unsupported aggregation function "nope"`},
		{url.Values{"target": {"limit(a.b, 1, 2)"}}, "too many arguments"},
		{url.Values{"target": {"a.b"}, "from": {"-5m"}}, "invalid from"},
		{url.Values{"target": {"a.b"}, "from": {"now"}}, "Invalid empty time range"},
		{url.Values{"target": {"a.b"}, "format": {"pdf"}}, "unsupported format"},
		{url.Values{"target": {"a.b"}, "format": {"png"}, "width": {"100000"}}, "width must be"},
		{url.Values{"target": {"a.b"}, "maxDataPoints": {"1000000000"}}, "above the limit"},
		{url.Values{"target": {strings.Repeat("f(", 40) + "a" + strings.Repeat(")", 40)}}, "nested deeper"},
		{url.Values{"target": {strings.Repeat("a", 9000)}}, "longer than"},
		{url.Values{"target": make([]string, 0)}, ""},
	}
	for _, tt := range tests {
		code, body := get(t, h, "/render", tt.q)
		if tt.want == "" {
			if code != http.StatusOK || body != "[]" {
				t.Errorf("%v: %d %s, want 200 []", tt.q, code, body)
			}
			continue
		}
		if code != http.StatusBadRequest || !strings.Contains(body, tt.want) || !strings.HasPrefix(body, "Bad Request: ") {
			t.Errorf("%v: %d %q, want 400 containing %q", tt.q, code, body, tt.want)
		}
	}
	many := url.Values{}
	for range 65 {
		many.Add("target", "a.b")
	}
	if code, body := get(t, h, "/render", many); code != http.StatusBadRequest || !strings.Contains(body, "more than 64 targets") {
		t.Errorf("65 targets: %d %s", code, body)
	}
}

func TestRenderPointLimits(t *testing.T) {
	opts := DefaultOptions()
	opts.Now = func() time.Time { return testNow }
	opts.MaxPoints = 25
	h, err := New(testSource(), opts)
	if err != nil {
		t.Fatal(err)
	}
	code, body := get(t, h, "/render", url.Values{"target": {"servers.*.cpu"}, "from": {"-10min"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "more than 25 points") {
		t.Errorf("over budget: %d %s", code, body)
	}
	opts.MaxPoints = 1000
	opts.MinStep = 1
	h, _ = New(testSource(), opts)
	code, body = get(t, h, "/render", url.Values{"target": {"servers.*.cpu"}, "from": {"-1h"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "shorten the range") {
		t.Errorf("estimate: %d %s", code, body)
	}
	code, body = get(t, h, "/render", url.Values{"target": {`summarize(servers.web1.cpu, "1s")`}, "from": {"-10min"}})
	if code != http.StatusOK {
		t.Errorf("small summarize: %d %s", code, body)
	}
	opts.MinStep = 0
	opts.MaxPoints = 100
	h, _ = New(testSource(), opts)
	code, body = get(t, h, "/render", url.Values{"target": {`summarize(servers.web1.cpu, "1s")`}, "from": {"-10min"}})
	if code != http.StatusBadRequest {
		t.Errorf("summarize past budget: %d %s", code, body)
	}
}
