-- pgts.latest(NULL::tbl, key_column, keys): the latest row (by the
-- time column, the range partition key) of each key of a table
-- partitioned by range, as DISTINCT ON (key) ... ORDER BY key, time DESC
-- gives it, but reading partitions newest first and each key only until
-- its latest row is found: the newest partition holding rows answers most
-- keys with one index probe each; empty partitions (premade future ones)
-- are skipped with no probe. When the DEFAULT partition holds rows
-- (waiting to be moved), they may be newer than any partition's: then
-- every key is probed in the whole table (the plain LATERAL query). The
-- function is STABLE: all its queries see the caller's snapshot, so a
-- row moving between partitions meanwhile is seen once. Among rows of a
-- key with the same latest time, which one comes is not defined (as with
-- ORDER BY time DESC LIMIT 1).
CREATE OR REPLACE FUNCTION pgts.latest(rowtype anyelement, key_column text, keys anycompatiblearray) RETURNS SETOF anyelement
LANGUAGE plpgsql STABLE AS $fn$
DECLARE
	rel regclass;
	typ text := pg_typeof(rowtype)::text;
	time_column text;
	time_type text;
	cols text;
	def regclass;
	parts regclass[];
	part regclass;
	todo keys%TYPE := ARRAY(SELECT DISTINCT k FROM unnest(keys) AS k WHERE k IS NOT NULL);
	got keys%TYPE;
	nonempty boolean;
	r record;
	probe text;
	probe_parts text;
BEGIN
	SELECT t.typrelid::regclass INTO rel FROM pg_type t
		JOIN pg_class c ON c.oid = t.typrelid AND c.relkind IN ('r', 'p')
		WHERE t.oid = pg_typeof(rowtype);
	IF rel IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
			MESSAGE = format('pgts.latest: %s is not a table (pass NULL::your_table as the first argument)', typ);
	END IF;
	IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = rel AND attname = key_column AND attnum > 0 AND NOT attisdropped) THEN
		RAISE EXCEPTION USING ERRCODE = 'undefined_column',
			MESSAGE = format('pgts.latest: table %s has no column "%s"', rel, key_column);
	END IF;
	-- the columns of the parent, in its order, from any partition
	SELECT string_agg(format('c.%I', attname), ', ' ORDER BY attnum) INTO cols
		FROM pg_attribute WHERE attrelid = rel AND attnum > 0 AND NOT attisdropped;
	SELECT a.attname, format_type(a.atttypid, a.atttypmod), nullif(p.partdefid, 0)
		INTO time_column, time_type, def
		FROM pg_partitioned_table p JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]
		WHERE p.partrelid = rel AND p.partstrat = 'r' AND p.partnatts = 1;
	IF time_column IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
			MESSAGE = format('pgts.latest: table %s is not partitioned by range on a time column', rel);
	END IF;
	probe := 'SELECT k.key, l.r FROM unnest($1) AS k(key) CROSS JOIN LATERAL (SELECT ROW(' || cols || ')::' || typ
		|| ' AS r FROM %s AS c WHERE c.' || quote_ident(key_column) || ' = k.key ORDER BY c.' || quote_ident(time_column)
		|| ' DESC LIMIT 1) AS l';
	IF def IS NOT NULL THEN
		EXECUTE format('SELECT EXISTS (SELECT FROM %s)', def) INTO nonempty;
		IF nonempty THEN
			RETURN QUERY EXECUTE format('SELECT (l.r).* FROM (' || probe || ') AS l', rel) USING todo;
			RETURN;
		END IF;
	END IF;
	-- the range partitions, newest first: their lower bounds are the
	-- literals of pg_get_expr, read as the time column's type in one query
	SELECT 'SELECT array_agg(oid ORDER BY lo DESC NULLS LAST) FROM (VALUES '
			|| string_agg(format('(%s::oid, %s::%s)', c.oid::bigint,
				CASE WHEN b.lo = 'MINVALUE' THEN 'NULL' ELSE b.lo END, time_type), ', ')
			|| ') AS v(oid, lo)'
		INTO probe_parts
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		CROSS JOIN LATERAL (SELECT substring(pg_get_expr(c.relpartbound, c.oid) FROM '^FOR VALUES FROM \((.*)\) TO \(') AS lo) AS b
		WHERE i.inhparent = rel AND c.oid IS DISTINCT FROM def;
	IF probe_parts IS NOT NULL THEN
		EXECUTE probe_parts INTO parts;
	END IF;
	FOREACH part IN ARRAY coalesce(parts, '{}') LOOP
		EXIT WHEN cardinality(todo) = 0 OR todo IS NULL;
		EXECUTE format('SELECT EXISTS (SELECT FROM %s)', part) INTO nonempty;
		CONTINUE WHEN NOT nonempty;
		got := '{}';
		FOR r IN EXECUTE format(probe, part) USING todo LOOP
			got := got || r.key;
			RETURN NEXT r.r;
		END LOOP;
		IF cardinality(got) > 0 THEN
			todo := ARRAY(SELECT k FROM unnest(todo) AS k EXCEPT ALL SELECT g FROM unnest(got) AS g);
		END IF;
	END LOOP;
END
$fn$;
COMMENT ON FUNCTION pgts.latest(anyelement, text, anycompatiblearray) IS 'The latest row of each of keys in table NULL::tbl (partitioned by range on its time column), by its column key_column: DISTINCT ON (key) ... ORDER BY key, time DESC, reading partitions newest first and each key only until found; empty partitions are skipped.';
