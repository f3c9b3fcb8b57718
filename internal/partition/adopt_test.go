package partition

import (
	"context"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
)

// TestAdoptPartitionedTable registers a range-partitioned table that
// already has partitions and rows (as restored from a table-only dump):
// its rows and partitions stay, pgts premakes the rest; partitions that do
// not match the interval, or a default partition, are refused with the
// partition's name.
func TestAdoptPartitionedTable(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := NewManager(pool, nil, fixedClock(clock0))
	for _, q := range []string{
		`CREATE TABLE sensors (time timestamptz not null, device int, value float8) PARTITION BY RANGE (time)`,
		`CREATE TABLE sensors_old PARTITION OF sensors FOR VALUES FROM ('2024-03-04 00:00+00') TO ('2024-03-11 00:00+00')`,
		`CREATE TABLE sensors_p20240311 PARTITION OF sensors FOR VALUES FROM ('2024-03-11 00:00+00') TO ('2024-03-18 00:00+00')`,
		`CREATE INDEX ON sensors (time)`,
		`INSERT INTO sensors VALUES ('2024-03-05 00:00+00', 1, 1), ('2024-03-12 00:00+00', 2, 2)`,
		`CREATE TABLE daily (time timestamptz not null, v int) PARTITION BY RANGE (time)`,
		`CREATE TABLE daily_1 PARTITION OF daily FOR VALUES FROM ('2024-03-12 00:00+00') TO ('2024-03-13 00:00+00')`,
		`INSERT INTO daily VALUES ('2024-03-12 01:00+00', 1)`,
		`CREATE TABLE withdef (time timestamptz not null, v int) PARTITION BY RANGE (time)`,
		`CREATE TABLE withdef_rest PARTITION OF withdef DEFAULT`,
		`INSERT INTO withdef VALUES ('2024-03-12 01:00+00', 1)`,
		`CREATE TABLE bylist (time timestamptz not null, v int) PARTITION BY LIST (v)`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	adopt := func(name string) (*Table, error) {
		s := spec(name)
		s.Columns, s.Like = "", name
		return m.Create(ctx, s)
	}
	tb, err := adopt("sensors")
	if err != nil {
		t.Fatalf("adopting sensors: %v", err)
	}
	got := strings.Join(partitionNames(t, m, tb), ",")
	if want := "sensors_old,sensors_p20240311,sensors_p20240318,sensors_p20240325"; got != want {
		t.Fatalf("partitions = %s, want %s", got, want)
	}
	var n, idx int
	if err := pool.QueryRow(ctx, `SELECT count(*), (SELECT count(*) FROM pg_index WHERE indrelid = 'sensors'::regclass) FROM sensors`).Scan(&n, &idx); err != nil || n != 2 || idx != 1 {
		t.Fatalf("sensors has %d rows and %d indexes (%v), want 2 and 1", n, idx, err)
	}
	for name, want := range map[string]string{"daily": `"daily_1"`, "withdef": `"withdef_rest"`, "bylist": "not by range"} {
		if _, err := adopt(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("adopting %s: %v, want an error naming %s", name, err, want)
		}
		if _, err := m.Table(ctx, name); err == nil {
			t.Errorf("%s was registered", name)
		}
	}
}
