-- The documented forms of time_bucket (TimescaleDB 2.x), in the order of
-- https://docs.timescale.com/api/latest/hyperfunctions/time_bucket/.
-- Default origins: Monday 2000-01-03 for widths without months, the
-- month of 2000-01-01 for widths in months and years.

CREATE OR REPLACE FUNCTION pgts.time_bucket(bucket_width interval, ts timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE
	WHEN NOT pgts._is_months(bucket_width) AND bucket_width > interval '0'
		THEN pgts._bin(bucket_width, ts, timestamptz '2000-01-03 00:00:00+00')
	WHEN pgts._is_pure_months(bucket_width) AND pgts._months(bucket_width) > 0
		THEN pgts._bucket_month(bucket_width, ts AT TIME ZONE 'UTC', timestamp '2000-01-01') AT TIME ZONE 'UTC'
	ELSE pgts._bucket_error(bucket_width, ts) END $f$;

CREATE OR REPLACE FUNCTION pgts.time_bucket(bucket_width interval, ts timestamptz, origin timestamptz) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE
	WHEN NOT pgts._is_months(bucket_width) AND bucket_width > interval '0'
		THEN pgts._bin(bucket_width, ts, origin)
	WHEN pgts._is_pure_months(bucket_width) AND pgts._months(bucket_width) > 0
		THEN pgts._bucket_month(bucket_width, ts AT TIME ZONE 'UTC', origin AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
	ELSE pgts._bucket_error(bucket_width, ts) END $f$;

-- The offset is subtracted and added back in UTC (TimescaleDB does it in
-- the session's time zone; the two differ only for offsets with days or
-- months in a session zone with daylight saving time).
--
-- Without months (in the width or the offset) an offset is a shift of
-- the origin, and the shifted origin folds to a constant at plan time:
-- the expression left is date_bin alone, which postgres_fdw can send to
-- a shard (AT TIME ZONE, whose zone argument is text, it cannot).
CREATE OR REPLACE FUNCTION pgts.time_bucket(bucket_width interval, ts timestamptz, "offset" interval) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE
	WHEN NOT pgts._is_months(bucket_width) AND NOT pgts._is_months("offset") AND bucket_width > interval '0'
		THEN pgts._bin(bucket_width, ts, (timestamp '2000-01-03' + "offset") AT TIME ZONE 'UTC')
	ELSE (pgts.time_bucket(bucket_width, (ts AT TIME ZONE 'UTC') - "offset") + "offset") AT TIME ZONE 'UTC' END $f$;

-- Buckets on the wall clock of timezone: ts is converted to local time,
-- bucketed there and converted back, so a day bucket starts at local
-- midnight on both sides of a daylight saving time change.
CREATE OR REPLACE FUNCTION pgts.time_bucket(bucket_width interval, ts timestamptz, timezone text,
	origin timestamptz DEFAULT NULL, "offset" interval DEFAULT NULL) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE
	WHEN origin IS NOT NULL AND "offset" IS NOT NULL
		THEN pgts._bucket_error2('offset and origin cannot be used at the same time', ts)
	WHEN origin IS NOT NULL
		THEN pgts.time_bucket(bucket_width, ts AT TIME ZONE timezone, origin AT TIME ZONE timezone) AT TIME ZONE timezone
	WHEN "offset" IS NOT NULL
		THEN (pgts.time_bucket(bucket_width, (ts AT TIME ZONE timezone) - "offset") + "offset") AT TIME ZONE timezone
	ELSE pgts.time_bucket(bucket_width, ts AT TIME ZONE timezone) AT TIME ZONE timezone END $f$;

CREATE OR REPLACE FUNCTION pgts.time_bucket(bucket_width interval, ts timestamp) RETURNS timestamp
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE
	WHEN NOT pgts._is_months(bucket_width) AND bucket_width > interval '0'
		THEN pgts._bin(bucket_width, ts, timestamp '2000-01-03')
	WHEN pgts._is_pure_months(bucket_width) AND pgts._months(bucket_width) > 0
		THEN pgts._bucket_month(bucket_width, ts, timestamp '2000-01-01')
	ELSE pgts._bucket_error(bucket_width, ts) END $f$;

CREATE OR REPLACE FUNCTION pgts.time_bucket(bucket_width interval, ts timestamp, origin timestamp) RETURNS timestamp
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE
	WHEN NOT pgts._is_months(bucket_width) AND bucket_width > interval '0'
		THEN pgts._bin(bucket_width, ts, origin)
	WHEN pgts._is_pure_months(bucket_width) AND pgts._months(bucket_width) > 0
		THEN pgts._bucket_month(bucket_width, ts, origin)
	ELSE pgts._bucket_error(bucket_width, ts) END $f$;

CREATE OR REPLACE FUNCTION pgts.time_bucket(bucket_width interval, ts timestamp, "offset" interval) RETURNS timestamp
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT pgts.time_bucket(bucket_width, ts - "offset") + "offset" $f$;

-- Dates take widths of whole days, weeks, months or years.
CREATE OR REPLACE FUNCTION pgts.time_bucket(bucket_width interval, ts date) RETURNS date
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE
	WHEN NOT pgts._is_months(bucket_width) AND bucket_width >= interval '1 day'
		AND date_trunc('day', justify_hours(bucket_width)) = justify_hours(bucket_width)
		THEN pgts._bin(bucket_width, ts::timestamp, timestamp '2000-01-03')::date
	WHEN pgts._is_pure_months(bucket_width) AND pgts._months(bucket_width) > 0
		THEN pgts._bucket_month(bucket_width, ts::timestamp, timestamp '2000-01-01')::date
	ELSE pgts._bucket_error(bucket_width, ts) END $f$;

CREATE OR REPLACE FUNCTION pgts.time_bucket(bucket_width interval, ts date, origin date) RETURNS date
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE
	WHEN NOT pgts._is_months(bucket_width) AND bucket_width >= interval '1 day'
		AND date_trunc('day', justify_hours(bucket_width)) = justify_hours(bucket_width)
		THEN pgts._bin(bucket_width, ts::timestamp, origin::timestamp)::date
	WHEN pgts._is_pure_months(bucket_width) AND pgts._months(bucket_width) > 0
		THEN pgts._bucket_month(bucket_width, ts::timestamp, origin::timestamp)::date
	ELSE pgts._bucket_error(bucket_width, ts) END $f$;

CREATE OR REPLACE FUNCTION pgts.time_bucket(bucket_width interval, ts date, "offset" interval) RETURNS date
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT (pgts.time_bucket(bucket_width, ts - "offset") + "offset")::date $f$;

CREATE OR REPLACE FUNCTION pgts.time_bucket(bucket_width smallint, ts smallint) RETURNS smallint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE WHEN bucket_width > 0
	THEN ts - CASE WHEN ts % bucket_width < 0 THEN ts % bucket_width + bucket_width ELSE ts % bucket_width END
	ELSE pgts._bucket_error(bucket_width::bigint, ts) END $f$;

CREATE OR REPLACE FUNCTION pgts.time_bucket(bucket_width smallint, ts smallint, "offset" smallint) RETURNS smallint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE WHEN bucket_width > 0
	THEN pgts.time_bucket(bucket_width, ts - "offset" % bucket_width) + "offset" % bucket_width
	ELSE pgts._bucket_error(bucket_width::bigint, ts) END $f$;

CREATE OR REPLACE FUNCTION pgts.time_bucket(bucket_width integer, ts integer) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE WHEN bucket_width > 0
	THEN ts - CASE WHEN ts % bucket_width < 0 THEN ts % bucket_width + bucket_width ELSE ts % bucket_width END
	ELSE pgts._bucket_error(bucket_width::bigint, ts) END $f$;

CREATE OR REPLACE FUNCTION pgts.time_bucket(bucket_width integer, ts integer, "offset" integer) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE WHEN bucket_width > 0
	THEN pgts.time_bucket(bucket_width, ts - "offset" % bucket_width) + "offset" % bucket_width
	ELSE pgts._bucket_error(bucket_width::bigint, ts) END $f$;

CREATE OR REPLACE FUNCTION pgts.time_bucket(bucket_width bigint, ts bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE WHEN bucket_width > 0
	THEN ts - CASE WHEN ts % bucket_width < 0 THEN ts % bucket_width + bucket_width ELSE ts % bucket_width END
	ELSE pgts._bucket_error(bucket_width::bigint, ts) END $f$;

CREATE OR REPLACE FUNCTION pgts.time_bucket(bucket_width bigint, ts bigint, "offset" bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$f$ SELECT CASE WHEN bucket_width > 0
	THEN pgts.time_bucket(bucket_width, ts - "offset" % bucket_width) + "offset" % bucket_width
	ELSE pgts._bucket_error(bucket_width::bigint, ts) END $f$;
