package statsd

import "github.com/pgts/pgts/internal/ingest"

// Type is the type of a StatsD metric, its "|type" field.
type Type uint8

// The metric types.
const (
	// Counter ("c") adds its value, scaled by 1/SampleRate, to a count
	// reset at each flush.
	Counter Type = iota + 1
	// Gauge ("g") sets a value kept across flushes, or adjusts it when
	// Delta is set.
	Gauge
	// Timer ("ms") adds a duration to the sample of the flush interval,
	// summarised at flush (count, mean, percentiles, ...).
	Timer
	// Histogram ("h") is aggregated exactly like Timer.
	Histogram
	// Set ("s") adds SetValue to a set whose size is reported at flush.
	Set
)

// String returns the protocol spelling of t: c, g, ms, h or s.
func (t Type) String() string {
	switch t {
	case Counter:
		return "c"
	case Gauge:
		return "g"
	case Timer:
		return "ms"
	case Histogram:
		return "h"
	case Set:
		return "s"
	}
	return "?"
}

// Metric is one value of a StatsD line.
type Metric struct {
	Name string
	// Tags are the DogStatsD tags of the line, sorted by key. Parsers
	// reuse the backing array (see package ingest).
	Tags []ingest.Tag
	Type Type
	// Value is the value of counters, gauges, timers and histograms.
	Value float64
	// SetValue is the member a Set adds.
	SetValue string
	// SampleRate is the "@rate" field, in (0, 1]; 1 when absent.
	SampleRate float64
	// Delta is set for a gauge whose value was written with a sign
	// ("+3", "-3"): it adjusts the gauge instead of setting it.
	Delta bool
}

// appendMetric extends dst by one Metric, reusing the Tags backing array
// of the element in dst's spare capacity, as ingest.AppendPoint does.
func appendMetric(dst []Metric) ([]Metric, *Metric) {
	if len(dst) < cap(dst) {
		dst = dst[:len(dst)+1]
	} else {
		dst = append(dst, Metric{})
	}
	m := &dst[len(dst)-1]
	tags := m.Tags[:0]
	*m = Metric{Tags: tags}
	return dst, m
}
