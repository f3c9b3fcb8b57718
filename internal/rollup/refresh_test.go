package rollup

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/records"
)

// examined runs EXPLAIN (ANALYZE, FORMAT JSON) of sql in tx and returns
// the rows its plan's scans examined of the relations whose names start
// with prefix (rows returned plus those a filter removed, times loops) plus
// the row pairs any join filter rejected: what the statement compared,
// whatever plan it got.
func examined(t *testing.T, tx pgx.Tx, prefix, sql string, args ...any) int64 {
	t.Helper()
	var plan string
	if err := tx.QueryRow(context.Background(), "EXPLAIN (ANALYZE, FORMAT JSON) "+sql, args...).Scan(&plan); err != nil {
		t.Fatalf("explaining %s: %v", sql, err)
	}
	var doc []map[string]any
	if err := json.Unmarshal([]byte(plan), &doc); err != nil {
		t.Fatal(err)
	}
	num := func(n map[string]any, k string) float64 { f, _ := n[k].(float64); return f }
	var n float64
	var walk func(node map[string]any)
	walk = func(node map[string]any) {
		loops := num(node, "Actual Loops")
		if rel, _ := node["Relation Name"].(string); strings.HasPrefix(rel, prefix) && node["Node Type"] != "ModifyTable" {
			n += (num(node, "Actual Rows") + num(node, "Rows Removed by Filter") + num(node, "Rows Removed by Index Recheck")) * loops
		}
		n += num(node, "Rows Removed by Join Filter") * loops
		kids, _ := node["Plans"].([]any)
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok {
				walk(m)
			}
		}
	}
	for _, d := range doc {
		if p, ok := d["Plan"].(map[string]any); ok {
			walk(p)
		}
	}
	return int64(n)
}

