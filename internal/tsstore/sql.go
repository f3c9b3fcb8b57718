package tsstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// The SQL views users query (created by the pgts catalog migration and by
// Open):
//
//	pgts.rra_points(name, tags, key, archive, time, value)
//	    every archive value within its archive's span; time is the slot's
//	    start in Graphite consolidation (its end in RRD consolidation),
//	    archive its spec ("average:10s:6h:0.5").
//	pgts.raw_points(name, tags, key, time, value)
//	    the raw points, when the store keeps them (created by Open over the
//	    configured raw table).
//
// Example: the last hour of one series at its finest archive:
//
//	SELECT time, value FROM pgts.rra_points
//	WHERE name = 'servers.web1.cpu' AND archive LIKE 'wmean:10s:%'
//	  AND time > now() - interval '1 hour' ORDER BY time;

// sqlInsertBundles registers archive shapes: $1 cf, $2 step_s, $3 size.
const sqlInsertBundles = `INSERT INTO pgts.rra_bundle (cf, step_s, size)
SELECT * FROM unnest($1::text[], $2::int4[], $3::int4[])
ON CONFLICT DO NOTHING`

// sqlInsertSeries registers a batch of series in one statement, with the
// ids given, and returns their ids; it fails, inserting none, when one
// is registered already (a unique violation), and the batch is inserted
// again by sqlInsertSeriesNew. At a cold start none is: ON CONFLICT would
// cost the server a speculative insertion a row, a fifth of the
// statement. Per series: $1
// id, $2 key, $3 tags as JSON (NULL: none), $4 its schema's ordinal in
// the schema arrays (0: none, raw points only); per schema: $5 rule, $6
// step_s, $7 heartbeat_s, $8 rras and $9 bundles, space-separated, parsed
// once per schema. The name is the key up to its first ';'
// (keyName). encodeSeries encodes the parameters.
const sqlInsertSeries = sqlInsertSeriesRows + `
RETURNING id`

// sqlInsertSeriesNew is sqlInsertSeries inserting only the series not
// registered yet, returning the ids of those.
const sqlInsertSeriesNew = sqlInsertSeriesRows + `
ON CONFLICT (key) DO NOTHING
RETURNING id`

// sqlInsertSeriesRows is the INSERT of sqlInsertSeries and
// sqlInsertSeriesNew, without its ending.
const sqlInsertSeriesRows = `WITH sc AS (
	SELECT o::int4 AS o, r, st, hb, string_to_array(a, ' ') AS a, string_to_array(b, ' ')::int4[] AS b
	FROM unnest($5::text[], $6::int4[], $7::int4[], $8::text[], $9::text[]) WITH ORDINALITY AS x(r, st, hb, a, b, o)
)
INSERT INTO pgts.metric (id, key, name, tags, rule, step_s, heartbeat_s, rras, bundles)
SELECT x.id, x.k, split_part(x.k, ';', 1), coalesce(x.t::jsonb, '{}'), sc.r, sc.st, sc.hb, sc.a, sc.b
FROM unnest($1::int8[], $2::text[], $3::text[], $4::int4[]) AS x(id, k, t, s)
LEFT JOIN sc ON sc.o = x.s`

// sqlReserveSeriesIDs moves pgts.metric's id sequence on by $1 and
// returns the first of the $1 ids passed over (see reserveIDs).
const sqlReserveSeriesIDs = `SELECT setval(s, nextval(s) + $1 - 1) - $1 + 1
FROM CAST(pg_get_serial_sequence('pgts.metric', 'id') AS regclass) AS s`

