package shard

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/pg"
)

// createBucketsFunction creates, next to a sharded table with a
// timestamptz time column, its ready-made two-phase bucket aggregate:
//
//	SELECT * FROM conditions_buckets('temperature', '1 hour', from, to [, origin])
//	  → bucket timestamptz, samples bigint, total float8, average float8
//
// Phase one groups by (shard key, bucket), which contains the partition
// key, so with enable_partitionwise_aggregate each partition's GROUP BY
// with sum and count runs on its shard (postgres_fdw pushes it down, the
// time filter with it: each shard prunes its own time partitions); phase
// two adds the partial sums and counts per bucket on the coordinator. A
// plain GROUP BY bucket is not pushed down: every row would travel.
//
// The function sets enable_partitionwise_aggregate and enable_async_append
// in its SET clause, so it pushes down whatever the session's settings.
// The value column is checked to be a column of the table and quoted.
func createBucketsFunction(ctx context.Context, tx pgx.Tx, t *Table) error {
	var timeType string
	err := tx.QueryRow(ctx, `SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2 AND NOT attisdropped`,
		t.Qualified(), t.Spec.TimeColumn).Scan(&timeType)
	if err != nil {
		return fmt.Errorf("reading the time column of %s: %w", t, err)
	}
	if timeType != "timestamp with time zone" {
		return nil // date_bin over other time types: see docs/scale-out.md, limits
	}
	fn := pg.QuoteQualified(t.Schema, BucketsFunction(t.Name))
	query := fmt.Sprintf(`SELECT b, sum(c)::bigint, sum(s)::float8, (sum(s) / nullif(sum(c), 0))::float8
	FROM (SELECT %s AS k, date_bin($1, %s, $4) AS b, sum(%%1$I) AS s, count(%%1$I) AS c
		FROM %s WHERE %s >= $2 AND %s < $3 GROUP BY 1, 2) AS per_shard
	GROUP BY b ORDER BY b`,
		pg.QuoteIdent(t.ShardColumn), pg.QuoteIdent(t.Spec.TimeColumn), t.Qualified(), pg.QuoteIdent(t.Spec.TimeColumn), pg.QuoteIdent(t.Spec.TimeColumn))
	body := fmt.Sprintf(`
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = %s::regclass AND attname = value_column AND attnum > 0 AND NOT attisdropped) THEN
		RAISE EXCEPTION 'column %% is not a column of %%', value_column, %s USING ERRCODE = 'undefined_column';
	END IF;
	RETURN QUERY EXECUTE format(%s, value_column) USING bucket_width, from_time, to_time, origin;
END`, pg.QuoteLiteral(t.Qualified()), pg.QuoteLiteral(t.String()), pg.QuoteLiteral(query))
	stmt := `CREATE OR REPLACE FUNCTION ` + fn + `(value_column text, bucket_width interval, from_time timestamptz, to_time timestamptz,
		origin timestamptz DEFAULT '2000-01-01 00:00:00+00')
	RETURNS TABLE (bucket timestamptz, samples bigint, total double precision, average double precision)
	LANGUAGE plpgsql STABLE
	SET enable_partitionwise_aggregate = on
	SET enable_async_append = on
	AS ` + dollarQuote(body)
	if _, err := tx.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("creating %s: %w", fn, err)
	}
	_, err = tx.Exec(ctx, `COMMENT ON FUNCTION `+fn+`(text, interval, timestamptz, timestamptz, timestamptz) IS `+
		pg.QuoteLiteral("Two-phase fleet-wide aggregate of a column of "+t.String()+" per time bucket in [from_time, to_time): per shard GROUP BY "+t.ShardColumn+", bucket (pushed down), summed here."))
	return err
}

// dollarQuote quotes a function body with a tag it does not contain.
func dollarQuote(body string) string {
	tag := "$pgts$"
	for i := 0; contains(body, tag); i++ {
		tag = fmt.Sprintf("$pgts%d$", i)
	}
	return tag + body + tag
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
