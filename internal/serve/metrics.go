package serve

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pgts/pgts/internal/ingest"
)

// Receiver names: the protocol label of the metrics and the receiver
// attribute of the logs.
const (
	protoGraphiteTCP = "graphite_tcp"
	protoGraphiteUDP = "graphite_udp"
	protoPickle      = "pickle"
	protoStatsDUDP   = "statsd_udp"
	protoStatsDTCP   = "statsd_tcp"
	protoInflux      = "influx"
	protoRemoteWrite = "remote_write"
)

var allProtocols = []string{protoGraphiteTCP, protoGraphiteUDP, protoPickle, protoStatsDUDP, protoStatsDTCP, protoInflux, protoRemoteWrite}

// metrics are the daemon's receiving-side Prometheus metrics.
type metrics struct {
	received    *prometheus.CounterVec // protocol: points parsed (StatsD: metrics)
	refused     *prometheus.CounterVec // protocol, kind: entries parsers refused
	ignored     *prometheus.CounterVec // protocol: values left out by design
	dropped     *prometheus.CounterVec // protocol, reason: points shed
	waiting     *prometheus.GaugeVec   // protocol: points handed to the sink, not yet accepted
	conns       *prometheus.GaugeVec   // protocol: open TCP connections
	connQueued  *prometheus.CounterVec // protocol: connections that waited, over max-connections
	httpReqs    *prometheus.CounterVec // handler, code
	httpActive  prometheus.Gauge       // write requests holding a slot
	flushes     prometheus.Counter     // StatsD flushes
	flushPoints prometheus.Counter     // points StatsD flushes produced
	flushTime   prometheus.Histogram   // seconds a StatsD flush took, sink included
	reloads     *prometheus.CounterVec // result
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	const ns, sub = "pgts", "serve"
	m := &metrics{
		received: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "points_received_total",
			Help: "Points parsed, by receiver (StatsD: metrics before aggregation)."}, []string{"protocol"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "parse_errors_total",
			Help: "Lines, pickle elements, series or whole messages refused by a parser, by receiver and kind of the (first) refusal."},
			[]string{"protocol", "kind"}),
		ignored: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "values_ignored_total",
			Help: "Values left out by design: Influx string fields, Prometheus NaN samples and native histograms."}, []string{"protocol"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "points_dropped_total",
			Help: "Parsed points shed: refused by a full sink (UDP), by the StatsD aggregator's bounds, or left over when the sink failed."},
			[]string{"protocol", "reason"}),
		waiting: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "sink_waiting_points",
			Help: "Points handed to the storage and not yet accepted (queue depth; grows while storage applies backpressure)."}, []string{"protocol"}),
		conns: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "connections",
			Help: "Open TCP connections by receiver."}, []string{"protocol"}),
		connQueued: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "connections_queued_total",
			Help: "TCP connections that waited to be served because the receiver had max-connections open."}, []string{"protocol"}),
		httpReqs: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "http_requests_total",
			Help: "HTTP requests by handler and status code."}, []string{"handler", "code"}),
		httpActive: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "http_active_writes",
			Help: "Write requests being decoded or stored (at most http.max-concurrent)."}),
		flushes: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "statsd_flushes_total",
			Help: "StatsD flushes."}),
		flushPoints: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "statsd_flushed_points_total",
			Help: "Points the StatsD flushes produced."}),
		flushTime: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "statsd_flush_seconds",
			Help: "Time a StatsD flush took, handing its points to the storage included.", Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10)}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "rule_reloads_total",
			Help: "Reloads of the [[ds]] rules (SIGHUP) by result."}, []string{"result"}),
	}
	// Make every series visible from the start, at zero.
	for _, p := range allProtocols {
		m.received.WithLabelValues(p)
		m.waiting.WithLabelValues(p)
	}
	m.waiting.WithLabelValues("statsd")
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.received, m.refused, m.ignored, m.dropped, m.waiting, m.conns, m.connQueued,
		m.httpReqs, m.httpActive, m.flushes, m.flushPoints, m.flushTime, m.reloads} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering metrics: %w", err)
		}
	}
	return m, nil
}

// kindLabel names the kind of a parser refusal for the kind label.
func kindLabel(err error) string {
	switch {
	case errors.Is(err, ingest.ErrSyntax):
		return "syntax"
	case errors.Is(err, ingest.ErrName):
		return "name"
	case errors.Is(err, ingest.ErrTag):
		return "tag"
	case errors.Is(err, ingest.ErrValue):
		return "value"
	case errors.Is(err, ingest.ErrTimestamp):
		return "timestamp"
	case errors.Is(err, ingest.ErrLimit):
		return "limit"
	case errors.Is(err, ingest.ErrUnsupported):
		return "unsupported"
	default:
		return "other"
	}
}
