-- Gap filling: pgts.buckets yields every bucket of a range, to be joined
-- to the aggregated rows (see docs/sql.md for the query shape);
-- pgts.locf and pgts.interpolate fill the empty buckets as window
-- aggregates over the joined rows.

-- pgts.buckets: the starts of the buckets of pgts.time_bucket (default
-- origin) from the one holding start up to, not including, finish.
CREATE OR REPLACE FUNCTION pgts.buckets(bucket_width interval, start timestamptz, finish timestamptz) RETURNS SETOF timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE ROWS 1000 AS
$f$ SELECT g AT TIME ZONE 'UTC'
	FROM generate_series(pgts.time_bucket(bucket_width, start) AT TIME ZONE 'UTC', finish AT TIME ZONE 'UTC', bucket_width) AS g
	WHERE g < finish AT TIME ZONE 'UTC' $f$;

-- In a time zone the buckets are those of the local wall clock; a bucket
-- that the clock skips (spring forward) is not repeated.
CREATE OR REPLACE FUNCTION pgts.buckets(bucket_width interval, start timestamptz, finish timestamptz, timezone text) RETURNS SETOF timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE ROWS 1000 AS
$f$ SELECT DISTINCT pgts.time_bucket(bucket_width, g AT TIME ZONE timezone, timezone) AS b
	FROM generate_series(pgts.time_bucket(bucket_width, start AT TIME ZONE timezone), finish AT TIME ZONE timezone, bucket_width) AS g
	WHERE pgts.time_bucket(bucket_width, g AT TIME ZONE timezone, timezone) < finish
	ORDER BY b $f$;

CREATE OR REPLACE FUNCTION pgts.buckets(bucket_width interval, start timestamp, finish timestamp) RETURNS SETOF timestamp
LANGUAGE sql IMMUTABLE PARALLEL SAFE ROWS 1000 AS
$f$ SELECT g FROM generate_series(pgts.time_bucket(bucket_width, start), finish, bucket_width) AS g
	WHERE g < finish $f$;

-- Integer time has its own name: with a bigint form of pgts.buckets, a
-- call with string literals only ('1 hour', '2024-01-01', ...) would be
-- ambiguous.
CREATE OR REPLACE FUNCTION pgts.int_buckets(bucket_width bigint, start bigint, finish bigint) RETURNS SETOF bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE ROWS 1000 AS
$f$ SELECT generate_series(pgts.time_bucket(bucket_width, start), finish - 1, bucket_width) $f$;

-- pgts.locf(value) OVER (ORDER BY bucket): the last non-NULL value up to
-- the current row (last observation carried forward); NULL before the
-- first. A strict transition function skips NULL inputs, and the first
-- non-NULL input becomes the state.
--
-- The transition functions are PL/pgSQL: PostgreSQL never inlines an
-- aggregate's transition function, and a LANGUAGE sql one starts an
-- executor for each call (about 5 µs, where PL/pgSQL's RETURN of a
-- simple expression takes about 1 µs); pgts.known runs for every bucket.
CREATE OR REPLACE FUNCTION pgts._locf_sfunc(s anyelement, v anyelement) RETURNS anyelement
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $f$ BEGIN RETURN v; END $f$;


CREATE OR REPLACE AGGREGATE pgts.locf(anyelement) (
	SFUNC = pgts._locf_sfunc,
	STYPE = anyelement,
	COMBINEFUNC = pgts._locf_sfunc,
	PARALLEL = SAFE
);

-- pgts.known(value, bucket) OVER (ORDER BY bucket): the last (bucket,
-- value) with a non-NULL value in window order: the nearest known point
-- before (or at) the current row, and with ORDER BY bucket DESC the
-- nearest after it. pgts.interpolate takes the two.
DO $do$
BEGIN
	IF to_regtype('pgts.point_tz') IS NULL THEN
		CREATE TYPE pgts.point_tz AS (bucket timestamptz, value double precision);
	END IF;
	IF to_regtype('pgts.point_int') IS NULL THEN
		CREATE TYPE pgts.point_int AS (bucket bigint, value double precision);
	END IF;
	IF to_regtype('pgts.point_ts') IS NULL THEN
		CREATE TYPE pgts.point_ts AS (bucket timestamp, value double precision);
	END IF;
