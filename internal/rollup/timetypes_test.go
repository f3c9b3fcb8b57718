package rollup

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/partition"
)

// TestTimeTypes builds a rollup on a table of each time type, writes,
// refreshes and compares with GROUP BY over the raw rows, bucket for
// bucket, including month buckets.
func TestTimeTypes(t *testing.T) {
	for _, tc := range []struct {
		typ, epoch string
		interval   partition.Interval
		bucket     partition.Interval
		width      string // pgts.time_bucket's width for the raw GROUP BY
		gen        string // the time of row i
	}{
		{"timestamptz", "", partition.Interval{Days: 7}, partition.Interval{Months: 1}, "'1 month'::interval", "$1::timestamptz - i * interval '37 minutes'"},
		{"timestamp", "", partition.Interval{Days: 7}, partition.Interval{Micros: 3600e6}, "'1 hour'::interval", "$1::timestamp - i * interval '7 minutes'"},
		{"date", "", partition.Interval{Days: 30}, partition.Interval{Days: 7}, "'7 days'::interval", "$1::date - (i / 15)"},
		{"bigint", "s", partition.Interval{Days: 1}, partition.Interval{Micros: 3600e6}, "3600::bigint", "extract(epoch FROM $1::timestamptz)::bigint - i * 61"},
		{"bigint", "ms", partition.Interval{Days: 1}, partition.Interval{Micros: 900e6}, "900000::bigint", "(extract(epoch FROM $1::timestamptz) * 1000)::bigint - i * 6101"},
	} {
		t.Run(tc.typ+tc.epoch, func(t *testing.T) {
			ctx := context.Background()
			c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
			pool, m, rs := setup(t, c)
			raw, err := m.Create(ctx, partition.CreateSpec{Name: "raw", Columns: "time " + tc.typ + " not null, device int, v float8",
				TimeColumn: "time", EpochUnit: tc.epoch, Interval: tc.interval, Premake: 1})
			if err != nil {
				t.Fatal(err)
			}
			var times []int64
			for d := 0; d < 120; d++ {
				times = append(times, c.t.Add(-time.Duration(d)*24*time.Hour).UnixMicro())
			}
			if _, err := m.Ensure(ctx, raw, times); err != nil {
				t.Fatal(err)
			}
			ins := `INSERT INTO raw SELECT ` + tc.gen + `, i % 4, i * 1.25 FROM generate_series(1, 1500) i`
			execSQL(t, pool, ins, c.t)
			r, err := rs.Create(ctx, Spec{Name: "r", On: "raw", Bucket: tc.bucket, GroupBy: []string{"device"},
				Aggs: mustAggs(t, "avg(v), count(*), first(v, time), max(v)"), RealTime: true})
			if err != nil {
				t.Fatal(err)
			}
			view := `SELECT bucket::text, jsonb_build_array(device)::text, avg_v::float8, count, first_v, max_v FROM r`
			want := `SELECT b::text, jsonb_build_array(device)::text, avg(v)::float8, count(*), pgts.first(v, time), max(v)
				FROM (SELECT pgts.time_bucket(` + tc.width + `, time) b, * FROM raw) x GROUP BY 1, 2`
			check := func(when string) {
				t.Helper()
				if d := diff(fetch(t, pool, view), fetch(t, pool, want), all); d != "" {
					t.Fatalf("%s:\n%s", when, d)
				}
			}
			check("before a refresh")
			if _, err := rs.Refresh(ctx, r); err != nil {
				t.Fatal(err)
			}
			check("after a refresh")
			execSQL(t, pool, `UPDATE raw SET v = v + 1 WHERE device = 1`)
			execSQL(t, pool, `DELETE FROM raw WHERE device = 2 AND v > 1000`)
			check("after writes")
			st, err := rs.Refresh(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			if st.Pairs == 0 {
				t.Fatalf("refresh after writes rewrote nothing: %+v", st)
			}
			check("after the second refresh")
			var mat int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM r_data`).Scan(&mat); err != nil || mat == 0 {
				t.Fatalf("nothing materialized (%v)", err)
			}
			t.Log(fmt.Sprintf("%d materialized rows, %+v", mat, st))
		})
	}
}
