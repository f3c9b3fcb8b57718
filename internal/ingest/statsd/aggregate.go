package statsd

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/pgts/pgts/internal/ingest"
)

// Config configures an Aggregator. Field names follow the reference
// StatsD's configuration (exampleConfig.js and its Graphite backend);
// the series are named as that backend names them with
// legacyNamespace=false.
type Config struct {
	// FlushInterval is the time between flushes, the denominator of the
	// per-second rates (counter .rate, timer .count_ps) as in the
	// reference, which divides by its configured interval rather than
	// the time elapsed. Default 10s.
	FlushInterval time.Duration
	// Percentiles are the reference's percentThreshold: the percentiles
	// summarised for each timer; a negative one summarises the top
	// values ("lower_top10"). Each is non-zero and within [-100, 100].
	// Default [90], the reference's default.
	Percentiles []float64
	// Prefix starts every series name (globalPrefix). Default "stats".
	Prefix string
	// CounterPrefix, TimerPrefix, GaugePrefix and SetPrefix follow
	// Prefix for each type (prefixCounter, ...). Defaults "counters",
	// "timers", "gauges", "sets". An empty prefix is left out.
	CounterPrefix, TimerPrefix, GaugePrefix, SetPrefix string
	// Suffix, when set, ends every series name after a dot
	// (globalSuffix). Default "".
	Suffix string
	// DeleteCounters, DeleteTimers and DeleteSets forget a series that
	// received nothing since the last flush instead of reporting zeros
	// for it forever. Default false, as in the reference.
	DeleteCounters, DeleteTimers, DeleteSets bool
	// DeleteGauges forgets a gauge not updated for GaugesMaxTTL flushes
	// instead of reporting its last value forever. Default false.
	DeleteGauges bool
	// GaugesMaxTTL is how many flushes an idle gauge survives when
	// DeleteGauges is set. Default 1.
	GaugesMaxTTL int
	// MaxSeries bounds the series (distinct type, name and tags) held;
	// Add refuses new series beyond it. Default 100,000.
	MaxSeries int
	// MaxSamples bounds the timer values and set members held between
	// two flushes, over all series; Add refuses more. Default 4,194,304.
	MaxSamples int
}

// DefaultConfig returns the defaults described on Config's fields.
func DefaultConfig() Config {
	return Config{
		FlushInterval: 10 * time.Second,
		Percentiles:   []float64{90},
		Prefix:        "stats",
		CounterPrefix: "counters",
		TimerPrefix:   "timers",
		GaugePrefix:   "gauges",
		SetPrefix:     "sets",
		GaugesMaxTTL:  1,
		MaxSeries:     100_000,
		MaxSamples:    1 << 22,
	}
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.FlushInterval < time.Millisecond {
		return fmt.Errorf("statsd config: FlushInterval %v is under 1ms", c.FlushInterval)
	}
	for _, p := range c.Percentiles {
		if p == 0 || !(p >= -100 && p <= 100) {
			return fmt.Errorf("statsd config: percentile %v is not a non-zero number within [-100, 100]", p)
		}
	}
	for _, p := range []string{c.Prefix, c.CounterPrefix, c.TimerPrefix, c.GaugePrefix, c.SetPrefix, c.Suffix} {
		if p == "" {
			continue
		}
		if err := ingest.ValidName(p, ingest.DefaultLimits()); err != nil {
			return fmt.Errorf("statsd config: prefix: %w", err)
		}
	}
	switch {
	case c.GaugesMaxTTL < 1:
		return fmt.Errorf("statsd config: GaugesMaxTTL %d is under 1", c.GaugesMaxTTL)
	case c.MaxSeries < 1:
		return fmt.Errorf("statsd config: MaxSeries %d is under 1", c.MaxSeries)
	case c.MaxSamples < 1:
		return fmt.Errorf("statsd config: MaxSamples %d is under 1", c.MaxSamples)
	}
	return nil
}

// series is the state of one aggregated series.
type series struct {
	name string
	tags []ingest.Tag // owned, never modified
	// Counter: the count; Gauge: the value.
	value float64
	// Gauge: flushes left before an idle gauge is forgotten.
	ttl int
	// Timer: the values of the interval and Σ 1/sampleRate.
	values []float64
	count  float64
	// Set: the members of the interval.
	members map[string]struct{}
	// out holds the names of the derived series, built at first flush.
	out []string
}

// table holds the series of one type in the order they first came.
type table struct {
	index map[string]int
	list  []*series
}