END
$do$;

CREATE OR REPLACE FUNCTION pgts._known_sfunc(s pgts.point_tz, v double precision, b timestamptz) RETURNS pgts.point_tz
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS
$f$ BEGIN
	IF v IS NULL OR b IS NULL THEN
		RETURN s;
	END IF;
	RETURN ROW(b, v)::pgts.point_tz;
END $f$;

CREATE OR REPLACE FUNCTION pgts._known_sfunc(s pgts.point_int, v double precision, b bigint) RETURNS pgts.point_int
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS
$f$ BEGIN
	IF v IS NULL OR b IS NULL THEN
		RETURN s;
	END IF;
	RETURN ROW(b, v)::pgts.point_int;
END $f$;


CREATE OR REPLACE FUNCTION pgts._known_sfunc(s pgts.point_ts, v double precision, b timestamp) RETURNS pgts.point_ts
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS
$f$ BEGIN
	IF v IS NULL OR b IS NULL THEN
		RETURN s;
	END IF;
	RETURN ROW(b, v)::pgts.point_ts;
END $f$;

CREATE OR REPLACE AGGREGATE pgts.known(double precision, timestamp) (
	SFUNC = pgts._known_sfunc, STYPE = pgts.point_ts, PARALLEL = SAFE);
CREATE OR REPLACE AGGREGATE pgts.known(double precision, timestamptz) (
	SFUNC = pgts._known_sfunc, STYPE = pgts.point_tz, PARALLEL = SAFE);

CREATE OR REPLACE AGGREGATE pgts.known(double precision, bigint) (
	SFUNC = pgts._known_sfunc, STYPE = pgts.point_int, PARALLEL = SAFE);

-- pgts.interpolate(value, bucket, prev, next): value when it is not NULL;
-- otherwise the value on the straight line between the known points prev
-- and next; NULL when either is missing (the first and last buckets
-- before and after the known ones, as TimescaleDB's interpolate without
-- its prev and next expressions).
CREATE OR REPLACE FUNCTION pgts.interpolate(value double precision, bucket timestamptz, prev pgts.point_tz, next pgts.point_tz) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE
	WHEN value IS NOT NULL THEN value
	WHEN (prev).bucket IS NULL OR (next).bucket IS NULL THEN NULL
	WHEN (next).bucket = (prev).bucket THEN (prev).value
	ELSE (prev).value + ((next).value - (prev).value)
		* (pgts._us(bucket - (prev).bucket)::double precision / pgts._us((next).bucket - (prev).bucket)::double precision) END $f$;

CREATE OR REPLACE FUNCTION pgts.interpolate(value double precision, bucket timestamp, prev pgts.point_ts, next pgts.point_ts) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE
	WHEN value IS NOT NULL THEN value
	WHEN (prev).bucket IS NULL OR (next).bucket IS NULL THEN NULL
	WHEN (next).bucket = (prev).bucket THEN (prev).value
	ELSE (prev).value + ((next).value - (prev).value)
		* (pgts._us(bucket - (prev).bucket)::double precision / pgts._us((next).bucket - (prev).bucket)::double precision) END $f$;

CREATE OR REPLACE FUNCTION pgts.interpolate(value double precision, bucket bigint, prev pgts.point_int, next pgts.point_int) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE
	WHEN value IS NOT NULL THEN value
	WHEN (prev).bucket IS NULL OR (next).bucket IS NULL THEN NULL
	WHEN (next).bucket = (prev).bucket THEN (prev).value
	ELSE (prev).value + ((next).value - (prev).value)
		* ((bucket - (prev).bucket)::double precision / ((next).bucket - (prev).bucket)::double precision) END $f$;
