// Package influx decodes InfluxDB line protocol request bodies into
// points. It is the pure-parser layer of the daemon's Influx receiver
// (the /write endpoint): bytes in, points out, no I/O. Tokenising is
// done by github.com/influxdata/line-protocol/v2/lineprotocol; this
// package maps its lines to points, validates them and bounds them.
//
// # Glossary
//
//   - line: "measurement[,tag=value...] field=value[,field=value...] [timestamp]".
//     Blank lines and "#" comment lines are skipped.
//   - measurement, field: a line has one measurement and one or more
//     fields. Each numeric field becomes one point named
//     "measurement.field" (cpu,host=a usage=0.5 gives cpu.usage), the
//     way Graphite-style stores flatten Influx data, so every point has
//     a single float64 value. The render API names a tagged point
//     Graphite 1.1's way, "cpu.usage;host=a", so names, tag keys and
//     tag values must also pass Graphite's tag rules (no ';' in a name,
//     no ";!^=" in a key, no ';' in a value nor '~' first): see
//     ingest.GraphiteTagBytes. A line breaking them is refused with its
//     reason, never stored under a mangled name. A tag called "name",
//     which Graphite reserves for the metric name, is kept as "name_"
//     (ingest.NameTag).
//   - field value: float (1.5), integer (1i), unsigned (1u), boolean
//     (t, true, F, ...) or string ("x"). Integers become float64, exact
//     up to 2^53; booleans 1 and 0; string fields are skipped and
//     counted as ignored. NaN and infinities cannot be written in line
//     protocol; numbers out of range (1e400, 9223372036854775808i) make
//     the line invalid.
//   - precision: the unit of the timestamps of a body, the write API's
//     "precision" parameter (ns, us, ms, s; see ParsePrecision). Times
//     are converted to micros; nanoseconds round down. A line without a
//     timestamp gets the decoder's clock, read once per body.
//   - line number: 1-based, counting every newline of the body (blank,
//     comment and multi-line string lines too), as the tokeniser counts
//     them. Errors about a line are *ingest.LineError.
package influx
