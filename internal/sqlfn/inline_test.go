package sqlfn_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestTimeBucketInlines: with a constant width, every form of
// pgts.time_bucket plans as built-in functions only (no pgts function
// left in the plan, so no SQL function call per row, and nothing that
// keeps postgres_fdw from sending it to a shard), and the 2-argument
// timestamptz form is date_bin itself (PostgreSQL 14+).
func TestTimeBucketInlines(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `CREATE TABLE m (time timestamptz, ts timestamp, d date, i bigint, v float8)`); err != nil {
		t.Fatal(err)
	}
	var v14 bool
	if err := conn.QueryRow(ctx, `SELECT current_setting('server_version_num')::int >= 140000`).Scan(&v14); err != nil {
		t.Fatal(err)
	}
	for _, expr := range []string{
		`pgts.time_bucket('1 hour', time)`,
		`pgts.time_bucket('1 month', time)`,
		`pgts.time_bucket('15 minutes', time, timestamptz '2024-01-01 00:05+00')`,
		`pgts.time_bucket('3 months', time, timestamptz '2024-01-01 00:05+00')`,
		`pgts.time_bucket('1 day', time, "offset" => '6 hours')`,
		`pgts.time_bucket('1 month', time, "offset" => '1 day')`,
		`pgts.time_bucket('1 day', time, 'Europe/Berlin')`,
		`pgts.time_bucket('1 year', time, 'Europe/Berlin')`,
		`pgts.time_bucket('1 day', time, 'Europe/Berlin', origin => '2024-01-01')`,
		`pgts.time_bucket('1 day', time, 'Europe/Berlin', "offset" => '2 hours')`,
		`pgts.time_bucket('1 hour', ts)`,
		`pgts.time_bucket('2 months', ts, timestamp '2000-02-01')`,
		`pgts.time_bucket('1 week', d)`,
		`pgts.time_bucket('1 month', d)`,
		`pgts.time_bucket(300::bigint, i)`,
		`pgts.time_bucket(300::bigint, i, 60::bigint)`,
	} {
		plan := explainVerbose(t, conn, `SELECT `+expr+`, avg(v) FROM m GROUP BY 1`)
		if strings.Contains(plan, "pgts.") {
			t.Errorf("%s is not inlined to built-in functions:\n%s", expr, plan)
		}
	}
	// Monday 2000-01-03 00:00 UTC, shown in the session's zone (New York).
	if plan := explainVerbose(t, conn, `SELECT pgts.time_bucket('1 hour', time), avg(v) FROM m GROUP BY 1`); v14 &&
		!strings.Contains(plan, `Group Key: date_bin('01:00:00'::interval, m."time", '2000-01-02 19:00:00-05'::timestamp with time zone)`) {
		t.Errorf("time_bucket('1 hour', time) does not plan as date_bin:\n%s", plan)
	}
}

func explainVerbose(t *testing.T, conn *pgx.Conn, sql string) string {
	t.Helper()
	rows, err := conn.Query(context.Background(), `EXPLAIN (VERBOSE, COSTS OFF) `+sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}
