package tsstore

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics exposes Stats to Prometheus: gauges and counters read the
// store's counters when scraped; the flush latency is a histogram.
type metrics struct {
	reg   prometheus.Registerer
	cs    []prometheus.Collector
	flush prometheus.Histogram
}

func newMetrics(s *Store, reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{reg: reg}
	if reg == nil {
		return m, nil
	}
	c := &s.counters
	gauge := func(name, help string, f func() float64) {
		m.cs = append(m.cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "pgts", Subsystem: "store", Name: name, Help: help}, f))
	}
	counter := func(name, help string, f func() float64) {
		m.cs = append(m.cs, prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "pgts", Subsystem: "store", Name: name, Help: help}, f))
	}
	gauge("cache_bytes", "Bytes of pending data (buffered points and closed slots) accounted against the memory budget.", func() float64 { return float64(s.mem.used.Load()) })
	gauge("series_bytes", "Bytes of the series in memory (keys, index, consolidation states not evicted).", func() float64 { return float64(s.mem.series.Load()) })
	gauge("cache_budget_bytes", "The memory budget (max-memory).", func() float64 { return float64(s.mem.max) })
	gauge("series", "Series known to the store.", func() float64 { return float64(s.nSeries.Load()) })
	gauge("buffered_points", "Raw points waiting for a flush.", func() float64 { return float64(c.buffered.Load()) })
	gauge("unflushed_series", "Series with data (closed slots, raw points, state) not yet written.", func() float64 { return float64(c.unflushed.Load()) })
	counter("points_added_total", "Points accepted.", func() float64 { return float64(c.added.Load()) })
	counter("raw_points_stored_total", "Raw points written.", func() float64 { return float64(c.rawStored.Load()) })
	counter("slots_stored_total", "Archive slots written.", func() float64 { return float64(c.slots.Load()) })
	counter("flushes_total", "Flushes that wrote everything they took.", func() float64 { return float64(c.flushes.Load()) })
	counter("states_evicted_total", "Consolidation states of idle series dropped from memory (they are in pgts.ds_state).", func() float64 { return float64(c.evicted.Load()) })
	counter("states_reloaded_total", "Evicted consolidation states read back for a new point.", func() float64 { return float64(c.reloaded.Load()) })
	counter("flush_failures_total", "Flushes that failed; their data stays buffered.", func() float64 { return float64(c.flushFails.Load()) })
	refused := prometheus.NewDesc("pgts_store_points_refused_total", "Points refused, by reason.", []string{"reason"}, nil)
	m.cs = append(m.cs, &refusedCollector{desc: refused, s: s})
	m.flush = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "pgts", Subsystem: "store", Name: "flush_seconds",
		Help:    "Time a flush of the write-back cache takes.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14), // 5 ms to 41 s
	})
	m.cs = append(m.cs, m.flush)
	for i, col := range m.cs {
		if err := reg.Register(col); err != nil {
			for _, done := range m.cs[:i] {
				reg.Unregister(done)
			}
			return nil, fmt.Errorf("registering store metrics: %w", err)
		}
	}
	return m, nil
}

func (m *metrics) observeFlush(d time.Duration) {
	if m != nil && m.flush != nil {
		m.flush.Observe(d.Seconds())
	}
}

func (m *metrics) unregister() {
	if m == nil || m.reg == nil {
		return
	}
	for _, c := range m.cs {
		m.reg.Unregister(c)
	}
}

// refusedCollector reports the refusal counters under one name with a
// reason label.
type refusedCollector struct {
	desc *prometheus.Desc
	s    *Store
}

func (r *refusedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- r.desc }

func (r *refusedCollector) Collect(ch chan<- prometheus.Metric) {
	c := &r.s.counters
	for _, x := range []struct {
		reason string
		n      int64
	}{
		{"unmatched", c.unmatched.Load()},
		{"out_of_order", c.outOfOrder.Load()},
		{"duplicate", c.duplicate.Load()},
		{"invalid", c.invalid.Load()},
		{"max_series", c.overLimit.Load()},
		{"memory", c.full.Load()},
		{"raw_window", c.rawRefused.Load()},
		{"future", c.future.Load()},
		{"too_old", c.tooOld.Load()},
	} {
		ch <- prometheus.MustNewConstMetric(r.desc, prometheus.CounterValue, float64(x.n), x.reason)
	}
}