// sqlWriteSlots writes closed slots into packed archive rows (see
// packedRows): one element per (bundle, segment, slot) row, each at most
// once, holding runs of positions and their values and times, 8 bytes
// each; rows missing are inserted, empty but for the runs. The flush
// resolves beforehand which of several updates of one position a row
// keeps (a later slot time wins, and of two values for one slot time the
// later in the arguments). It returns the number of rows it neither
// updated nor inserted: rows another writer (a second daemon on the
// database, whose series share a segment) inserted after this statement's
// snapshot was taken; running it again writes them (see runWrite).
// $1 bundle, $2 seg, $3 slot, $4 runs, $5 values, $6 times.
const sqlWriteSlots = `WITH u AS (
	SELECT * FROM unnest($1::int4[], $2::int8[], $3::int4[], $4::bytea[], $5::bytea[], $6::bytea[]) AS x(b, g, sl, r, v, t)
), upd AS (
	UPDATE pgts.rra_data d SET vals = pgts.rra_put(d.vals, u.r, u.v), times = pgts.rra_put(d.times, u.r, u.t)
	FROM u WHERE d.bundle_id = u.b AND d.seg = u.g AND d.slot = u.sl
	RETURNING d.bundle_id, d.seg, d.slot
), ins AS (
	INSERT INTO pgts.rra_data (bundle_id, seg, slot, vals, times)
	SELECT u.b, u.g, u.sl,
		pgts.rra_put(decode(repeat('` + packedNullHex + `', ` + segmentWidthSQL + `), 'hex'), u.r, u.v),
		pgts.rra_put(decode(repeat('` + packedNoTimeHex + `', ` + segmentWidthSQL + `), 'hex'), u.r, u.t)
	FROM u WHERE NOT EXISTS (SELECT FROM upd WHERE upd.bundle_id = u.b AND upd.seg = u.g AND upd.slot = u.sl)
	ON CONFLICT (bundle_id, seg, slot) DO NOTHING
	RETURNING 1
)
SELECT (SELECT count(*) FROM u) - (SELECT count(*) FROM upd) - (SELECT count(*) FROM ins)`

// sqlWriteStates saves consolidation states: $1 seg, $2 pos, $3 state.
// Like sqlWriteSlots, it returns the number of segments' rows it neither
// updated nor inserted (another writer inserted them meanwhile).
const sqlWriteStates = `WITH u AS (
	SELECT g, array_agg(p ORDER BY p) AS i, array_agg(st ORDER BY p) AS st
	FROM unnest($1::int8[], $2::int4[], $3::bytea[]) AS x(g, p, st)
	GROUP BY g
), upd AS (
	UPDATE pgts.ds_state d SET states = pgts.array_put(d.states, u.i, u.st), updated_at = now()
	FROM u WHERE d.seg = u.g
	RETURNING d.seg
), ins AS (
	INSERT INTO pgts.ds_state (seg, states)
	SELECT u.g, pgts.array_put(array_fill(NULL::bytea, ARRAY[` + segmentWidthSQL + `]), u.i, u.st)
	FROM u WHERE u.g NOT IN (SELECT seg FROM upd)
	ON CONFLICT (seg) DO NOTHING
	RETURNING 1
)
SELECT (SELECT count(*) FROM u) - (SELECT count(*) FROM upd) - (SELECT count(*) FROM ins)`

// sqlRecompute reads, for each recompute request, the values of the finer
// archive's n slots from t0 (seconds) every st seconds, packed (8 bytes
// each, the NULL marker where the slot holds another lap or nothing), in
// time order, with the request's ordinal: $1 bundle, $2 seg, $3 pos, $4
// t0, $5 st, $6 ring size, $7 n.
const sqlRecompute = `SELECT r.o, string_agg(CASE WHEN substring(d.times FROM r.p * 8 - 7 FOR 8) = int8send(r.t)
		THEN substring(d.vals FROM r.p * 8 - 7 FOR 8) ELSE '\x` + packedNullHex + `'::bytea END, ''::bytea ORDER BY r.t)
FROM (
	SELECT x.o, x.b, x.g, x.p, x.t0 + i.i * x.st AS t, x.st, x.sz
	FROM unnest($1::int4[], $2::int8[], $3::int4[], $4::int8[], $5::int8[], $6::int8[], $7::int4[])
		WITH ORDINALITY AS x(b, g, p, t0, st, sz, n, o),
		generate_series(0, x.n - 1) AS i(i)
) r
LEFT JOIN pgts.rra_data d ON d.bundle_id = r.b AND d.seg = r.g AND d.slot = (r.t / r.st % r.sz)::int4
GROUP BY r.o`

