package statsd

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/pgts/pgts/internal/ingest"
)

// testdata/reference_timers.json holds the timer statistics the
// reference StatsD computes, made with node from a checkout of
// github.com/statsd/statsd (lib/process_metrics.js) by this script,
// run as `node gen.js /path/to/statsd > reference_timers.json`:
//
//	const pm = require(process.argv[2] + '/lib/process_metrics');
//	function lcg(seed) { let s = seed; return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648; }
//	const r = lcg(42);
//	const cases = [
//	  {name: 'single', values: [100], count: 1, pcts: [90]},
//	  {name: 'three', values: [100, 200, 300], count: 3, pcts: [90]},
//	  {name: 'ten', values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], count: 10, pcts: [90, 95, 99, -10, 50.5]},
//	  {name: 'even median, unsorted', values: [5, 1, 3, 3, 2.5, 8], count: 6, pcts: [50, 75]},
//	  {name: 'sampled', values: [0.1, 0.2, 0.3], count: 30, pcts: [90, -50]},
//	  {name: 'tiny percentile skipped', values: [1, 2, 3], count: 3, pcts: [1, 90]},
//	  {name: 'random', values: Array.from({length: 1000}, () => Math.floor(r() * 1e6) / 1000), count: 1000, pcts: [90, 95, 99, 99.9, -5]},
//	  {name: 'empty', values: [], count: 0, pcts: [90]},
//	];
//	const out = cases.map(c => {
//	  const metrics = {counters: {}, timers: {t: c.values.slice()}, timer_counters: {t: c.count}, pctThreshold: c.pcts};
//	  let got;
//	  pm.process_metrics(metrics, [], 10000, 0, m => { got = m.timer_data.t; });
//	  return {name: c.name, values: c.values, count: c.count, pcts: c.pcts, want: Object.entries(got)};
//	});
//	console.log("[\n" + out.map(c => JSON.stringify(c)).join(",\n") + "\n]");
type referenceCase struct {
	Name   string    `json:"name"`
	Values []float64 `json:"values"`
	Count  float64   `json:"count"`
	Pcts   []float64 `json:"pcts"`
	Want   [][2]any  `json:"want"`
}

