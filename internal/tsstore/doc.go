// Package tsstore is the storage layer of the metrics daemon (pgts serve):
// the receivers Add points to a Store, which consolidates them into
// round-robin archives in memory (package rra), buffers closed slots and
// raw points in a write-back cache under a memory budget, and flushes them
// to PostgreSQL in batches; the Graphite render API reads them back with
// Find and Fetch.
//
//	receivers ──Add/TryAdd──> registry (64 locked shards: series → DS, buffers)
//	                                  │ every FlushInterval, or at 80% of MaxMemory (pending)
//	                                  ▼
//	                 Flush: 1 register new series (one INSERT per 5,000)
//	                        2 raw points ──> copyload (binary COPY) ──> raw series table
//	                        3 slots + recompute reads + DS state ──> FlushWorkers
//	                          transactions, statements of bounded size:
//	                          pgts.rra_data, pgts.ds_state
//	                        4 series + pending over MaxMemory: evict the DS of
//	                          idle series (reloaded by their next point)
//
// # Glossary
//
//   - series: one metric name with its tags. Its key is the name, followed
//     by its tags in Graphite's tagged form when it has any
//     (cpu.user;dc=eu;host=a); Find and Fetch name series by key.
//   - registry: pgts.metric, one row per series (id, key, name, tags, rule
//     and archives), all of it cached in memory. New series are registered
//     in batches at the next flush, never one round trip per series.
//   - rule: a regexp with its consolidation (Graphite, the default, or RRD
//     with a heartbeat), step and archives (rra.Rule); the first rule
//     matching a name gives the series its schema, for good: a reload
//     (SetRules) applies to series seen afterwards.
//   - DS: the consolidation state of one series (rra.DS): last update, open
//     primary data point, open slot of each archive. Saved in pgts.ds_state
//     and loaded by Open, so a restarted daemon resumes: in RRD
//     consolidation at every flush that follows a point; in Graphite
//     consolidation at the series' first flush and at the flush after the
//     latest slot of a coarser archive advanced (rra.DS.SlotMark), since
//     its state holds no values, only those slots (a restored DS reads
//     the finer values of a slot up to them back from pgts.rra_data with
//     a recompute request).
//   - bundle: an archive shape (consolidation function, slot step, number of
//     slots), pgts.rra_bundle; every series whose archive has that shape
//     stores it in the bundle's rows.
//   - segment: SegmentWidth (200) consecutive series ids. Series id / 200 is
//     its segment, id % 200 + 1 its position in the segment's rows.
//   - slot row: pgts.rra_data(bundle_id, seg, slot, vals, times): ring slot
//     number slot of one bundle for a whole segment, packed (packed.go):
//     vals and times are bytea of 8 bytes a position, big-endian. Position
//     pos holds the IEEE 754 bits of the series' value (0x7FF0000000000001
//     for NULL) and the time of the slot it holds, in Unix seconds: its
//     start in Graphite consolidation, its end in RRD consolidation
//     (0x8000000000000000, the least int8, for nothing).
//   - lap: a ring is overwritten every span (slots × step); a value whose
//     time is not the slot time a reader asks for is from another lap and is
//     ignored (the least int8 for a series that never wrote the slot).
//   - write-back cache: per series, the raw points and closed slots not yet
//     written. Its bytes, with the registry's, are accounted against
//     MaxMemory (estimates: 176 bytes a series plus its key and index
//     entries, its DS as rra.Schema.DSBytes has it, 80 for the buffers'
//     struct while it has any, 16 a raw point, 40 an update of the DS's
//     buffer by capacity); TestMemoryAccounting and TestSeriesFootprint
//     check them against the live heap.
//
// # Graphite consolidation
//
// The default: a point fills its slot as whisper's would, the coarser
// archives follow (package rra, graphite.go), and Fetch returns
// graphite-web's window; see docs/serve.md. Points dated past the clock
// plus FutureTolerance are refused whole (Stats.Future). A late point
// older than the coarse slots its DS keeps in memory leaves a recompute
// request; the flush writing its slot reads the finer slots in the same
// transaction, and the DS's answer is written at the next flush.
//
// The rest of this section is RRD consolidation (consolidation = "rrd").
//
// # RRD consolidation, worked example
//
// The series of an RRD rule with a 10 s step and a 20 s heartbeat; each point's
// value covers the time since the point before it (the golden values of
// TestGoldenArchives):
//
//	points (s:value)   0:5   2.5:1  7.5:3  10:2 | 20:4 | 30:6 | 75:1  80:2 | 90:3
//	10 s slots         ─────── (0,10] ──────────┼(10,20]┼(20,30]┼ 40..70 ┼ (70,80] ┼ (80,90]
//	value                      2.25             │  4    │  6    │  NaN   │   2     │  3
//
// In detail:
//
//   - Time-weighted mean: in (0, 10], 1 holds for 2.5 s, 3 for 5 s and 2 for
//     2.5 s: 0.25*1 + 0.50*3 + 0.25*2 = 2.25. The first point (0 s) only
//     starts the clock.
//   - Heartbeat gap: 45 s pass between 30 s and 75 s, more than the 20 s
//     heartbeat, so (30, 75] is unknown: the slots ending at 40, 50, 60 and
//     70 s are NaN, and the 5 s of (70, 75] too.
//   - xff: the slot (70, 80] is half unknown; 0.5 is not more than the
//     archive's xff 0.5, so it keeps the mean of its known half, 2.
//   - A 30 s wmean archive: (0, 30] = (2.25 + 4 + 6) / 3 = 4.083; (30, 60]
//     NaN; (60, 90] = (5 s × 2 + 10 s × 3) / 15 s = 2.667, 15 of 30 s
//     unknown, within xff. A max archive keeps 6, NaN and 3.
//   - A point older than the series' last update (50 s after 75 s) is not
//     consolidated (rra.ErrOutOfOrder; Stats.OutOfOrder), nor a second point
//     at the same time (Stats.Duplicate); both are still kept raw.
//
// # Storage layout
//
// Archives use the layout of Tgres: one row per (bundle, segment, slot)
// holding that slot for 200 series, packed 8 bytes a position. A flush
// writes its slots with statements of at most 20,000 slots per worker,
// grouped by target row in the daemon (one parameter element per row:
// its runs of consecutive positions with their packed values and times,
// of several updates of one position the latest slot time, then the last
// given), pgts.rra_put copying each run into its row; rows missing are
// inserted in the same statement), and the DS states
// likewise, 200 to a pgts.ds_state row, at most 1 MiB a statement (a pgx
// connection keeps its largest parameter buffer for life). Measured against one row per (series,
// slot), upserted with one INSERT ... ON CONFLICT per flush, on this 2-core
// machine shared with other work (median of 3 runs, 20 flushes each of one
// slot for 20,000 series, rings already full):
//
//	go test -run '^$' -bench FlushLayout -benchtime 20x -count 3 ./internal/tsstore
//
//	layout                      slots/s (median, range)        bytes/slot
//	segments of 200 (chosen)    176,700  (146,800 - 303,400)   34.5
//	one row per series, slot     52,800   (47,100 -  59,000)  136.2
//
// A segment row is about 3.2 KB packed (3.3 KB as the arrays it was
// before catalog migration 13), stored uncompressed in line (storage
// PLAIN), so an update never rewrites TOAST. Packed, the server copies a
// row to send it and copies runs to update it, where arrays cost it a
// conversion per element both ways (docs/benchmarks.md, "Archive rows
// packed"). docs/rra-layout.md has the details.
//
// # Reads
//
// Fetch computes what graphite-web's whisper reader returns (see
// archiveWindow): the range clamped to the longest span and to now, the
// finest archive whose span reaches back to from, values labelled by the
// start of their slot (an RRD slot ending at T is labelled T-step) from
// from - from%step + step to until - until%step. A series with archives is
// always read from them; a series kept only raw is averaged per
// RawConfig.Step in SQL, widened to at most maxDataPoints (or
// maxFetchValues) steps. The series of one segment reading one archive
// over the same slots are read with one statement. Slots and raw points
// still in the cache are included.
//
// # Guarantees
//
// Close flushes everything: once it returns nil, every accepted point is in
// PostgreSQL, and the DS states with it, in the same transactions as the
// slots they closed. A crash loses what was accepted since the last flush.
// A failed flush keeps its data for the next one; the raw points of a flush
// that failed after some of its COPY batches committed are written again
// (at least once), while slots and states are idempotent.
package tsstore
