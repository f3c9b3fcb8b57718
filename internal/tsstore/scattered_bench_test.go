package tsstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/bench"
	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/rra"
)

// BenchmarkScatteredRead compares, on the server, the statements that
// read a few scattered positions of a segment over a day of one-minute
// slots (1,440 rows of packedBenchTables' rra_packed): one protocol row
// per position and slot (sqlReadSlots before), one row per position with
// its slots aggregated (string_agg) over a join with the positions and
// over a set-returning function (sqlReadPositions: a prepared statement's
// generic plan of the join materializes the wide rows), one row per slot
// carrying only the positions asked for, whole rows, and rows cut to as
// many contiguous positions (span). Each is drained undecoded; the
// log shows the server's execution time (EXPLAIN ANALYZE):
//
//	go test -run '^$' -bench ScatteredRead -benchtime 20x ./internal/tsstore
func BenchmarkScatteredRead(b *testing.B) {
	ctx := context.Background()
	pool, pm := packedBenchTables(b)
	const where = ` WHERE d.bundle_id = $1 AND d.seg = $2 AND (d.slot BETWEEN $4 AND $5 OR d.slot BETWEEN $6 AND $7)`
	for _, c := range []struct{ name, sql string }{
		{"position-slot", `SELECT p.p, substring(d.times FROM p.p * 8 - 7 FOR 8), substring(d.vals FROM p.p * 8 - 7 FOR 8)
FROM rra_packed d, unnest($3::int4[]) AS p(p)` + where},
		{"position-join", `SELECT p.p, string_agg(substring(d.times FROM p.p * 8 - 7 FOR 8) || substring(d.vals FROM p.p * 8 - 7 FOR 8), ''::bytea)
FROM rra_packed d, unnest($3::int4[]) AS p(p)` + where + ` GROUP BY p.p`},
		{"position", strings.ReplaceAll(sqlReadPositions, "pgts.rra_data", "rra_packed")},
		{"slot", `SELECT d.slot, (SELECT string_agg(substring(d.times FROM p.p * 8 - 7 FOR 8) || substring(d.vals FROM p.p * 8 - 7 FOR 8), ''::bytea ORDER BY p.o)
	FROM unnest($3::int4[]) WITH ORDINALITY AS p(p, o))
FROM rra_packed d` + where},
		{"whole", `SELECT d.times, d.vals FROM rra_packed d` + where + ` AND $3::int4[] IS NOT NULL`},
		{"span", `SELECT substring(d.times FROM 1 FOR 8 * cardinality($3::int4[])), substring(d.vals FROM 1 FOR 8 * cardinality($3::int4[])) FROM rra_packed d` + where},
	} {
		for _, np := range []int{1, 6, 18} {
			pos := make([]int32, np)
			for i := range pos {
				pos[i] = int32(1 + i*11)
			}
			b.Run(fmt.Sprintf("%s/%d", c.name, np), func(b *testing.B) {
				var plan []string
				rows, err := pool.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+c.sql, 1, 0, pos, 0, 1439, -1, -1)
				if err != nil {
					b.Fatal(err)
				}
				for rows.Next() {
					var line string
					if err := rows.Scan(&line); err != nil {
						b.Fatal(err)
					}
					plan = append(plan, line)
				}
				if rows.Err() != nil {
					b.Fatal(rows.Err())
				}
				b.Logf("%s", plan[len(plan)-1])
				srv0 := bench.ServerTimes(pm)
				rowsRead := 0
				for b.Loop() {
					rows, err := pool.Query(ctx, c.sql, 1, 0, pos, 0, 1439, -1, -1)
					if err != nil {
						b.Fatal(err)
					}
					for rows.Next() {
						_ = rows.RawValues()
						rowsRead++
					}
					if rows.Err() != nil {
						b.Fatal(rows.Err())
					}
				}
				b.ReportMetric(bench.ServerTimes(pm).Sub(srv0).CPUSeconds*1e3/float64(b.N), "server-ms/op")
				b.ReportMetric(float64(rowsRead)/float64(b.N), "rows/op")
			})
		}
	}
}

// BenchmarkFetchOne: one Fetch of one series of a full segment over a
// day of one-minute slots, as the render API's single-series request
// reads it, with the server's CPU; the log shows the plans of its
// statement, custom and generic (what a prepared statement runs after
// its fifth execution).
func BenchmarkFetchOne(b *testing.B) {
	ctx := context.Background()
	c := &clock{now: time.Unix(base+1440*60, 0)}
	cfg := testConfig(b, c)
	cfg.Raw = nil
	cfg.Rules = []rra.Rule{rule(b, `.`, "60s", "", "60s:7d")}
	cfg.MaxMemory = 1 << 30
	pool := newPool(b)
	s := open(b, pool, cfg)
	pts := make([]ingest.Point, 0, 400*1440)
	for i := range 400 {
		for k := range 1440 {
			pts = append(pts, ingest.Point{Name: fmt.Sprintf("one.s%03d", i), Value: float64(k), Time: (base + int64(k)*60) * 1e6})
		}
	}
	if err := s.Add(ctx, pts); err != nil {
		b.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE pgts.rra_data"); err != nil {
		b.Fatal(err)
	}
	var backend int
	if err := pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		b.Fatal(err)
	}
	pm := bench.PostmasterOf(backend)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var bundle, seg, pos int64
	if err := conn.QueryRow(ctx, `SELECT (SELECT id FROM pgts.rra_bundle WHERE step_s = 60), id / 200, id % 200 + 1 FROM pgts.metric WHERE key = 'one.s107'`).Scan(&bundle, &seg, &pos); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		if _, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode); err != nil {
			b.Fatal(err)
		}
		if _, err := conn.Exec(ctx, "PREPARE one AS "+sqlReadPositions); err != nil {
			b.Fatal(err)
		}
		rows, err := conn.Query(ctx, fmt.Sprintf("EXPLAIN (ANALYZE, BUFFERS) EXECUTE one(%d, %d, '{%d}', 0, 10079, -1, -1)", bundle, seg, pos))
		if err != nil {
			b.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				b.Fatal(err)
			}
			plan = append(plan, line)
		}
		if rows.Err() != nil {
			b.Fatal(rows.Err())
		}
		b.Logf("%s:\n%s", mode, strings.Join(plan, "\n"))
		if _, err := conn.Exec(ctx, "DEALLOCATE one; RESET plan_cache_mode"); err != nil {
			b.Fatal(err)
		}
	}
	conn.Release()
	srv0 := bench.ServerTimes(pm)
	for b.Loop() {
		got, err := s.Fetch(ctx, []string{"one.s107"}, base, base+1440*60, 0)
		if err != nil || len(got) != 1 {
			b.Fatalf("%d series, %v", len(got), err)
		}
	}
	b.ReportMetric(bench.ServerTimes(pm).Sub(srv0).CPUSeconds*1e3/float64(b.N), "server-ms/op")
}
