-- pgts.time_bucket: TimescaleDB's time_bucket in plain SQL.
--
-- Every form is a LANGUAGE sql IMMUTABLE function whose body uses only
-- immutable functions, so the planner inlines it: with a constant width
-- the CASEs fold away at plan time and GROUP BY pgts.time_bucket('1 hour',
-- time) becomes GROUP BY date_bin('1 hour', time, '2000-01-03') on
-- PostgreSQL 14+ (pgts._bin below; on 13, exact integer arithmetic).
--
-- None is declared STRICT (a STRICT SQL function whose body is not strict
-- is not inlined); each body yields NULL for a NULL width or time instead.

-- pgts._months: the width in months; pgts._is_months: whether the width
-- counts in months (then it may have nothing else).
CREATE OR REPLACE FUNCTION pgts._months(w interval) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT (date_part('year', w) * 12 + date_part('month', w))::integer $f$;

CREATE OR REPLACE FUNCTION pgts._is_months(w interval) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT date_part('year', w) <> 0 OR date_part('month', w) <> 0 $f$;

-- pgts._is_pure_months: months and nothing else (fields compared one by
-- one: interval equality would take '1 mon 1 day -24 hours' for '1 mon').
CREATE OR REPLACE FUNCTION pgts._is_pure_months(w interval) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT date_part('day', w) = 0 AND date_part('hour', w) = 0 AND date_part('minute', w) = 0
	AND date_part('microseconds', w) = 0 $f$;

-- pgts._bucket_error raises the error that explains why bucket_width is
-- refused; for a NULL width it returns NULL (a NULL width gives a NULL
-- bucket). v only carries the result type and keeps the call from being
-- evaluated at plan time when the width is not constant.
CREATE OR REPLACE FUNCTION pgts._bucket_error(bucket_width interval, v anyelement) RETURNS anyelement
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
BEGIN
	IF bucket_width IS NULL THEN
		RETURN NULL;
	END IF;
	IF pgts._is_months(bucket_width) AND NOT pgts._is_pure_months(bucket_width) THEN
		RAISE EXCEPTION 'pgts.time_bucket: a bucket width in months cannot also have days or a time (got %)', quote_literal(bucket_width::text)
			USING ERRCODE = 'feature_not_supported';
	END IF;
	IF pg_typeof(v) = 'date'::regtype AND bucket_width > interval '0'
		AND date_trunc('day', justify_hours(bucket_width)) <> justify_hours(bucket_width) THEN
		RAISE EXCEPTION 'pgts.time_bucket: a bucket width for dates must be a whole number of days (got %)', quote_literal(bucket_width::text)
			USING ERRCODE = 'feature_not_supported';
	END IF;
	RAISE EXCEPTION 'pgts.time_bucket: the bucket width must be greater than zero (got %)', quote_literal(bucket_width::text)
		USING ERRCODE = 'invalid_parameter_value';
END
$f$;

CREATE OR REPLACE FUNCTION pgts._bucket_error(bucket_width bigint, v anyelement) RETURNS anyelement
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
BEGIN
	IF bucket_width IS NULL THEN
		RETURN NULL;
	END IF;
	RAISE EXCEPTION 'pgts.time_bucket: the bucket width must be greater than zero (got %)', bucket_width
		USING ERRCODE = 'invalid_parameter_value';
END
$f$;

CREATE OR REPLACE FUNCTION pgts._bucket_error2(msg text, v anyelement) RETURNS anyelement
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
BEGIN
	RAISE EXCEPTION 'pgts.time_bucket: %', msg USING ERRCODE = 'invalid_parameter_value';
END
$f$;

-- pgts._us: an interval without months as whole microseconds, exactly
-- (date_part of single fields is exact; date_part('epoch') is not).
CREATE OR REPLACE FUNCTION pgts._us(d interval) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT date_part('day', d)::bigint * 86400000000
	+ (date_part('hour', d) * 3600000000 + date_part('minute', d) * 60000000
	   + date_part('microseconds', d))::bigint $f$;

-- pgts._floor_mul: the greatest multiple of w (> 0) not above d.
CREATE OR REPLACE FUNCTION pgts._floor_mul(d bigint, w bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT d - CASE WHEN d % w < 0 THEN d % w + w ELSE d % w END $f$;

-- pgts._us_interval: k microseconds as an interval of days and time, so
-- that adding it to a timestamp is exact over the whole timestamp range.
CREATE OR REPLACE FUNCTION pgts._us_interval(k bigint) RETURNS interval
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT (k / 86400000000) * interval '1 day' + (k % 86400000000) * interval '1 microsecond' $f$;

-- pgts._bin_arith: the start of the bucket of width w (no months, > 0)
-- holding ts, on the grid through origin; exact integer arithmetic that
-- PostgreSQL 13 can run. Infinite times are their own bucket.
CREATE OR REPLACE FUNCTION pgts._bin_arith(w interval, ts timestamp, origin timestamp) RETURNS timestamp
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE WHEN ts = 'infinity' OR ts = '-infinity' THEN ts
	ELSE origin + pgts._us_interval(pgts._floor_mul(pgts._us(ts - origin), pgts._us(w))) END $f$;

CREATE OR REPLACE FUNCTION pgts._bin_arith(w interval, ts timestamptz, origin timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT pgts._bin_arith(w, ts AT TIME ZONE 'UTC', origin AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' $f$;

-- pgts._mon: months since January 2000 of a timestamp's calendar month.
CREATE OR REPLACE FUNCTION pgts._mon(ts timestamp) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT (date_part('year', ts)::bigint - 2000) * 12 + date_part('month', ts)::bigint - 1 $f$;

-- pgts._bucket_month: the first day of the bucket of w months holding ts,
-- months counted from the month of origin (its day and time are ignored,
-- as TimescaleDB does). Each argument is used so that the planner inlines
-- the whole (an argument used twice must be cheap), leaving only built-in
-- functions, which postgres_fdw can send to a shard. The floor of a
-- quotient of month counts (far below 2^26) is exact in float8.
CREATE OR REPLACE FUNCTION pgts._bucket_month(w interval, ts timestamp, origin timestamp) RETURNS timestamp
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE WHEN ts = 'infinity' OR ts = '-infinity' THEN ts
	ELSE timestamp '2000-01-01' + make_interval(months => (floor((pgts._mon(ts) - pgts._mon(origin))::double precision / pgts._months(w))
		* pgts._months(w) + pgts._mon(origin))::integer) END $f$;
