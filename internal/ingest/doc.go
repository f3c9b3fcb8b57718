// Package ingest holds what the receivers of the metrics daemon (pgts
// serve) share: the Point they produce, the Limits that bound every
// parser, the rules for valid names and tags, the errors parsers return,
// and an Interner that lets parsers produce strings without allocating
// for names they have seen before.
//
// Each protocol lives in a subpackage (graphite, statsd, influx,
// remotewrite) as a pure parser: bytes in, points out, no I/O, no
// goroutines, no logging. The connection layer (reading sockets, frames
// and HTTP bodies under deadlines) and the sink (appending to storage)
// sit on top of these parsers and are not part of this package tree.
//
// # Glossary
//
//   - point: one sample, a Point: a metric name, tags, a float64 value
//     and a time in micros.
//   - micros: a time as int64 microseconds since 1970-01-01T00:00:00Z,
//     UTC. Every Point.Time is micros within [MinTime, MaxTime).
//   - name: the metric name (a Graphite path, an Influx
//     "measurement.field", a Prometheus __name__). See ValidName.
//   - tag: a key=value pair qualifying a name (Graphite 1.1 tags, StatsD
//     DogStatsD-style tags, Influx tags, Prometheus labels). A Point's
//     tags are sorted by key and keys are unique. See ValidTag.
//   - entry: the unit a parser accepts or refuses as a whole: a line of
//     Graphite plaintext, StatsD or Influx line protocol, an element of
//     a Graphite pickle list, a sample of a Prometheus time series.
//   - message: what one parser call consumes: a line, a pickle frame, an
//     Influx request body, a remote-write request body.
//
// # Ownership
//
// Parsers never retain their input: every string in a Point is an
// ordinary Go string that owns its bytes (copied, or shared with an
// earlier identical string through the parser's Interner), so the input
// buffer may be reused as soon as a call returns.
//
// Parsers append to a caller-provided []Point and reuse the backing
// arrays of the Tags of the elements in its spare capacity (between len
// and cap). A caller reusing a slice with dst[:0] therefore must not
// keep the Tags of the Points it held before; copy them to keep them.
// Steady-state parsing of known series then allocates nothing.
//
// # Errors
//
// Errors wrap one of the sentinel kinds (ErrSyntax, ErrName, ErrTag,
// ErrValue, ErrTimestamp, ErrLimit, ErrUnsupported), so that a caller
// can count refusals by kind with errors.Is. An error about one line of
// a multi-line message is a *LineError carrying the line number; one
// about an element of a pickle list or a remote-write series is an
// *EntryError carrying its index. Parsers of multi-entry messages skip a
// bad entry, count it in Stats and keep the first such error, and return
// an error only when the whole message is refused.
package ingest
