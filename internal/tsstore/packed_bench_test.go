package tsstore

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/bench"
	"github.com/pgts/pgts/internal/catalog"
)

// The packed-row benchmarks compare, on the server, archive rows as
// arrays (float8[], bigint[]: the format before catalog migration 13)
// and packed (bytea, 8 bytes a position), in two tables of the same
// rows: reading the 7,200 rows of a sum over 1,000 series × 24 h of
// one-minute slots (5 segments × 1,440 slots, one statement a segment,
// drained undecoded), and the flush's UPDATE of 20,000 positions, dense
// (every position of 100 rows: one run a row) or sparse (every other
// position of 200 rows: 100 runs a row). Each reports the CPU of the
// PostgreSQL server (postmaster and backends, /proc, 10 ms ticks):
//
//	go test -run '^$' -bench 'Packed(Read|Put)' -benchtime 20x ./internal/tsstore

// packedBenchTables creates and fills rra_arrays and rra_packed.
func packedBenchTables(b *testing.B) (*pgxpool.Pool, int) {
	ctx := context.Background()
	pool := newPool(b)
	if err := catalog.Migrate(ctx, pool); err != nil {
		b.Fatal(err)
	}
	var backend int
	if err := pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE rra_arrays (bundle_id int, seg bigint, slot int, vals float8[], times bigint[], PRIMARY KEY (bundle_id, seg, slot))`,
		`ALTER TABLE rra_arrays ALTER COLUMN vals SET STORAGE PLAIN, ALTER COLUMN times SET STORAGE PLAIN`,
		`CREATE TABLE rra_packed (bundle_id int, seg bigint, slot int, vals bytea, times bytea, PRIMARY KEY (bundle_id, seg, slot))`,
		`ALTER TABLE rra_packed ALTER COLUMN vals SET STORAGE PLAIN, ALTER COLUMN times SET STORAGE PLAIN`,
		`INSERT INTO rra_arrays SELECT 1, g, s, (SELECT array_agg(random() * 1000) FROM generate_series(1, 200) WHERE g >= 0),
			array_fill(1700000000 + s * 60::int8, ARRAY[200]) FROM generate_series(0, 4) g, generate_series(0, 1439) s`,
		`INSERT INTO rra_packed SELECT bundle_id, seg, slot, pgts.rra_pack_float8(vals), pgts.rra_pack_int8(times) FROM rra_arrays`,
		`VACUUM ANALYZE rra_arrays`,
		`VACUUM ANALYZE rra_packed`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	return pool, bench.PostmasterOf(backend)
}

func BenchmarkPackedRead(b *testing.B) {
	ctx := context.Background()
	pool, pm := packedBenchTables(b)
	for _, c := range []struct{ name, sql string }{
		{"arrays", `SELECT times, vals FROM rra_arrays WHERE bundle_id = 1 AND seg = $1 AND slot BETWEEN 0 AND 1439`},
		{"arrays-lap", `SELECT slot, vals, CASE WHEN array_remove(times, NULL) <@ ARRAY[1700000000 + slot * 60::int8] THEN NULL ELSE times END
			FROM rra_arrays WHERE bundle_id = 1 AND seg = $1 AND slot BETWEEN 0 AND 1439`},
		{"packed", `SELECT slot, times, vals FROM rra_packed WHERE bundle_id = 1 AND seg = $1 AND slot BETWEEN 0 AND 1439`},
		{"packed-vals", `SELECT slot, vals FROM rra_packed WHERE bundle_id = 1 AND seg = $1 AND slot BETWEEN 0 AND 1439`},
	} {
		b.Run(c.name, func(b *testing.B) {
			srv0 := bench.ServerTimes(pm)
			for b.Loop() {
				for seg := range 5 {
					rows, err := pool.Query(ctx, c.sql, seg)
					if err != nil {
						b.Fatal(err)
					}
					for rows.Next() {
						_ = rows.RawValues()
					}
					if rows.Err() != nil {
						b.Fatal(rows.Err())
					}
				}
			}
			b.ReportMetric(bench.ServerTimes(pm).Sub(srv0).CPUSeconds*1e3/float64(b.N), "server-ms/op")
		})
	}
}

func BenchmarkPackedPut(b *testing.B) {
	ctx := context.Background()
	pool, pm := packedBenchTables(b)
	const arraysSQL = `WITH u AS (
	SELECT b, g, sl, array_agg(p ORDER BY p, t, o) AS i, array_agg(v ORDER BY p, t, o) AS v, array_agg(t ORDER BY p, t, o) AS t
	FROM unnest($1::int4[], $2::int8[], $3::int4[], $4::int4[], $5::int8[], $6::float8[]) WITH ORDINALITY AS x(b, g, sl, p, t, v, o)
	GROUP BY b, g, sl
)
UPDATE rra_arrays d SET vals = pgts.array_put(d.vals, u.i, u.v), times = pgts.array_put(d.times, u.i, u.t)
FROM u WHERE d.bundle_id = u.b AND d.seg = u.g AND d.slot = u.sl`
	const packedSQL = `WITH u AS (SELECT * FROM unnest($1::int4[], $2::int8[], $3::int4[], $4::bytea[], $5::bytea[], $6::bytea[]) AS x(b, g, sl, r, v, t))
UPDATE rra_packed d SET vals = pgts.rra_put(d.vals, u.r, u.v), times = pgts.rra_put(d.times, u.r, u.t)
FROM u WHERE d.bundle_id = u.b AND d.seg = u.g AND d.slot = u.sl`
	for _, sparse := range []bool{false, true} {
		for _, packed := range []bool{false, true} {
			name := map[bool]string{false: "dense", true: "sparse"}[sparse] + "/" + map[bool]string{false: "arrays", true: "packed"}[packed]
			b.Run(name, func(b *testing.B) {
				srv0 := bench.ServerTimes(pm)
				points, round := 0, 0
				for b.Loop() {
					var r slotRows
					slots := 20
					if sparse {
						slots = 40
					}
					for seg := range 5 {
						for s := range slots {
							slot := int32((round*slots + s) % 1440)
							for pos := int32(1); pos <= SegmentWidth; pos++ {
								if sparse && pos%2 == 0 {
									continue
								}
								r.bundle, r.seg, r.slot, r.pos = append(r.bundle, 1), append(r.seg, int64(seg)), append(r.slot, slot), append(r.pos, pos)
								r.time, r.val = append(r.time, 1800000000+int64(slot)), append(r.val, float64(pos)/3)
							}
						}
					}
					round++
					points += r.len()
					var err error
					if packed {
						st := flushStmt{"pgts_bench_packed_put", packedSQL, stmtWriteSlots.oids}
						err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
							_, err := execEncoded(ctx, tx, st, r.encode())
							return err
						})
					} else {
						_, err = pool.Exec(ctx, arraysSQL, r.bundle, r.seg, r.slot, r.pos, r.time, r.val)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(bench.ServerTimes(pm).Sub(srv0).CPUSeconds*1e6/float64(points), "server-µs/point")
			})
		}
	}
}
