// Package render serves the Graphite-compatible query API that Grafana's
// Graphite data source speaks: /render, /metrics/find, /metrics/expand,
// /metrics/index.json, /functions, /version and the Graphite 1.1 tags API
// (/tags/...).
//
// The package owns the HTTP surface, the target-expression parser and the
// series functions (graphite-web 1.1's 154 names, one registry feeding both
// dispatch and /functions); storage is behind the small [Source] interface,
// plus [TagSource] for tagged series, which the daemon implements over its
// tables and tests implement with [MemSource].
//
// Glossary:
//
//   - path: a dot-separated metric name, "servers.web1.cpu".
//
//   - node: one dot-separated component of a path; node 0 is "servers".
//
//   - glob (path expression): a path whose nodes may hold *, ?, [a-z] and
//     {a,b}; it matches within one node, never across a dot.
//
//   - target: one expression to draw, a glob or a nested function call:
//     "sumSeries(servers.*.cpu)".
//
//   - series: values at a fixed step from a start time; a null (NaN here,
//     None in Graphite) is a missing point. The value at index i belongs to
//     time start + i*step (unix seconds).
//
//   - series list: what a glob or a function yields, zero or more series.
//
//   - consolidation: merging k adjacent points into one (by default the
//     average of the non-null ones; consolidateBy picks sum, min, max,
//     first, last or avg_zero) so a series fits maxDataPoints or a common
//     step:
//
//     step 10s, k=3:  [1, null, 5 | 2, 2, 2 | null]  ->  [3, 2, null]
//
//   - xFilesFactor: the fraction of non-null inputs a consolidated point
//     needs; Graphite's default 0 (one non-null suffices) unless
//     setXFilesFactor or a function's argument says otherwise.
//
//   - tagged series: "name;k1=v1;k2=v2", keys sorted (Graphite 1.1); its
//     tags object is {"k1": "v1", "k2": "v2", "name": "name"}. Tagged
//     series are selected with seriesByTag, never by a glob.
//
// Everything here is safe for concurrent use once built; each request
// evaluates with its own state. Times on the wire are unix seconds.
package render
