package catalog

// rraPackedMigration stores the archive rows of the metrics daemon
// (pgts.rra_data) packed: vals and times become bytea of 8 bytes a
// position, big-endian, so that reading a row costs the server a copy
// instead of a conversion per element (array_send calls float8send or
// int8send on each of 200 elements), and writing one costs a few byte
// copies (pgts.rra_put) instead of a PL/pgSQL loop over the elements.
//
// A row of a segment of 200 series:
//
//	times  200 × int8, big-endian: the slot's time in Unix seconds, or
//	       -9223372036854775808 (0x8000000000000000) where the position
//	       holds nothing (older than every span, like any earlier lap)
//	vals   200 × IEEE 754 bits of the float8, big-endian: NaN, ±Infinity
//	       and -0 as they are; 0x7FF0000000000001 (a signalling NaN,
//	       which arithmetic never yields) stands for NULL
//
// The conversion rewrites the table once, in one statement (ALTER COLUMN
// ... TYPE ... USING): migrations run in one transaction, so batches
// would bound nothing, where the rewrite writes each row once and leaves
// no dead rows behind; the daemon cannot run on the table meanwhile
// anyway. pgts.rra_points is recreated over the new columns with the same
// columns and rows (a view over it made by a user stops the conversion:
// drop it first). Self-contained and idempotent (the columns are
// converted only while they are arrays; CREATE OR REPLACE), so that it
// applies whatever migrations precede it and can be renumbered.
const rraPackedMigration = `CREATE OR REPLACE FUNCTION pgts.float8_from_bits(b bigint) RETURNS float8
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $f$
		-- (-1)^s × mantissa × 2^k, each step exact: the mantissa (< 2^53)
		-- is a float8, a power of two within the normal range is exact,
		-- and a subnormal result is reached in two exact products.
		SELECT CASE WHEN x.e = 2047 THEN CASE WHEN x.m <> 0 THEN 'NaN'::float8 WHEN b < 0 THEN '-Infinity'::float8 ELSE 'Infinity'::float8 END
			ELSE (CASE WHEN b < 0 THEN -1 ELSE 1 END) * (CASE WHEN x.k >= -1022 THEN x.mm::float8 * 2::float8 ^ x.k
				ELSE (x.mm::float8 * 2::float8 ^ (x.k + 537)) * 2::float8 ^ -537 END) END
		FROM (SELECT (b >> 52) & 2047 AS e, b & 4503599627370495 AS m,
			CASE WHEN (b >> 52) & 2047 = 0 THEN b & 4503599627370495 ELSE (b & 4503599627370495) + 4503599627370496 END AS mm,
			CASE WHEN (b >> 52) & 2047 = 0 THEN -1074 ELSE ((b >> 52) & 2047)::integer - 1075 END AS k) x
	$f$;
	COMMENT ON FUNCTION pgts.float8_from_bits(bigint) IS 'The float8 whose IEEE 754 bits are b, exactly (subnormals, ±Infinity, -0; every NaN is NaN).';
	CREATE OR REPLACE FUNCTION pgts.rra_time(a bytea, pos integer) RETURNS bigint
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $f$
		SELECT NULLIF(('x' || encode(substring(a FROM pos * 8 - 7 FOR 8), 'hex'))::bit(64)::bigint, -9223372036854775808)
	$f$;
	COMMENT ON FUNCTION pgts.rra_time(bytea, integer) IS 'The time (Unix seconds) at position pos (1 to 200) of a packed pgts.rra_data.times, NULL where it holds nothing.';
	CREATE OR REPLACE FUNCTION pgts.rra_value(a bytea, pos integer) RETURNS float8
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $f$
		SELECT pgts.float8_from_bits(NULLIF(('x' || encode(substring(a FROM pos * 8 - 7 FOR 8), 'hex'))::bit(64)::bigint, 9218868437227405313))
	$f$;
	COMMENT ON FUNCTION pgts.rra_value(bytea, integer) IS 'The value at position pos (1 to 200) of a packed pgts.rra_data.vals, NULL where it holds the NULL marker 0x7FF0000000000001.';
	CREATE OR REPLACE FUNCTION pgts.rra_pack_float8(a float8[]) RETURNS bytea
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $f$
		SELECT string_agg(coalesce(float8send(a[i]), '\x7ff0000000000001'::bytea), ''::bytea ORDER BY i) FROM generate_series(1, 200) i
	$f$;
	CREATE OR REPLACE FUNCTION pgts.rra_pack_int8(a bigint[]) RETURNS bytea
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $f$
		SELECT string_agg(coalesce(int8send(a[i]), '\x8000000000000000'::bytea), ''::bytea ORDER BY i) FROM generate_series(1, 200) i
	$f$;
	CREATE OR REPLACE FUNCTION pgts.rra_put(a bytea, runs bytea, v bytea) RETURNS bytea
	LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $f$
	DECLARE
		k integer := 0;
		off integer := 1;
		p integer;
		n integer;
	BEGIN
		WHILE k + 4 <= octet_length(runs) LOOP
			p := get_byte(runs, k) * 256 + get_byte(runs, k + 1);
			n := get_byte(runs, k + 2) * 256 + get_byte(runs, k + 3);
			a := overlay(a PLACING substring(v FROM off FOR n * 8) FROM p * 8 - 7 FOR n * 8);
			off := off + n * 8;
			k := k + 4;
		END LOOP;
		RETURN a;
	END
	$f$;
	COMMENT ON FUNCTION pgts.rra_put(bytea, bytea, bytea) IS 'a (8 bytes a position) with runs of positions replaced by the elements of v, in order: runs holds (first position, count) pairs of 2-byte big-endian integers.';
	DO $do$
	BEGIN
		IF (SELECT atttypid FROM pg_attribute WHERE attrelid = 'pgts.rra_data'::regclass AND attname = 'vals') = 'float8[]'::regtype THEN
			DROP VIEW IF EXISTS pgts.rra_points;
			ALTER TABLE pgts.rra_data
				ALTER COLUMN vals TYPE bytea USING pgts.rra_pack_float8(vals),
				ALTER COLUMN times TYPE bytea USING pgts.rra_pack_int8(times);
			ALTER TABLE pgts.rra_data ALTER COLUMN vals SET STORAGE PLAIN, ALTER COLUMN times SET STORAGE PLAIN;
		END IF;
	END
	$do$;
	COMMENT ON TABLE pgts.rra_data IS 'One ring slot of one archive shape for a segment of 200 series, packed 8 bytes a position (big-endian): times holds the end of each series'' slot in Unix seconds (0x8000000000000000: nothing; a time older than the archive span is from an earlier lap), vals its float8 bits (0x7FF0000000000001: NULL). pgts.rra_time and pgts.rra_value read a position; pgts.rra_points reads them all.';
	CREATE OR REPLACE VIEW pgts.rra_points AS
		SELECT m.name, m.tags, m.key, m.rras[a.n::integer] AS archive,
			to_timestamp(t.t) AS time, pgts.rra_value(d.vals, (m.id % 200 + 1)::integer) AS value
		FROM pgts.metric m
		CROSS JOIN LATERAL unnest(m.bundles) WITH ORDINALITY AS a(bundle_id, n)
		JOIN pgts.rra_bundle b ON b.id = a.bundle_id
		JOIN pgts.rra_data d ON d.bundle_id = a.bundle_id AND d.seg = m.id / 200
		CROSS JOIN LATERAL (SELECT pgts.rra_time(d.times, (m.id % 200 + 1)::integer) AS t) t
		WHERE t.t > extract(epoch FROM now()) - b.step_s::bigint * b.size;
	COMMENT ON VIEW pgts.rra_points IS 'Archive values by series: one row per stored slot of each archive within its span; time is the end of the slot.';`
