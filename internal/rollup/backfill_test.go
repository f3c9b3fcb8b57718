package rollup

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/records"
)

// TestBackfillReadsOnlyItsKeys: a backfill of one device into old
// buckets, by psql (pairs) and by pgts load (a range record), makes the
// refresh read that device's rows of those buckets (an index on (device,
// time) is there), not every device's; the rollup equals GROUP BY after.
func TestBackfillReadsOnlyItsKeys(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
	pool, m, rs := setup(t, c)
	tbl, err := m.Create(ctx, partition.CreateSpec{Name: "rb", Columns: "time timestamptz not null, device int not null, v float8",
		TimeColumn: "time", Interval: partition.Interval{Days: 1}, Premake: 1, ExtraIndexes: []string{"device, time"}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2024, 3, 12, 0, 0, 0, 0, time.UTC)
	if _, err := m.Ensure(ctx, tbl, []int64{start.UnixMicro()}); err != nil {
		t.Fatal(err)
	}
	// 50 devices, 10 hours, one row a minute each
	execSQL(t, pool, `INSERT INTO rb SELECT $1::timestamptz + i * interval '1 minute', d, i * 0.5 + d
		FROM generate_series(0, 599) i, generate_series(1, 50) d`, start)
	r, err := rs.Create(ctx, Spec{Name: "h", On: "rb", Bucket: partition.Interval{Micros: 3600e6}, GroupBy: []string{"device"},
		Aggs: mustAggs(t, "avg(v), count(*), max(v)"), RealTime: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Refresh(ctx, r); err != nil {
		t.Fatal(err)
	}
	execSQL(t, pool, `ANALYZE rb`)
	view := `SELECT (extract(epoch FROM bucket) * 1000000)::bigint, jsonb_build_array(device)::text, avg_v, count, max_v FROM h`
	raw := `SELECT (extract(epoch FROM b) * 1000000)::bigint, jsonb_build_array(device)::text, avg(v), count(*), max(v)
		FROM (SELECT pgts.time_bucket('1 hour', time) b, * FROM rb) x GROUP BY 1, 2`
	// one device's rows of the 10 buckets: 600 there, 600 backfilled
	const mine, whole = 1200, 30600
	for _, how := range []string{"psql", "pgts load"} {
		dev := 7
		if how == "psql" {
			execSQL(t, pool, `INSERT INTO rb SELECT $1::timestamptz + i * interval '1 minute' + interval '30 seconds', $2, -i
				FROM generate_series(0, 599) i`, start, dev)
		} else {
			dev = 8
			var in strings.Builder
			for i := 0; i < 600; i++ {
				fmt.Fprintf(&in, "%s,%d,%d\n", start.Add(time.Duration(i)*time.Minute+30*time.Second).Format(time.RFC3339), dev, -i)
			}
			rd, err := records.NewReader(strings.NewReader(in.String()), records.DefaultOptions(records.CSV))
			if err != nil {
				t.Fatal(err)
			}
			target, err := copyload.LookupTarget(ctx, pool, m, "rb")
			if err != nil {
				t.Fatal(err)
			}
			cfg := copyload.DefaultConfig()
			cfg.Now = c.now
			l, err := copyload.New(pool, m, target, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Run(ctx, &copyload.FileSource{Inputs: []copyload.Input{{Name: "in.csv", Reader: rd}}, Columns: []int{0, 1, 2}}); err != nil {
				t.Fatal(err)
			}
		}
		st, err := rs.Refresh(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: backfill of device %d: refresh %+v; rows of the buckets %d, of the device in them %d", how, dev, st, whole, mine)
		if st.RowsRead > 2*mine {
			t.Errorf("%s: the refresh read %d source rows for a backfill of one device (%d rows of it in the buckets touched, %d in all)",
				how, st.RowsRead, mine, whole)
		}
		if d := diff(fetch(t, pool, view), fetch(t, pool, raw), all); d != "" {
			t.Fatalf("%s: after the refresh:\n%s", how, d)
		}
	}
}
