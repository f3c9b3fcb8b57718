// Package serve is the receiving side of the metrics daemon (pgts serve):
// the listeners that speak Graphite plaintext and pickle, StatsD, Influx
// line protocol and Prometheus remote write, and hand the points they parse
// to a Sink, the storage.
//
// Each receiver is the middle layer of three: below it a pure parser of
// package ingest or its subpackages (bytes in, points out), above it the
// Sink. This package owns what lies between: sockets, deadlines, limits,
// bounded concurrency, backpressure, counting and logging refusals, and the
// StatsD flush loop. It stores nothing itself.
//
// # Glossary
//
//   - receiver: one listening socket and the goroutines serving it:
//     graphite_tcp, graphite_udp, pickle, statsd_udp, statsd_tcp, and the
//     HTTP endpoints influx and remote_write. These names are the protocol
//     label of the metrics.
//   - sink: the storage the points go to (Sink); *tsstore.Store in the
//     daemon, an in-memory recorder in tests.
//   - batch: the points one connection has parsed and not yet handed to the
//     sink; at most batchPoints, handed over when full or when the
//     connection has nothing more to read.
//   - backpressure: Sink.Add blocks while storage is behind; a TCP or HTTP
//     receiver waiting in it stops reading its socket, so the sender's
//     writes block in turn and nothing piles up here.
//   - drop: a point the sink refused without waiting (Sink.TryAdd, used by
//     UDP receivers, which cannot slow a sender down) or that the StatsD
//     aggregator refused as over its bounds; counted, never silent.
//   - refusal: an entry a parser rejected (a bad line, pickle element,
//     remote-write series); counted by kind and logged at most once per
//     log interval per receiver with a count of the rest.
//   - drain: on Shutdown, listeners close, open connections stop reading
//     at once, and what they had parsed still goes to the sink; then StatsD
//     is flushed a last time and the sink is closed.
//
// # Flow
//
//	TCP :2003 graphite ──┐ conn goroutine: deadline, line ≤ max-line,
//	TCP :2004 pickle   ──┤ frame ≤ max-pickle-frame, batch ──► Sink.Add (blocks)
//	HTTP /write, /api/v2/write, /api/v1/write ── body ≤ max-body,
//	     token, ≤ max-concurrent requests ────────────────► Sink.Add (blocks)
//	UDP :2003 graphite ── datagram ≤ max-datagram ─────────► Sink.TryAdd ─► drops
//	UDP/TCP :8125 statsd ── lines ─► Aggregator ─(every flush-interval)─► Sink.Add
//
//	every receiver ──► counters (/metrics) and rate-limited parse-error logs
//
// # Memory
//
// What this package holds is bounded by its configuration: per TCP
// connection a read buffer of max-line bytes, a batch of batchPoints points
// and its parser's caches (parser-cache bytes, twice), at most
// max-connections connections per listener; per HTTP request slot a body
// of max-body bytes, the decompressed remote-write body (max-decoded) and
// the points of one message, max-concurrent slots; one datagram buffer per
// UDP socket; and the StatsD aggregator's max-series series and max-samples
// samples. The storage's own budget is max-memory, enforced by the sink.
package serve
