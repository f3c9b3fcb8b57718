package sqlfn_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// latestTable makes a table partitioned like a series table: hourly
// partitions from 00:00 to 05:00 (the last two still empty, as premade
// ones are), a DEFAULT partition, an index on (device, time), and a
// dropped column so that the partitions' columns differ from the
// parent's. Device d has rows up to hour 3 - d%4 (devices 4 and 8 up to
// hour 3 too), device 0 has none at all.
func latestTable(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	b.WriteString(`CREATE TABLE lt (junk int, "time" timestamptz NOT NULL, device int NOT NULL, v float8, note text) PARTITION BY RANGE ("time");
		ALTER TABLE lt DROP COLUMN junk;
		CREATE INDEX ON lt (device, "time");
		CREATE TABLE lt_default PARTITION OF lt DEFAULT;
		CREATE TABLE lt_old (LIKE lt);
		ALTER TABLE lt ATTACH PARTITION lt_old FOR VALUES FROM ('2024-03-10 00:00+00') TO ('2024-03-10 01:00+00');`)
	for h := 1; h < 6; h++ {
		fmt.Fprintf(&b, "CREATE TABLE lt_%d PARTITION OF lt FOR VALUES FROM ('2024-03-10 %02d:00+00') TO ('2024-03-10 %02d:00+00');\n", h, h, h+1)
	}
	b.WriteString(`INSERT INTO lt ("time", device, v, note)
		SELECT timestamptz '2024-03-10 00:00+00' + m * interval '1 minute' + d * interval '1 second', d, m * 1000 + d, 'd' || d
		FROM generate_series(1, 12) AS d, generate_series(0, 239) AS m
		WHERE m < (4 - d % 4) * 60;
		ANALYZE lt;`)
	if _, err := conn.Exec(ctx, b.String()); err != nil {
		t.Fatal(err)
	}
}

const latestReference = `SELECT DISTINCT ON (device) device::text, "time"::text, v::text, note FROM lt
	WHERE device = ANY($1) ORDER BY device, "time" DESC`

func latestRows(t *testing.T, conn *pgx.Conn, sql string, args ...any) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
		v, err := r.Values()
		return fmt.Sprint(v), err
	})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

// TestLatest: pgts.latest gives the latest row of each key, as DISTINCT
// ON does, with the parent's columns (whatever the partitions' own
// order), for keys whose latest row is in the newest non-empty partition,
// in older ones, in the DEFAULT partition, and keys without rows.
func TestLatest(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	latestTable(t, conn)
	keys := []int32{0, 1, 2, 3, 4, 5, 7, 8, 12, 13}
	const q = `SELECT device::text, "time"::text, v::text, note FROM pgts.latest(NULL::lt, 'device', $1::int[]) ORDER BY device`
	check := func(what string) {
		t.Helper()
		want := latestRows(t, conn, latestReference, keys)
		got := latestRows(t, conn, q, keys)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s: pgts.latest gave\n%s\nwant\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	check("partitions only")
	// A row waiting in the DEFAULT partition (an INSERT beyond the
	// partitions made) is newer than any other of its device.
	if _, err := conn.Exec(ctx, `INSERT INTO lt VALUES ('2024-03-10 07:30+00', 5, -1, 'waiting'), ('2024-03-09 23:00+00', 13, -2, 'old waiting')`); err != nil {
		t.Fatal(err)
	}
	check("rows in the DEFAULT partition")
	// bigint keys, text keys: any type the key column compares with
	if got := latestRows(t, conn, `SELECT count(*) FROM pgts.latest(NULL::lt, 'device', ARRAY[1, 2, 2, NULL, 1]::bigint[])`); got[0] != "[2]" {
		t.Errorf("bigint keys, repeated and NULL: %v rows, want 2 (one per distinct key)", got)
	}
	if got := latestRows(t, conn, `SELECT note FROM pgts.latest(NULL::lt, 'note', ARRAY['d3'])`); len(got) != 1 || got[0] != "[d3]" {
		t.Errorf("text keys on an unindexed column: %v", got)
	}
	for _, c := range []struct{ sql, want string }{
		{`SELECT * FROM pgts.latest(NULL::lt, 'nosuch', ARRAY[1])`, `has no column "nosuch"`},
		{`SELECT * FROM pgts.latest(NULL::pgts.point_tz, 'bucket', ARRAY[1])`, `is not a table`},
		{`SELECT * FROM pgts.latest(1, 'device', ARRAY[1])`, `is not a table`},
	} {
		_, err := conn.Exec(ctx, c.sql)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.sql, err, c.want)
		}
	}
}

// TestLatestReadsNewestPartitionsOnly: with the DEFAULT partition empty,
// pgts.latest probes the newest partition that holds rows for every key
// and older partitions only for the keys not found yet, never the empty
// premade partitions (the LATERAL ... ORDER BY time DESC LIMIT 1 query
// probes them all for every key: with a DEFAULT partition, PostgreSQL
// merges the partitions instead of reading them in order).
func TestLatestReadsNewestPartitionsOnly(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	latestTable(t, conn)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// Device d has rows up to hour 3 - d%4: device 4 up to hour 3,
	// devices 1 and 5 up to hour 2, device 3 up to hour 0.
	if _, err := tx.Exec(ctx, `SELECT count(*) FROM pgts.latest(NULL::lt, 'device', ARRAY[1, 3, 4, 5])`); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query(ctx, `SELECT relname::text, coalesce(idx_scan, 0) FROM pg_stat_xact_user_tables WHERE relname LIKE 'lt%' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	scans := map[string]int64{}
	for rows.Next() {
		var n string
		var s int64
		if err := rows.Scan(&n, &s); err != nil {
			t.Fatal(err)
		}
		scans[n] = s
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// hour 3 (lt_3): all 4 keys; hour 2: 1, 3, 5; hour 1: 3; hour 0: 3.
	want := map[string]int64{"lt_default": 0, "lt_5": 0, "lt_4": 0, "lt_3": 4, "lt_2": 3, "lt_1": 1, "lt_old": 1}
	for n, w := range want {
		if scans[n] != w {
			t.Errorf("index scans of %s: %d, want %d (all: %v)", n, scans[n], w, scans)
		}
	}
}
