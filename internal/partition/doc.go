// Package partition manages the partitions of pgts series tables: tables
// range-partitioned by time with PostgreSQL's native declarative
// partitioning. Its pure half (interval.go, bounds.go, names.go,
// literal.go) is the partition math: which partition a time belongs to,
// what that partition is called, and how its bounds are written in and
// read back from SQL. That half touches no database and keeps no state, so
// it is safe for concurrent use; the Manager applies it to the database.
//
// # Glossary
//
//   - micros: a time as int64 microseconds since 1970-01-01T00:00:00Z.
//     Every time in this package is micros, in UTC.
//   - supported range: [MinMicros, MaxMicros), 0001-01-01T00:00:00Z up
//     to 10000-01-01T00:00:00Z, the years PostgreSQL prints with four
//     digits and no era. Functions taking a time refuse any other.
//   - series table: a table PARTITION BY RANGE on its time column, whose
//     partitions pgts creates and drops.
//   - partition (leaf): one table of a series table holding the times
//     [lo, hi), written FOR VALUES FROM (lo) TO (hi). It may itself be
//     hash-partitioned by a device column into sub-partitions.
//   - interval: the length of every partition, a PostgreSQL interval.
//     Either calendar months (1 mon, 3 mons, 1 year) or a fixed
//     duration (01:00:00, 1 day, 7 days); never both, never under a
//     second nor over 100 years.
//   - kind: how an interval's partitions are aligned. Calendar: whole
//     months counted from 1970-01. Weekly: whole weeks from Monday
//     1970-01-05. Fixed: multiples of the duration from the epoch.
//   - bound: a partition's lo or hi; lo is in the partition, hi is not.
//     Bounds are always whole seconds, and whole days for calendar,
//     weekly and whole-day intervals.
//   - time type: the SQL type of the time column (timestamptz,
//     timestamp, date, or bigint counting epoch s, ms or µs), which
//     decides how bounds are spelled in SQL.
//
// # Alignment
//
// Partition starts are multiples of the interval counted from a fixed
// origin, so they do not depend on when the first row arrived, and every
// process computes the same partitions. Floor division puts times before
// the origin (before 1970) in the right partition too:
//
//	interval 1 week, origin Monday 1970-01-05 (weeks start on Monday)
//
//	      Mon 2018-12-31     Mon 2019-01-07     Mon 2019-01-14
//	  ... ───┬──────────────────┬──────────────────┬─── ...
//	         │   2018-12-31     │   2019-01-07     │
//	         │  [lo,        hi) │  [lo,        hi) │
//	                      ▲     ▲
//	          Sun 2019-01-06    Mon 2019-01-07 00:00:00 is lo: it
//	          belongs to the    starts the next partition
//	          week before
//
//	interval 3 mons, origin 1970-01: quarters
//
//	  1969-10-01   1970-01-01   1970-04-01   1970-07-01
//	  ──┬────────────┬────────────┬────────────┬──
//	    │ month -3   │ month 0    │ month 3    │    month = (year-1970)*12 + month-1
//	                                                partition = floor(month/3)*3
//
//	interval 90 minutes (fixed), origin the epoch: lo = floor(t/d)*d
//
//	  1969-12-31 22:30   1970-01-01 00:00   01:30   03:00
//	  ──┬──────────────────┬──────────────────┬───────┬──
//
// Where an alignment falls outside the supported range (a 5-month interval
// would start a partition in 1 BC), the first and last partitions are cut
// at MinMicros and MaxMicros.
//
// # Names
//
// A partition is named after its table and its start, so that names sort
// as times do: conditions_p20190107 (calendar, weekly and whole-day
// intervals), metrics_p20190107_13 (whole hours), _p20190107_1330 (whole
// minutes), _p20190107_133005 (seconds). Hash sub-partitions append _h0,
// _h1, …. No name exceeds PostgreSQL's 63 bytes: MaxTableNameBytes says
// how long a table name may be for its interval.
package partition
