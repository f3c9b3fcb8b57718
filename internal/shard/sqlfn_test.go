package shard

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/pgtest"
)

// TestSQLHelpersOnCoordinator: the pgts SQL helpers (package sqlfn) on
// the coordinator of a sharded table give the rows they give on the same
// rows unsharded; time_bucket, in every form, inlines to built-in
// functions, so postgres_fdw sends a per-device bucketed aggregate to the
// shards whole; first/last, pgts functions, run on the coordinator.
func TestSQLHelpersOnCoordinator(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t, 2)
	shardedConditions(t, cl, "cond", 4)
	start := testStart()
	opts := genOpts(20000, start)
	if _, err := loadGen(ctx, t, cl.c, "cond", opts, baseLoadConfig()); err != nil {
		t.Fatal(err)
	}
	loadUnsharded(t, cl.coord, "cond_ref", opts)
	if _, err := cl.coord.Exec(ctx, `SET enable_partitionwise_aggregate = on`); err != nil {
		t.Fatal(err)
	}
	// Sent to the shards whole: forms whose inlined expression is made of
	// built-in functions without a text argument (postgres_fdw ships a
	// function with a collatable argument only when the collation comes
	// from a foreign column; a zone name or a date_part field is a text
	// constant). Computed here, over rows filtered on the shards: the
	// forms in months or in a time zone.
	for _, c := range []struct {
		name, bucket string
		pushed       bool
		remote       string
	}{
		{"time_bucket", `pgts.time_bucket('1 hour', time)`, true, `date_bin('01:00:00'::interval, "time", '2000-01-03 00:00:00+00'::timestamp with time zone)`},
		{"time_bucket with an origin", `pgts.time_bucket('15 minutes', time, timestamptz '2024-01-01 00:05+00')`, true, `date_bin('00:15:00'::interval, "time", '2024-01-01 00:05:00+00'::timestamp with time zone)`},
		{"time_bucket with an offset", `pgts.time_bucket('1 day', time, "offset" => '6 hours')`, true, `date_bin('1 day'::interval, "time", '2000-01-03 06:00:00+00'::timestamp with time zone)`},
		{"time_bucket with a zone", `pgts.time_bucket('15 minutes', time, 'Europe/Berlin')`, false, `WHERE (("time" >= `},
		{"time_bucket in months", `pgts.time_bucket('1 month', time)`, false, `WHERE (("time" >= `},
	} {
		q := `SELECT device, ` + c.bucket + ` AS b, count(*), round(avg(data1)::numeric, 9), min(data2)
			FROM %s WHERE time >= $1 GROUP BY 1, 2 ORDER BY 1, 2`
		sameRows(t, c.name, pgtest.Rows(t, cl.coord, fmt.Sprintf(q, "cond"), start), pgtest.Rows(t, cl.coord, fmt.Sprintf(q, "cond_ref"), start))
		plan := explain(t, cl.coord, fmt.Sprintf(q, "cond"), start)
		groupedRemotely := strings.Count(plan, "GROUP BY") == 4
		if strings.Count(plan, "Remote SQL") != 4 || groupedRemotely != c.pushed || !strings.Contains(plan, c.remote) || strings.Contains(plan, "pgts.") {
			t.Errorf("%s: want pushed down %v, with %q in the Remote SQL:\n%s", c.name, c.pushed, c.remote, plan)
		}
		t.Logf("%s:\n%s", c.name, plan)
	}

	// first/last are pgts functions: postgres_fdw sends only built-in
	// ones (or those of an extension named in the server's options), so
	// the rows come to the coordinator, filtered on the shards.
	fl := `SELECT device, pgts.first(data1, time), pgts.last(data1, time), pgts.last(data2, time)
		FROM %s WHERE time >= $1 GROUP BY 1 ORDER BY 1`
	sameRows(t, "first/last", pgtest.Rows(t, cl.coord, fmt.Sprintf(fl, "cond"), start), pgtest.Rows(t, cl.coord, fmt.Sprintf(fl, "cond_ref"), start))
	plan := explain(t, cl.coord, fmt.Sprintf(fl, "cond"), start)
	if strings.Contains(plan, "pgts.") && strings.Contains(plan, "Remote SQL: SELECT device, pgts") {
		t.Errorf("first/last sent to a shard:\n%s", plan)
	}
	t.Logf("first/last:\n%s", plan)

	// The latest row of each device: one index probe per device, sent to
	// the shard that holds the device (run-time partition pruning).
	latest := `SELECT d.device, l.time, l.data1 FROM generate_series(0, 39) AS d(device)
		CROSS JOIN LATERAL (SELECT time, data1 FROM %s c WHERE c.device = d.device ORDER BY time DESC LIMIT 1) AS l ORDER BY 1`
	sameRows(t, "latest row per device", pgtest.Rows(t, cl.coord, fmt.Sprintf(latest, "cond")), pgtest.Rows(t, cl.coord, fmt.Sprintf(latest, "cond_ref")))
	t.Logf("latest row per device:\n%s", explain(t, cl.coord, fmt.Sprintf(latest, "cond")))

	// Gap filling over the coordinator: the bucketed aggregate of one
	// device goes to its shard; the buckets and windows run here.
	gap := `SELECT b.bucket, a.v, pgts.locf(a.v) OVER w,
			pgts.interpolate(a.v, b.bucket, pgts.known(a.v, b.bucket) OVER w, pgts.known(a.v, b.bucket) OVER (ORDER BY b.bucket DESC))
		FROM pgts.buckets('10 minutes', $1, $2) AS b(bucket)
		LEFT JOIN (SELECT pgts.time_bucket('10 minutes', time) AS bucket, round(avg(data1)::numeric, 9)::float8 AS v
			FROM %s WHERE device = 3 AND time >= $1 AND time < $2 GROUP BY 1) AS a USING (bucket)
		WINDOW w AS (ORDER BY b.bucket) ORDER BY 1`
	from, to := start.Add(-2*time.Hour), start.Add(8*time.Hour)
	sameRows(t, "gap filling", pgtest.Rows(t, cl.coord, fmt.Sprintf(gap, "cond"), from, to), pgtest.Rows(t, cl.coord, fmt.Sprintf(gap, "cond_ref"), from, to))
	plan = explain(t, cl.coord, fmt.Sprintf(gap, "cond"), from, to)
	if strings.Count(plan, "Remote SQL") != 1 {
		t.Errorf("gap filling of one device: not one shard's scan:\n%s", plan)
	}
	t.Logf("gap filling:\n%s", plan)
}