// Aggregator turns StatsD metrics into the series the reference StatsD
// flushes to Graphite. It is pure: it reads no clock (Flush takes the
// time) and does no I/O. It is not safe for concurrent use.
//
// Counters and timers restart from zero at each flush, sets from empty;
// gauges keep their value. A series stays known (reporting zeros) until
// its Delete option says otherwise.
type Aggregator struct {
	cfg     Config
	stats   []string // timer statistic name suffixes, see timerNames
	prefix  [Set + 1]string
	tables  [Set + 1]table
	nSeries int
	samples int
	key     []byte
	summary []timerStat
}

// ErrFull is wrapped by Add's errors when a bound of Config (MaxSeries,
// MaxSamples) refuses a metric; it also wraps ingest.ErrLimit.
var ErrFull = fmt.Errorf("statsd aggregator full: %w", ingest.ErrLimit)

// NewAggregator returns an Aggregator configured by c.
func NewAggregator(c Config) (*Aggregator, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c.Percentiles = append([]float64(nil), c.Percentiles...)
	a := &Aggregator{cfg: c}
	a.stats = timerNames(c.Percentiles)
	a.prefix[Counter] = joinName(c.Prefix, c.CounterPrefix)
	a.prefix[Gauge] = joinName(c.Prefix, c.GaugePrefix)
	a.prefix[Timer] = joinName(c.Prefix, c.TimerPrefix)
	a.prefix[Histogram] = a.prefix[Timer]
	a.prefix[Set] = joinName(c.Prefix, c.SetPrefix)
	for i := range a.tables {
		a.tables[i].index = make(map[string]int)
	}
	return a, nil
}

// joinName joins the non-empty parts with dots.
func joinName(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// Add accounts for one metric. It copies what it keeps of m. It refuses
// an invalid Type, a non-finite value or sample rate outside (0, 1]
// (ingest.ErrValue), and a metric that would exceed MaxSeries or
// MaxSamples (ErrFull).
func (a *Aggregator) Add(m Metric) error {
	if m.Type < Counter || m.Type > Set {
		return fmt.Errorf("%w: metric type %d", ingest.ErrValue, m.Type)
	}
	if err := ingest.CheckValue(m.Value); err != nil {
		return err
	}
	if !(m.SampleRate > 0 && m.SampleRate <= 1) {
		return fmt.Errorf("%w: sample rate %v is not in (0, 1]", ingest.ErrValue, m.SampleRate)
	}
	typ := m.Type
	if typ == Histogram {
		typ = Timer
	}
	if (typ == Timer || typ == Set) && a.samples >= a.cfg.MaxSamples {
		return fmt.Errorf("%w: %d timer values and set members since the last flush", ErrFull, a.samples)
	}
	t := &a.tables[typ]
	a.key = seriesKey(a.key[:0], m.Name, m.Tags)
	i, ok := t.index[string(a.key)]
	if !ok {
		if a.nSeries >= a.cfg.MaxSeries {
			return fmt.Errorf("%w: %d series", ErrFull, a.nSeries)
		}
		i = len(t.list)
		t.index[string(a.key)] = i
		t.list = append(t.list, &series{name: m.Name, tags: append([]ingest.Tag(nil), m.Tags...)})
		a.nSeries++
	}
	s := t.list[i]
	switch typ {
	case Counter:
		s.value += m.Value * (1 / m.SampleRate)
	case Gauge:
		// The reference adds a signed value to an existing gauge and sets
		// it otherwise; a missing gauge is 0, so adding is the same.
		if m.Delta {
			s.value += m.Value
		} else {
			s.value = m.Value
		}
		s.ttl = a.cfg.GaugesMaxTTL
	case Timer:
		s.values = append(s.values, m.Value)
		s.count += 1 / m.SampleRate
		a.samples++
	case Set:
		if s.members == nil {
			s.members = make(map[string]struct{})
		}
		if _, dup := s.members[m.SetValue]; !dup {
			s.members[m.SetValue] = struct{}{}
			a.samples++
		}
	}
	return nil
}

// seriesKey appends an unambiguous encoding of name and tags to b:
// every string prefixed by its length.
func seriesKey(b []byte, name string, tags []ingest.Tag) []byte {
	b = binary.AppendUvarint(b, uint64(len(name)))
	b = append(b, name...)
	for _, t := range tags {
		b = binary.AppendUvarint(b, uint64(len(t.Key)))
		b = append(b, t.Key...)
		b = binary.AppendUvarint(b, uint64(len(t.Value)))
		b = append(b, t.Value...)
	}
	return b
}

// Flush returns the derived series of the interval that ends now, all
// at now (in micros), and starts a new interval. Series come by type
// (counters, timers, gauges, sets), each type in the order its series
// first came. With the default prefixes, for a series "api.hits":
//
//	counter   stats.counters.api.hits.rate    count / FlushInterval in seconds
//	          stats.counters.api.hits.count   Σ value/sampleRate
//	timer     stats.timers.api.hits.<stat>    see summarise: count_90, mean_90,
//	          upper_90, sum_90, sum_squares_90, std, upper, lower, count,
//	          count_ps, sum, sum_squares, mean, median
//	gauge     stats.gauges.api.hits           the current value
//	set       stats.sets.api.hits.count       distinct members
//
// Each point carries its series' tags; the Tags slices are shared with
// the Aggregator and must not be modified. The reference's own metrics
// (numStats, processing_time, bad_lines_seen, ...) and timer histograms
// are not produced.
func (a *Aggregator) Flush(now time.Time) []ingest.Point {
	t := now.UnixMicro()
	secs := a.cfg.FlushInterval.Seconds()
	n := len(a.tables[Counter].list)*2 + len(a.tables[Gauge].list) + len(a.tables[Set].list) +
		len(a.tables[Timer].list)*len(a.stats)
	out := make([]ingest.Point, 0, n)
	emit := func(name string, tags []ingest.Tag, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return // an overflowing sum: never store a non-finite value
		}
		out = append(out, ingest.Point{Name: name, Tags: tags, Value: v, Time: t})
	}
	for _, s := range a.tables[Counter].list {
		if s.out == nil {
			s.out = []string{a.outName(Counter, s.name, "rate"), a.outName(Counter, s.name, "count")}
		}
		emit(s.out[0], s.tags, s.value/secs)
		emit(s.out[1], s.tags, s.value)
	}
	for _, s := range a.tables[Timer].list {
		a.summary = summarise(a.summary[:0], a.cfg.Percentiles, s.values, s.count, secs)
		if s.out == nil {
			s.out = make([]string, len(a.stats))
			for i, st := range a.stats {
				s.out[i] = a.outName(Timer, s.name, st)
			}
		}
		for _, st := range a.summary {
			emit(s.out[st.name], s.tags, st.value)
		}
	}
	for _, s := range a.tables[Gauge].list {
		if s.out == nil {
			s.out = []string{a.outName(Gauge, s.name, "")}
		}
		emit(s.out[0], s.tags, s.value)
	}
	for _, s := range a.tables[Set].list {
		if s.out == nil {
			s.out = []string{a.outName(Set, s.name, "count")}
		}
		emit(s.out[0], s.tags, float64(len(s.members)))
	}
	a.reset()
	return out
}

