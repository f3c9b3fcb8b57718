// Package statsd parses the StatsD line protocol and aggregates its
// metrics into the series the reference StatsD (github.com/statsd/statsd)
// flushes to Graphite. Both halves are pure: the Parser turns bytes into
// Metrics, the Aggregator turns Metrics into ingest.Points when told the
// time. Neither does I/O, reads a clock or starts goroutines.
//
// # Glossary
//
//   - line: "name:value|type[|@rate][|#tag:value,...]". A datagram holds
//     lines separated by newlines; the caller splits them.
//   - type: c (Counter), g (Gauge), ms (Timer), h (Histogram), s (Set).
//     Histograms are aggregated as timers, as DogStatsD-style servers do;
//     the reference knows only ms and counts h, like any other unknown
//     type, as a counter. Here unknown types are refused.
//   - multiple values: "name:1|c:2|c|@0.5" carries two values for one
//     name, as the reference accepts (it splits the text before the tags
//     on ":"); each becomes a Metric.
//   - sample rate: "@r" with 0 < r ≤ 1: the client sent one value in
//     1/r, so a counter counts value/r and a timer's count grows by 1/r.
//   - gauge delta: a gauge value written with a sign, "+3" or "-3",
//     adjusts the gauge; "3" sets it. A gauge that does not exist yet is
//     0, so "-3" on a new gauge makes it -3, as in the reference.
//   - tags: DogStatsD tags after "|#": comma-separated "key:value"
//     pairs, split at the first ":". A tag without a value is refused
//     (the reference turns it into a Graphite tag carbon refuses).
//   - flush: the end of an interval, when the Aggregator reports every
//     series and restarts counters, timers and sets.
//
// # Values
//
// Values use Go's ParseFloat syntax and must be finite: NaN, ±Inf and
// 1e400 are refused, as are negative timers ("ms", as the reference
// does). Names are validated by ingest.ValidName, not rewritten: the
// reference's default key sanitising (spaces to "_", "/" to "-", other
// characters dropped) would silently merge distinct series.
//
// # Aggregation
//
// Series are named as the reference's Graphite backend names them with
// legacyNamespace=false (see Aggregator.Flush): stats.counters.X.rate
// and .count, stats.timers.X.<stat>, stats.gauges.X, stats.sets.X.count.
// Timer statistics reproduce the reference's lib/process_metrics.js;
// the tests compare them with its output, bit for bit.
package statsd