// TestRewritePairsExaminesOnlyTheirRows: rewriting N invalidated (bucket,
// key) pairs of one bucket finds their rows of the data table by bucket
// and key, examining about N of them, not N times every key's row of the
// bucket (1,000 devices written in the last minute cost 1,000,000 row
// comparisons, most of a refresh's 3 s).
func TestRewritePairsExaminesOnlyTheirRows(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
	pool, m, rs := setup(t, c)
	tbl, err := m.Create(ctx, partition.CreateSpec{Name: "rp", Columns: "time timestamptz not null, device int not null, v float8",
		TimeColumn: "time", Interval: partition.Interval{Days: 1}, Premake: 1, ExtraIndexes: []string{"device, time"}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2024, 3, 12, 0, 0, 0, 0, time.UTC)
	if _, err := m.Ensure(ctx, tbl, []int64{start.UnixMicro()}); err != nil {
		t.Fatal(err)
	}
	const devices = 300
	// a day of 10-minute buckets of 300 devices: 43,200 rows of the data table
	execSQL(t, pool, `INSERT INTO rp SELECT $1::timestamptz + i * interval '10 minutes', d, i + d
		FROM generate_series(0, 143) i, generate_series(1, $2) d`, start, devices)
	r, err := rs.Create(ctx, Spec{Name: "rp_h", On: "rp", Bucket: partition.Interval{Micros: 600e6}, GroupBy: []string{"device"},
		Aggs: mustAggs(t, "avg(v), count(*), max(v)"), RealTime: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Refresh(ctx, r); err != nil {
		t.Fatal(err)
	}
	// every device written once more in one bucket: one pair each
	execSQL(t, pool, `INSERT INTO rp SELECT $1::timestamptz + interval '1 hour 5 minutes', d, -d FROM generate_series(1, $2) d`, start, devices)
	execSQL(t, pool, `ANALYZE rp; ANALYZE rp_h_data; ANALYZE pgts.rollup_invalidation`)

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	buckets, keys, err := nextPairs(ctx, tx, r, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(buckets) != devices {
		t.Fatalf("%d pairs invalidated, want %d", len(buckets), devices)
	}
	if err := readKeyTypes(ctx, pool, r); err != nil {
		t.Fatal(err)
	}
	n := examined(t, tx, "rp_h_data", r.pairsRewriteSQL(keyNulls(keys, 1)), r.ID, buckets, keys, int64(partition.MinMicros))
	_ = tx.Rollback(ctx)
	t.Logf("rewriting %d pairs of one bucket (%d keys in it) examined %d rows of the data table", len(buckets), devices, n)
	if n > 3*devices {
		t.Errorf("rewriting %d pairs examined %d rows of the data table (or rejected row pairs): want about %d, one per pair",
			len(buckets), n, devices)
	}

	st, err := rs.Refresh(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pairs != devices || st.RowsWritten != devices {
		t.Errorf("refresh %+v: want %d pairs and rows written", st, devices)
	}
	view := `SELECT (extract(epoch FROM bucket) * 1000000)::bigint, jsonb_build_array(device)::text, avg_v, count, max_v FROM rp_h`
	raw := `SELECT (extract(epoch FROM b) * 1000000)::bigint, jsonb_build_array(device)::text, avg(v), count(*), max(v)
		FROM (SELECT pgts.time_bucket('10 minutes', time) b, * FROM rp) x GROUP BY 1, 2`
	if d := diff(fetch(t, pool, view), fetch(t, pool, raw), all); d != "" {
		t.Fatalf("after the refresh:\n%s", d)
	}
}

// TestRefreshReadsOverlappingRangesOnce: a live load's batches all cover
// the same recent buckets and devices (here 12 batches of shuffled rows of
// 20 devices in one hour, below the watermark); the refresh merges their
// range records and reads each source row of that hour once, and writes
// each (bucket, device) once, not once per record.
func TestRefreshReadsOverlappingRangesOnce(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
	pool, m, rs := setup(t, c)
	tbl, err := m.Create(ctx, partition.CreateSpec{Name: "ro", Columns: "time timestamptz not null, device int not null, v float8",
		TimeColumn: "time", Interval: partition.Interval{Days: 1}, Premake: 1, ExtraIndexes: []string{"device, time"}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2024, 3, 12, 0, 0, 0, 0, time.UTC)
	if _, err := m.Ensure(ctx, tbl, []int64{start.UnixMicro()}); err != nil {
		t.Fatal(err)
	}
	const devices = 20
	execSQL(t, pool, `INSERT INTO ro SELECT $1::timestamptz + i * interval '1 minute', d, i * 0.5 + d
		FROM generate_series(0, 179) i, generate_series(1, $2) d`, start, devices)
	r, err := rs.Create(ctx, Spec{Name: "ro_h", On: "ro", Bucket: partition.Interval{Micros: 3600e6}, GroupBy: []string{"device"},
		Aggs: mustAggs(t, "avg(v), count(*), max(v)"), RealTime: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Refresh(ctx, r); err != nil {
		t.Fatal(err)
	}
	execSQL(t, pool, `ANALYZE ro`)

	// 1,200 rows of the second hour, every device, shuffled: 12 batches
	// of 100, each covering most of the hour and of the devices
	var lines []string
	for i := 0; i < 60; i++ {
		for d := 1; d <= devices; d++ {
			lines = append(lines, fmt.Sprintf("%s,%d,%d\n", start.Add(time.Hour+time.Duration(i)*time.Minute+30*time.Second).Format(time.RFC3339), d, -i))
		}
	}
	rand.New(rand.NewSource(29)).Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	rd, err := records.NewReader(strings.NewReader(strings.Join(lines, "")), records.DefaultOptions(records.CSV))
	if err != nil {
		t.Fatal(err)
	}
	target, err := copyload.LookupTarget(ctx, pool, m, "ro")
	if err != nil {
		t.Fatal(err)
	}
	cfg := copyload.DefaultConfig()
	cfg.Now, cfg.BatchRows, cfg.Workers = c.now, 100, 2
	l, err := copyload.New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Run(ctx, &copyload.FileSource{Inputs: []copyload.Input{{Name: "in.csv", Reader: rd}}, Columns: []int{0, 1, 2}}); err != nil {
		t.Fatal(err)
	}
	var recs int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pgts.rollup_invalidation_range WHERE rollup_id = $1`, r.ID).Scan(&recs); err != nil {
		t.Fatal(err)
	}
	if recs < 10 {
		t.Fatalf("%d range records, want one per batch (12)", recs)
	}
	st, err := rs.Refresh(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	// the hour's rows: 1,200 there before, 1,200 loaded
	const hour = 2 * 60 * devices
	t.Logf("refresh of %d overlapping range records: %+v; rows of the hour %d", recs, st, hour)
	if st.Ranges != recs {
		t.Errorf("refresh handled %d range records, want %d", st.Ranges, recs)
	}
	if st.RowsRead > hour+hour/100 { // (a scan may count a row or two past its range)
		t.Errorf("the refresh of %d overlapping range records read %d source rows: want each of the hour's %d rows read once",
			recs, st.RowsRead, hour)
	}
	if st.RowsWritten != devices {
		t.Errorf("the refresh wrote %d rows: want %d, each (bucket, device) once", st.RowsWritten, devices)
	}
	view := `SELECT (extract(epoch FROM bucket) * 1000000)::bigint, jsonb_build_array(device)::text, avg_v, count, max_v FROM ro_h`
	raw := `SELECT (extract(epoch FROM b) * 1000000)::bigint, jsonb_build_array(device)::text, avg(v), count(*), max(v)
		FROM (SELECT pgts.time_bucket('1 hour', time) b, * FROM ro) x GROUP BY 1, 2`
	if d := diff(fetch(t, pool, view), fetch(t, pool, raw), all); d != "" {
		t.Fatalf("after the refresh:\n%s", d)
	}
}

// TestMergeRanges: records are cut into disjoint segments, each covering
// the union of the overlapping records' values (any key if one says so),
// neighbours of the same keys joined.
func TestMergeRanges(t *testing.T) {
	s := func(v ...string) []*string {
		out := make([]*string, len(v))
		for i := range v {
			if v[i] != "NULL" {
				out[i] = &v[i]
			}
		}
		return out
	}
	show := func(segs []segment) string {
		var out []string
		for _, sg := range segs {
			k := "any"
			if !sg.keys.all {
				k = fmt.Sprint(sg.keys.vals, sg.keys.nulls)
			}
			out = append(out, fmt.Sprintf("[%d,%d) %s", sg.lo, sg.hi, k))
		}
		return strings.Join(out, "; ")
	}
	for _, c := range []struct {
		name  string
		ncols int
		parts []rangeRecord
		want  string
	}{
		{"same buckets, overlapping devices", 1, []rangeRecord{
			{lo: 0, hi: 10, vals: [][]*string{s("1", "2")}}, {lo: 0, hi: 10, vals: [][]*string{s("2", "3")}}},
			"[0,10) [[1 2 3]] [false]"},
		{"staircase", 1, []rangeRecord{
			{lo: 0, hi: 10, vals: [][]*string{s("1")}}, {lo: 5, hi: 15, vals: [][]*string{s("2")}}},
			"[0,5) [[1]] [false]; [5,10) [[1 2]] [false]; [10,15) [[2]] [false]"},
		{"neighbours of the same keys join, gaps stay", 1, []rangeRecord{
			{lo: 0, hi: 10, vals: [][]*string{s("1")}}, {lo: 10, hi: 20, vals: [][]*string{s("1")}}, {lo: 30, hi: 40, vals: [][]*string{s("1")}}},
			"[0,20) [[1]] [false]; [30,40) [[1]] [false]"},
		{"any key wins where it overlaps", 1, []rangeRecord{
			{lo: 0, hi: 10, vals: [][]*string{s("1")}}, {lo: 5, hi: 20}},
			"[0,5) [[1]] [false]; [5,20) any"},
		{"nulls and two columns", 2, []rangeRecord{
			{lo: 0, hi: 10, vals: [][]*string{s("a"), s("NULL")}}, {lo: 0, hi: 10, vals: [][]*string{s("b"), s("7")}}},
			"[0,10) [[a b] [7]] [false true]"},
		{"no group-by columns", 0, []rangeRecord{{lo: 0, hi: 10, vals: [][]*string{}}, {lo: 20, hi: 30, vals: [][]*string{}}},
			"[0,10) any; [20,30) any"},
	} {
		if got := show(mergeRanges(c.parts, c.ncols)); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}
