package shard

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/gen"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pgtest"
)

const genColumns = "time timestamptz not null, device integer not null, data1 double precision, data2 double precision"

var genNames = []string{"time", "device", "data1", "data2"}

// genOpts are the conditions rows of the tests: rows spaced over the
// last hours, inside the tables' window.
func genOpts(rows int64, start time.Time) gen.Options {
	return gen.Options{Rows: rows, Devices: 40, Width: 2, BatchRows: 2000, Start: start}
}

func testStart() time.Time { return time.Now().UTC().Add(-6 * time.Hour).Truncate(time.Hour) }

func shardedConditions(t *testing.T, cl *cluster, name string, parts int) *Table {
	t.Helper()
	spec := TableSpec{Series: partition.CreateSpec{Name: name, Columns: genColumns, TimeColumn: "time",
		Interval: partition.Interval{Micros: 3600e6}, Premake: 2}, ShardColumn: "device", Partitions: parts}
	tb, err := cl.c.CreateTable(context.Background(), spec, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// loadGen runs a sharded load of the conditions generator.
func loadGen(ctx context.Context, t *testing.T, c *Coordinator, table string, opts gen.Options, lcfg copyload.Config) (LoadSummary, error) {
	t.Helper()
	return loadGenAt(ctx, t, c, table, opts, lcfg, time.Now)
}

// loadGenAt is loadGen with the clock now.
func loadGenAt(ctx context.Context, t *testing.T, c *Coordinator, table string, opts gen.Options, lcfg copyload.Config, now func() time.Time) (LoadSummary, error) {
	t.Helper()
	g, err := gen.New("conditions", opts)
	if err != nil {
		t.Fatal(err)
	}
	in, stop, err := GeneratorInput(ctx, "conditions", g)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	return c.Load(ctx, table, []Input{in}, LoadConfig{Load: lcfg, Columns: genNames, Logger: testLog(t), Now: now})
}

func baseLoadConfig() copyload.Config {
	cfg := copyload.DefaultConfig()
	cfg.Workers, cfg.BatchRows = 1, 1000
	return cfg
}

// loadUnsharded loads the same rows into a plain series table on the
// coordinator, the reference.
func loadUnsharded(t *testing.T, pool *pgxpool.Pool, name string, opts gen.Options) {
	t.Helper()
	ctx := context.Background()
	m := partition.NewManager(pool, testLog(t), time.Now)
	if _, err := m.Create(ctx, partition.CreateSpec{Name: name, Columns: genColumns, TimeColumn: "time",
		Interval: partition.Interval{Micros: 3600e6}, Premake: 2}); err != nil {
		t.Fatal(err)
	}
	target, err := copyload.LookupTarget(ctx, pool, m, name)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gen.New("conditions", opts)
	if err != nil {
		t.Fatal(err)
	}
	l, err := copyload.New(pool, m, target, baseLoadConfig())
	if err != nil {
		t.Fatal(err)
	}
	if s, err := l.Run(ctx, &copyload.GenSource{Name: "conditions", Gen: g}); err != nil || s.Loaded != opts.Rows {
		t.Fatalf("unsharded load: %+v, %v", s, err)
	}
}

func sameRows(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: the reference has no rows", what)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		n := min(len(got), len(want), 5)
		t.Fatalf("%s: %d rows, want %d; first rows:\n got %q\nwant %q", what, len(got), len(want), got[:n], want[:n])
	}
}

func explain(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) string {
	t.Helper()
	return strings.Join(pgtest.Rows(t, pool, "EXPLAIN (VERBOSE, COSTS OFF) "+sql, args...), "\n")
}

// TestLoadAndQuery: rows loaded straight into 3 shards are all there,
// each on the shard of its key's partition; per-device hourly averages
// and the fleet-wide hourly average through the coordinator equal those
// of the same rows loaded unsharded; the aggregates run on the shards.
func TestLoadAndQuery(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t, 3)
	shardedConditions(t, cl, "cond", 6)
	start := testStart()
	opts := genOpts(60000, start)
	sum, err := loadGen(ctx, t, cl.c, "cond", opts, baseLoadConfig())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Loaded != opts.Rows || sum.Read != opts.Rows || sum.Rejected != 0 || !sum.Complete {
		t.Fatalf("summary %+v", sum)
	}
	if n := scalar(t, cl.coord, `SELECT count(*) FROM cond`); n != opts.Rows {
		t.Fatalf("coordinator counts %d rows", n)
	}
	var onShards int64
	for i, sp := range cl.shards {
		for p := i; p < 6; p += 3 {
			onShards += scalar(t, sp, fmt.Sprintf(`SELECT count(*) FROM cond_p%d`, p))
			// every row is in the partition its key hashes to on the coordinator
			var devices []int32
			if err := sp.QueryRow(ctx, fmt.Sprintf(`SELECT array_agg(DISTINCT device) FROM cond_p%d`, p)).Scan(&devices); err != nil {
				t.Fatal(err)
			}
			if bad := scalar(t, cl.coord, `SELECT count(*) FROM unnest($1::int[]) d WHERE NOT satisfies_hash_partition('cond'::regclass, 6, $2, d)`, devices, p); bad != 0 {
				t.Fatalf("partition %d holds %d keys of other partitions", p, bad)
			}
		}
	}
	if onShards != opts.Rows {
		t.Fatalf("the shards hold %d rows", onShards)
	}
	loadUnsharded(t, cl.coord, "cond_ref", opts)

	perDevice := `SELECT device, date_bin('1 hour', time, '2000-01-01'), count(*), round(avg(data1)::numeric, 9)
		FROM %s WHERE time >= $1 GROUP BY 1, 2 ORDER BY 1, 2`
	if _, err := cl.coord.Exec(ctx, `SET enable_partitionwise_aggregate = on`); err != nil {
		t.Fatal(err)
	}
	sameRows(t, "per-device hourly averages", pgtest.Rows(t, cl.coord, fmt.Sprintf(perDevice, "cond"), start), pgtest.Rows(t, cl.coord, fmt.Sprintf(perDevice, "cond_ref"), start))
	fleet := pgtest.Rows(t, cl.coord, `SELECT bucket, samples, round(average::numeric, 9) FROM cond_buckets('data1', '1 hour', $1, $2)`, start, start.Add(24*time.Hour))
	want := pgtest.Rows(t, cl.coord, `SELECT date_bin('1 hour', time, '2000-01-01'), count(data1), round(avg(data1)::numeric, 9) FROM cond_ref
		WHERE time >= $1 AND time < $2 GROUP BY 1 ORDER BY 1`, start, start.Add(24*time.Hour))
	sameRows(t, "fleet-wide hourly average", fleet, want)

	// the aggregates run on the shards
	pd := explain(t, cl.coord, fmt.Sprintf(perDevice, "cond"), start)
	if !strings.Contains(pd, "Async Foreign Scan") || !strings.Contains(pd, "GROUP BY") || strings.Count(pd, "Remote SQL") != 6 {
		t.Fatalf("per-device aggregate not pushed down:\n%s", pd)
	}
	t.Logf("per-device plan:\n%s", pd)
	inner := `SELECT b, sum(c)::bigint, sum(s)::float8 FROM (SELECT device AS k, date_bin('1 hour', time, '2000-01-01') AS b, sum(data1) AS s, count(data1) AS c
		FROM cond WHERE time >= $1 AND time < $2 GROUP BY 1, 2) per_shard GROUP BY b ORDER BY b`
	fp := explain(t, cl.coord, inner, start, start.Add(24*time.Hour))
	if !strings.Contains(fp, "Async Foreign Scan") || !strings.Contains(fp, "GROUP BY") || !strings.Contains(fp, "sum(data1), count(data1)") {
		t.Fatalf("two-phase aggregate not pushed down:\n%s", fp)
	}
	t.Logf("two-phase plan:\n%s", fp)
}
