// Package rra is the round-robin archive math of the pgts metrics daemon:
// how points received at arbitrary times fill fixed-size rings of slots.
// It has two consolidations, chosen per rule:
//
//   - Graphite (the default, a Schema with heartbeat 0): as carbon writes
//     whisper files. A point fills the slot floor(t/step)*step of the
//     finest archive whose span covers it, labelled with that start; the
//     last write wins; each coarser archive's slot is the aggregate
//     (average, sum, min, max or last) of the next finer archive's slots
//     inside it when at least xff of them are known. See graphite.go and
//     DS.Put; the rest of this page is about the other.
//   - RRD: how points become evenly spaced primary data points, and how
//     those are consolidated, in the manner of RRDtool and Tgres.
//
// It does no I/O and reads no clock: time comes from the points, and from
// the caller's clock where the caller passes one (DS.Put, DS.Advance), so
// every result is deterministic.
//
// # Glossary
//
//   - micros: a time as int64 microseconds since 1970-01-01T00:00:00Z, in
//     [MinTime, MaxTime) (years 0001 to 9999, as in PostgreSQL). Every time
//     in this package is micros; every duration (step, span, heartbeat) is
//     a whole number of seconds, given as a time.Duration.
//   - point: one (time, value) received for a series.
//   - data source (DS): the state of one series between its points: the
//     last update time, the open primary data point and the open slot of
//     each archive. Its Schema (step, heartbeat, archives) is shared by all
//     the series matched by the same Rule.
//   - step: the length of a primary data point (the DS step) or of a slot
//     (an archive step). Steps are aligned to the epoch: the k-th interval
//     is (k*step, (k+1)*step], open on the left and closed on the right, so
//     a point exactly on a boundary belongs to the interval it ends.
//   - heartbeat: the longest gap between two points across which the later
//     point's value is trusted. A point's value covers the time since the
//     point before it; if that gap exceeds the heartbeat, the whole gap is
//     unknown instead. A primary data point with more unknown time than the
//     heartbeat is unknown too (only possible when heartbeat < step).
//   - unknown: time for which no value is known: before the first point,
//     gaps over the heartbeat, and the intervals of NaN points. Unknown time
//     carries no weight in a mean and is reported as NaN when it dominates.
//   - primary data point (PDP): the time-weighted mean of the known values
//     of one DS step. A PDP with no known time is unknown (NaN).
//   - archive (RRA): a ring of Size slots of one step; it keeps the last
//     Span = Size*step of the series. Written "[cf:]step:span[:xff]", for
//     example "10s:6h" or "max:1h:30d:0.5".
//   - consolidation function (CF): how an archive combines the PDPs of one
//     slot: wmean (time-weighted mean, the default), min, max or last.
//   - xff (x-files factor): the fraction of a slot that may be unknown while
//     its value is still reported; a slot with more unknown time is NaN.
//   - slot time: the end T of a slot's interval (T-step, T]; the slot index
//     of T in its ring is (T/step) mod Size (floored, so never negative).
//   - update: a closed slot the caller must persist: archive index, slot
//     index, slot time, value; runs of consecutive slots with one value
//     (after a gap, say) come as a single Update with a Count.
//
// # From points to slots
//
//	points      ●   ●  ●        ●     ●   ●      ●      ●          (uneven)
//	           ─┼─────────┼─────────┼─────────┼─────────┼─────────┼─▶ time
//	PDPs        │  10 s   │  10 s   │  10 s   │  10 s   │  10 s   │   DS step, wmean,
//	            │   2.25  │   4.0   │   NaN   │   3.5   │   ...   │   heartbeat
//	           ─┼─────────┴─────────┴─────────┼─────────┴─────────┴─
//	slots       │        30 s: wmean 3.125    │ ...                    archive step, CF, xff
//	            │ (1/3 unknown <= xff 0.5)    │
//	ring        [ s0 | s1 | ... | s(Size-1) ]    slot index = (T/step) mod Size
//
// # Worked example: the time-weighted mean
//
// A DS with a 10 s step receives points at 0 s (any value: it only starts
// the clock), at 2.5 s with value 1, at 7.5 s with value 3 and at 10 s
// with value 2. Each value covers the time since the point before it:
//
//	value
//	  3 ┤           ┌──────────────────────┐
//	  2 ┤           │                      └──────────┐
//	  1 ┤ ┌─────────┘                                 │
//	    ┼─┴─────────┴──────────────────────┴──────────┴──▶ time (s)
//	      0        2.5                    7.5        10
//	      ●         ●1                     ●3         ●2
//
// 1 holds for 2.5 s, 3 for 5 s and 2 for 2.5 s of the step (0 s, 10 s],
// so the PDP ending at 10 s is 0.25*1 + 0.50*3 + 0.25*2 = 2.25. The point
// at 10 s lies on the boundary, so it completes that PDP at once.
//
// Had the point at 7.5 s been NaN, its 5 s would be unknown and the PDP
// would be (2.5*1 + 2.5*2) / 5 = 1.5 over its 5 known seconds; a 10 s
// archive with xff 0.5 keeps 1.5 (half unknown is not more than 0.5), one
// with xff 0.4 stores NaN.
//
// An archive's wmean weighs each PDP by its known time, so a slot's value
// is the time-weighted mean of all the known time in the slot, whatever
// the DS step. MIN, MAX and LAST pick among the known PDPs' means.
//
// # Storage
//
// Each archive of a series is a ring of Size slots, stored by the caller:
// the slot of time T is at index (T/step) mod Size, so a slot is
// overwritten one Span later and a series never needs more room than the
// sum of its archives' sizes. A DS holds no ring, only what is still
// open (the last update time, the open PDP and the open slot of each
// archive, about 100 bytes) and the closed slots the caller has not yet
// taken with ClosedSlots. MarshalBinary saves that state next to the
// rings; NewDS and UnmarshalBinary resume it after a restart. In Graphite
// consolidation the saved state holds no values, only the pending
// updates: the finer values a coarser slot is computed from are in the
// rings, and a restored DS asks for them (see graphite.go).
//
// # Decisions
//
//   - Same timestamp: a point at the time of the previous point would
//     cover an empty interval; it is rejected with ErrDuplicate, so the
//     first value for a time wins and the caller can count the others.
//   - Out of order: a point before the last update is rejected with
//     ErrOutOfOrder; closed slots are never rewritten.
//   - NaN values are accepted and mark their interval unknown; ±Inf is
//     rejected with ErrValue.
//   - Unknown slots are emitted as NaN updates, so that a ring slot never
//     keeps a value from its previous lap.
//   - Rules are matched in order and the first whose pattern matches wins.
package rra
