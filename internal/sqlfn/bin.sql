-- pgts._bin: date_bin where PostgreSQL has it (14+), the same in exact
-- integer arithmetic on 13. After an upgrade from 13, rerunning this
-- file (it is idempotent) switches to date_bin.
DO $do$
BEGIN
	IF current_setting('server_version_num')::integer >= 140000 THEN
		EXECUTE $e$CREATE OR REPLACE FUNCTION pgts._bin(w interval, ts timestamptz, origin timestamptz) RETURNS timestamptz
			LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT date_bin(w, ts, origin)'$e$;
		EXECUTE $e$CREATE OR REPLACE FUNCTION pgts._bin(w interval, ts timestamp, origin timestamp) RETURNS timestamp
			LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT date_bin(w, ts, origin)'$e$;
	ELSE
		EXECUTE $e$CREATE OR REPLACE FUNCTION pgts._bin(w interval, ts timestamptz, origin timestamptz) RETURNS timestamptz
			LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT pgts._bin_arith(w, ts, origin)'$e$;
		EXECUTE $e$CREATE OR REPLACE FUNCTION pgts._bin(w interval, ts timestamp, origin timestamp) RETURNS timestamp
			LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT pgts._bin_arith(w, ts, origin)'$e$;
	END IF;
END
$do$;