func TestSummariseMatchesReference(t *testing.T) {
	b, err := os.ReadFile("testdata/reference_timers.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []referenceCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 8 {
		t.Fatalf("%d reference cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			names := timerNames(c.Pcts)
			got := map[string]float64{}
			for _, s := range summarise(nil, c.Pcts, append([]float64(nil), c.Values...), c.Count, 10) {
				got[names[s.name]] = s.value
			}
			want := map[string]float64{}
			for _, kv := range c.Want {
				want[kv[0].(string)] = kv[1].(float64)
			}
			// Exact equality: the same operations in the same order.
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("timer statistics differ from the reference (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSummariseTopAll covers the case where the reference reads before
// its cumulative sums and reports NaN: a top percentile of all values.
func TestSummariseTopAll(t *testing.T) {
	names := timerNames([]float64{-100})
	got := map[string]float64{}
	for _, s := range summarise(nil, []float64{-100}, []float64{3, 1, 2}, 3, 10) {
		got[names[s.name]] = s.value
	}
	if got["sum_top100"] != 6 || got["mean_top100"] != 2 || got["lower_top100"] != 1 || got["count_top100"] != 3 || got["sum_squares_top100"] != 14 {
		t.Errorf("top 100%% = %v", got)
	}
}

func TestPercentileNames(t *testing.T) {
	for pct, want := range map[float64][5]string{
		90:   {"count_90", "mean_90", "upper_90", "sum_90", "sum_squares_90"},
		99.9: {"count_99_9", "mean_99_9", "upper_99_9", "sum_99_9", "sum_squares_99_9"},
		-10:  {"count_top10", "mean_top10", "lower_top10", "sum_top10", "sum_squares_top10"},
		-2.5: {"count_top2_5", "mean_top2_5", "lower_top2_5", "sum_top2_5", "sum_squares_top2_5"},
	} {
		if got := percentileNames(pct); got != want {
			t.Errorf("percentileNames(%v) = %v, want %v", pct, got, want)
		}
	}
}

var flushTime = time.Unix(1700000000, 0)

const flushMicros = 1700000000_000000

func newAggregator(t *testing.T, c Config) *Aggregator {
	t.Helper()
	a, err := NewAggregator(c)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// add parses lines and adds their metrics.
func add(t *testing.T, a *Aggregator, lines ...string) {
	t.Helper()
	p := newParser(t, ingest.DefaultLimits())
	for _, l := range lines {
		ms, err := p.AppendLine(nil, []byte(l))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if err := a.Add(m); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// values returns the flushed points as name → value, tags written after
// the name as ";k=v".
func values(pts []ingest.Point) map[string]float64 {
	m := map[string]float64{}
	for _, p := range pts {
		name := p.Name
		for _, tg := range p.Tags {
			name += ";" + tg.Key + "=" + tg.Value
		}
		if p.Time != flushMicros {
			name += " at wrong time"
		}
		m[name] = p.Value
	}
	return m
}

func TestAggregatorFlush(t *testing.T) {
	a := newAggregator(t, DefaultConfig())
	add(t, a,
		"hits:1|c", "hits:2|c|@0.5", "hits:1|c|#host:a",
		"load:5|g", "load:+2|g", "load:-1|g", "fresh:-3|g",
		"users:alice|s", "users:bob|s", "users:alice|s",
		"lat:100|ms", "lat:200|ms|@0.5", "lat:300|h")
	got := values(a.Flush(flushTime))
	want := map[string]float64{
		"stats.counters.hits.rate": 0.5, "stats.counters.hits.count": 5,
		"stats.counters.hits.rate;host=a": 0.1, "stats.counters.hits.count;host=a": 1,
		"stats.gauges.load":         6,
		"stats.gauges.fresh":        -3,
		"stats.sets.users.count":    2,
		"stats.timers.lat.count_90": 3, "stats.timers.lat.mean_90": 200, "stats.timers.lat.upper_90": 300,
		"stats.timers.lat.sum_90": 600, "stats.timers.lat.sum_squares_90": 140000,
		"stats.timers.lat.std": math.Sqrt(20000.0 / 3), "stats.timers.lat.upper": 300, "stats.timers.lat.lower": 100,
		"stats.timers.lat.count": 4, "stats.timers.lat.count_ps": 0.4, "stats.timers.lat.sum": 600,
		"stats.timers.lat.sum_squares": 140000, "stats.timers.lat.mean": 200, "stats.timers.lat.median": 200,
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("first flush (-want +got):\n%s", diff)
	}

	// The next interval: counters, timers and sets restart, gauges stay.
	add(t, a, "load:+1|g")
	got = values(a.Flush(flushTime))
	want = map[string]float64{
		"stats.counters.hits.rate": 0, "stats.counters.hits.count": 0,
		"stats.counters.hits.rate;host=a": 0, "stats.counters.hits.count;host=a": 0,
		"stats.gauges.load": 7, "stats.gauges.fresh": -3,
		"stats.sets.users.count": 0,
		"stats.timers.lat.count": 0, "stats.timers.lat.count_ps": 0,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("second flush (-want +got):\n%s", diff)
	}
}

func TestAggregatorOrderIsStable(t *testing.T) {
	a := newAggregator(t, DefaultConfig())
	add(t, a, "b:1|c", "a:1|c", "z:1|g", "c:1|c")
	var names []string
	for _, p := range a.Flush(flushTime) {
		names = append(names, p.Name)
	}
	want := []string{"stats.counters.b.rate", "stats.counters.b.count", "stats.counters.a.rate", "stats.counters.a.count",
		"stats.counters.c.rate", "stats.counters.c.count", "stats.gauges.z"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("flush order (-want +got):\n%s", diff)
	}
}

func TestAggregatorNaming(t *testing.T) {
	c := DefaultConfig()
	c.Prefix = ""
	c.CounterPrefix = "c"
	c.GaugePrefix = ""
	c.Suffix = "agg"
	c.Percentiles = []float64{99.9, -50}
	c.FlushInterval = 2 * time.Second
	a := newAggregator(t, c)
	add(t, a, "hits:4|c", "load:1|g", "lat:1|ms", "lat:2|ms")
	var names []string
	for _, p := range a.Flush(flushTime) {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	want := []string{"c.hits.count.agg", "c.hits.rate.agg", "load.agg",
		"timers.lat.count.agg", "timers.lat.count_99_9.agg", "timers.lat.count_ps.agg", "timers.lat.count_top50.agg",
		"timers.lat.lower.agg", "timers.lat.lower_top50.agg", "timers.lat.mean.agg", "timers.lat.mean_99_9.agg",
		"timers.lat.mean_top50.agg", "timers.lat.median.agg", "timers.lat.std.agg", "timers.lat.sum.agg",
		"timers.lat.sum_99_9.agg", "timers.lat.sum_squares.agg", "timers.lat.sum_squares_99_9.agg",
		"timers.lat.sum_squares_top50.agg", "timers.lat.sum_top50.agg", "timers.lat.upper.agg",
		"timers.lat.upper_99_9.agg"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

func TestAggregatorDelete(t *testing.T) {
	c := DefaultConfig()
	c.DeleteCounters, c.DeleteTimers, c.DeleteSets, c.DeleteGauges = true, true, true, true
	c.GaugesMaxTTL = 2
	a := newAggregator(t, c)
	add(t, a, "hits:1|c", "lat:1|ms", "users:a|s", "load:3|g")
	if n := len(a.Flush(flushTime)); n != 2+14+1+1 {
		t.Fatalf("first flush: %d points", n)
	}
	// Nothing new: only the gauge survives, for GaugesMaxTTL flushes.
	if got := values(a.Flush(flushTime)); !cmp.Equal(got, map[string]float64{"stats.gauges.load": 3}) {
		t.Errorf("second flush = %v", got)
	}
	if got := a.Flush(flushTime); len(got) != 0 {
		t.Errorf("third flush = %v", got)
	}
	// Forgotten series free their slots.
	if a.nSeries != 0 {
		t.Errorf("%d series still held", a.nSeries)
	}
	add(t, a, "hits:2|c")
	if got := values(a.Flush(flushTime)); got["stats.counters.hits.count"] != 2 {
		t.Errorf("after deletion = %v", got)
	}
}

func TestAggregatorLimits(t *testing.T) {
	c := DefaultConfig()
	c.MaxSeries = 2
	c.MaxSamples = 3
	a := newAggregator(t, c)
	add(t, a, "a:1|c", "b:1|ms")
	err := a.Add(Metric{Name: "c", Type: Counter, Value: 1, SampleRate: 1})
	if !errors.Is(err, ErrFull) || !errors.Is(err, ingest.ErrLimit) {
		t.Errorf("third series: %v, want ErrFull", err)
	}
	if err := a.Add(Metric{Name: "a", Type: Counter, Value: 1, SampleRate: 1}); err != nil {
		t.Errorf("existing series refused: %v", err)
	}
	add(t, a, "b:2|ms", "b:3|ms")
	if err := a.Add(Metric{Name: "b", Type: Timer, Value: 4, SampleRate: 1}); !errors.Is(err, ErrFull) {
		t.Errorf("fourth sample: %v, want ErrFull", err)
	}
	a.Flush(flushTime)
	if err := a.Add(Metric{Name: "b", Type: Timer, Value: 4, SampleRate: 1}); err != nil {
		t.Errorf("sample after flush: %v", err)
	}
}

func TestAggregatorRefuses(t *testing.T) {
	a := newAggregator(t, DefaultConfig())
	for _, m := range []Metric{
		{Name: "a", Type: 0, SampleRate: 1},
		{Name: "a", Type: 9, SampleRate: 1},
		{Name: "a", Type: Counter, Value: math.NaN(), SampleRate: 1},
		{Name: "a", Type: Gauge, Value: math.Inf(1), SampleRate: 1},
		{Name: "a", Type: Counter, Value: 1, SampleRate: 0},
		{Name: "a", Type: Counter, Value: 1, SampleRate: 1.5},
	} {
		if err := a.Add(m); !errors.Is(err, ingest.ErrValue) {
			t.Errorf("Add(%+v) = %v, want ErrValue", m, err)
		}
	}
	// Sums that overflow are not flushed as infinities.
	add(t, a, "big:1e308|c", "big:1e308|c")
	for _, p := range a.Flush(flushTime) {
		if math.IsInf(p.Value, 0) || math.IsNaN(p.Value) {
			t.Errorf("flushed %s = %v", p.Name, p.Value)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*Config){
		"zero interval":     func(c *Config) { c.FlushInterval = 0 },
		"zero percentile":   func(c *Config) { c.Percentiles = []float64{0} },
		"percentile 101":    func(c *Config) { c.Percentiles = []float64{101} },
		"percentile NaN":    func(c *Config) { c.Percentiles = []float64{math.NaN()} },
		"prefix with space": func(c *Config) { c.Prefix = "a b" },
		"suffix with NUL":   func(c *Config) { c.Suffix = "a\x00" },
		"zero TTL":          func(c *Config) { c.GaugesMaxTTL = 0 },
		"zero series":       func(c *Config) { c.MaxSeries = 0 },
		"zero samples":      func(c *Config) { c.MaxSamples = 0 },
	} {
		c := DefaultConfig()
		mutate(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, c)
		}
		if _, err := NewAggregator(c); err == nil {
			t.Errorf("%s: NewAggregator accepted %+v", name, c)
		}
	}
}
