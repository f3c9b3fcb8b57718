package sqlfn_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// flRow is one input row: a group, a value (nil: NULL) and a time (nil:
// NULL).
type flRow struct {
	group int64
	value *float64
	time  *int64
}

// flLess orders (time, value) as the aggregates do: by time, then by
// value with NULL above every value.
func flLess(a, b flRow) bool {
	if *a.time != *b.time {
		return *a.time < *b.time
	}
	switch {
	case a.value == nil:
		return false
	case b.value == nil:
		return true
	}
	return *a.value < *b.value
}

// TestFirstLastDifferential: pgts.first and pgts.last against a Go
// computation, on groups with ties on time, NULL values and NULL times,
// in a plan with parallel workers (so the combine functions run) and in
// one without.
func TestFirstLastDifferential(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	const n, groups = 60000, 300
	rows := make([]flRow, n)
	gs, ts, vs := make([]int64, n), make([]*time.Time, n), make([]*float64, n)
	for i := range rows {
		r := flRow{group: rng.Int64N(groups)}
		if rng.IntN(20) != 0 {
			x := int64(rng.IntN(50)) * 3600 * usPerSec // few distinct times: many ties
			r.time = &x
		}
		if rng.IntN(10) != 0 {
			v := float64(rng.IntN(1000)) / 8
			r.value = &v
		}
		rows[i] = r
		gs[i], vs[i] = r.group, r.value
		if r.time != nil {
			tt := toTime(*r.time)
			ts[i] = &tt
		}
	}
	first, last := map[int64]flRow{}, map[int64]flRow{}
	for _, r := range rows {
		if r.time == nil {
			continue
		}
		if f, ok := first[r.group]; !ok || flLess(r, f) {
			first[r.group] = r
		}
		if l, ok := last[r.group]; !ok || flLess(l, r) {
			last[r.group] = r
		}
	}
	show := func(v *float64) string {
		if v == nil {
			return "NULL"
		}
		return fmt.Sprint(*v)
	}
	// The text values are zero-padded so that their order (which breaks
	// ties) is the order of the numbers.
	if _, err := conn.Exec(ctx, `CREATE TABLE fl AS SELECT g, v, t, to_char(v, 'FM000.000') AS vt, (extract(epoch FROM t))::bigint AS ti
		FROM unnest($1::bigint[], $2::float8[], $3::timestamptz[]) AS u(g, v, t)`, gs, vs, ts); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `ANALYZE fl`); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []struct{ name, set, plan string }{
		{"parallel", `SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2`, "Partial"},
		{"serial", `SET max_parallel_workers_per_gather = 0`, ""},
	} {
		if _, err := conn.Exec(ctx, mode.set); err != nil {
			t.Fatal(err)
		}
		q := `SELECT g, pgts.first(v, t)::text, pgts.last(v, t)::text, pgts.first(vt, ti)::float8::text, pgts.last(vt, ti)::float8::text,
			pgts.first(v, t::timestamp)::text, pgts.last(v, t::timestamp)::text FROM fl GROUP BY g`
		var plan strings.Builder
		prows, err := conn.Query(ctx, `EXPLAIN `+q)
		if err != nil {
			t.Fatal(err)
		}
		for prows.Next() {
			var line string
			if err := prows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan.WriteString(line + "\n")
		}
		prows.Close()
		if mode.plan != "" && !strings.Contains(plan.String(), mode.plan) {
			t.Fatalf("%s: the plan has no %q:\n%s", mode.name, mode.plan, plan.String())
		}
		res, err := conn.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for res.Next() {
			var g int64
			var f, l, ft, lt, f2, l2 *string
			if err := res.Scan(&g, &f, &l, &ft, &lt, &f2, &l2); err != nil {
				t.Fatal(err)
			}
			seen++
			wf, wl := show(first[g].value), show(last[g].value)
			for _, c := range []struct {
				what string
				got  *string
				want string
			}{{"first(float8, timestamptz)", f, wf}, {"last(float8, timestamptz)", l, wl},
				{"first(text, bigint)", ft, wf}, {"last(text, bigint)", lt, wl},
				{"first(float8, timestamp)", f2, wf}, {"last(float8, timestamp)", l2, wl}} {
				if deref(c.got) != c.want {
					t.Errorf("%s: group %d: %s = %s, want %s", mode.name, g, c.what, deref(c.got), c.want)
				}
			}
		}
		if err := res.Err(); err != nil {
			t.Fatal(err)
		}
		res.Close()
		if seen != len(first) {
			t.Errorf("%s: %d groups, want %d", mode.name, seen, len(first))
		}
	}
	// A group whose times are all NULL has no first or last.
	var f, l *string
	if err := conn.QueryRow(ctx, `SELECT pgts.first(v, t)::text, pgts.last(v, t)::text
		FROM (VALUES (1.0::float8, NULL::timestamptz), (2.0, NULL)) AS x(v, t)`).Scan(&f, &l); err != nil || f != nil || l != nil {
		t.Errorf("all times NULL: first %s, last %s, %v; want NULL, NULL", deref(f), deref(l), err)
	}
}