// sqlReadPositions reads the values of a few series of one segment in
// one archive: $1 bundle, $2 seg, $3 their positions, slots in [$4, $5]
// or [$6, $7]; one row per position, its slots aggregated by the server:
// the position and, for each slot, its packed time and value (16 bytes),
// in no particular order (each pair carries its time); NULL when the
// database holds none of its slots. A position reads the segment's rows
// itself, one index scan per range of slots, which takes its 16 bytes out
// of each 3.2 KB row as it reads it. A row per position and slot cost the
// server a protocol message and the client a row each: 1,440 rows for one
// series over a day of one-minute slots (BenchmarkScatteredRead); the
// whole rows expanded by position (unnest) and aggregated by position
// (GROUP BY) cost the server 1.4–2 times as much as this for that series
// (BenchmarkFetchOne, three interleaved pairs on the shared machine:
// 5.3–5.9 against 3.0–4.0 ms of server CPU; TestFetchOnePositionNarrowRows).
// What is left is the 1,440 heap pages: each slot row of a segment is a
// page of its own.
const sqlReadPositions = `SELECT p.p, (SELECT string_agg(s.x, ''::bytea) FROM (
	SELECT substring(d.times FROM p.p * 8 - 7 FOR 8) || substring(d.vals FROM p.p * 8 - 7 FOR 8) AS x FROM pgts.rra_data d
	WHERE d.bundle_id = $1 AND d.seg = $2 AND d.slot BETWEEN $4 AND $5
	UNION ALL
	SELECT substring(d.times FROM p.p * 8 - 7 FOR 8) || substring(d.vals FROM p.p * 8 - 7 FOR 8) FROM pgts.rra_data d
	WHERE d.bundle_id = $1 AND d.seg = $2 AND d.slot BETWEEN $6 AND $7
) s) FROM unnest($3::int4[]) AS p(p)`

// openRaw finds the raw table, creating it when missing, and (re)creates
// the pgts.raw_points view over it.
func (s *Store) openRaw(ctx context.Context) error {
	rc := s.cfg.Raw
	if ok, err := s.openRawSharded(ctx); ok || err != nil {
		return err
	}
	t, err := s.mgr.Table(ctx, rc.Table)
	var nf *partition.TableNotFoundError
	if errors.As(err, &nf) {
		schema, name, _ := pg.SplitQualified(rc.Table)
		past := rc.acceptPast()
		t, err = s.mgr.Create(ctx, partition.CreateSpec{
			Schema:       schema,
			Name:         name,
			Columns:      "time timestamptz NOT NULL, series_id bigint NOT NULL, value float8",
			TimeColumn:   "time",
			Interval:     rc.Interval,
			Premake:      2,
			Retention:    rc.Retention,
			AcceptPast:   &past,
			Index:        rawTimeIndex,
			ExtraIndexes: []string{"series_id, time"},
		})
	}
	if err != nil {
		return fmt.Errorf("raw points table %q: %w", rc.Table, err)
	}
	target, err := copyload.LookupTarget(ctx, s.pool, s.mgr, rc.Table)
	if err != nil {
		return fmt.Errorf("raw points table %q: %w", rc.Table, err)
	}
	for _, c := range []string{"time", "series_id", "value"} {
		if target.ColumnIndex(c) < 0 {
			return fmt.Errorf("raw points table %s has no column %q", target, c)
		}
	}
	if err := s.createRawView(ctx, t.Qualified()); err != nil {
		return err
	}
	s.raw, s.rawTbl = target, t
	return nil
}

// createRawView (re)creates the pgts.raw_points view over the raw table
// (quoted name).
func (s *Store) createRawView(ctx context.Context, table string) error {
	view := `CREATE OR REPLACE VIEW pgts.raw_points AS
SELECT m.name, m.tags, m.key, r.time, r.value
FROM ` + table + ` r JOIN pgts.metric m ON m.id = r.series_id`
	if _, err := s.pool.Exec(ctx, view); err != nil {
		return fmt.Errorf("creating the view pgts.raw_points: %w", err)
	}
	return nil
}

// rawTimeIndex is the time index of a raw table Open creates: BRIN, since
// raw points arrive in time order; lookups by series use the (series_id,
// time) btree.
const rawTimeIndex = partition.IndexBRIN

// approxDuration is an interval as a duration, a month counting 30 days.
func approxDuration(iv partition.Interval) time.Duration {
	return time.Duration(iv.Months)*30*24*time.Hour + time.Duration(iv.Days)*24*time.Hour + time.Duration(iv.Micros)*time.Microsecond
}

// segmentWidthSQL is SegmentWidth in SQL text (a test checks they agree).
const segmentWidthSQL = "200"