// suffix returns the text Suffix adds to every name.
func (a *Aggregator) suffix() string {
	if a.cfg.Suffix == "" {
		return ""
	}
	return "." + a.cfg.Suffix
}

// outName names a derived series: prefix, name, stat and suffix.
func (a *Aggregator) outName(typ Type, name, stat string) string {
	return joinName(a.prefix[typ], name, stat) + a.suffix()
}

// reset starts a new interval, forgetting series as configured: with
// DeleteCounters, DeleteTimers or DeleteSets every series of that type
// (the reference deletes them all after each flush, so only series that
// receive something are reported), with DeleteGauges the gauges idle for
// GaugesMaxTTL flushes.
func (a *Aggregator) reset() {
	a.samples = 0
	for typ := Counter; typ <= Set; typ++ {
		t := &a.tables[typ]
		kept := t.list[:0]
		for _, s := range t.list {
			forget := false
			switch typ {
			case Counter:
				forget = a.cfg.DeleteCounters
				s.value = 0
			case Timer:
				forget = a.cfg.DeleteTimers
				s.values, s.count = s.values[:0], 0
				if cap(s.values) > 1024 {
					s.values = nil // let one burst's buffer go
				}
			case Set:
				forget = a.cfg.DeleteSets
				s.members = nil
			case Gauge:
				if a.cfg.DeleteGauges {
					s.ttl--
					forget = s.ttl < 1
				}
			}
			if !forget {
				kept = append(kept, s)
			}
		}
		if len(kept) == len(t.list) {
			continue
		}
		clear(t.list[len(kept):])
		a.nSeries -= len(t.list) - len(kept)
		t.list = kept
		clear(t.index)
		for i, s := range t.list {
			a.key = seriesKey(a.key[:0], s.name, s.tags)
			t.index[string(a.key)] = i
		}
	}
}
