package copyload

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/records"
)

// loadCSV loads input into table with cfg and returns the summary and
// the rejects file.
func loadCSV(t *testing.T, pool *pgxpool.Pool, m *partition.Manager, table, input string, cfg Config) (Summary, []Reject, error) {
	t.Helper()
	ctx := context.Background()
	target, err := LookupTarget(ctx, pool, m, table)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := records.NewReader(strings.NewReader(input), records.DefaultOptions(records.CSV))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cfg.Rejects = NewCSVRejects(&out)
	l, err := New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cols := make([]int, len(target.Columns))
	for i := range cols {
		cols[i] = i
	}
	sum, runErr := l.Run(ctx, &FileSource{Inputs: []Input{{Name: "in.csv", Reader: rd}}, Columns: cols})
	recs, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rj []Reject
	for i, r := range recs {
		if i == 0 {
			continue
		}
		var line int64
		fmt.Sscan(r[1], &line)
		rj = append(rj, Reject{Source: r[0], Line: line, Column: r[2], Reason: r[3], Record: r[4]})
	}
	return sum, rj, runErr
}

// TestUniqueRejectsScale reloads 30,000 rows into a table with a primary
// key: every row is refused as a duplicate, with the server's detail,
// and nothing fails (refusing over ~6,400 rows of a batch used to run the
// server out of shared memory, 53200, and load and reject nothing).
func TestUniqueRejectsScale(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := partition.NewManager(pool, nil, nil)
	if _, err := pool.Exec(ctx, `CREATE TABLE u (id int PRIMARY KEY, v float8)`); err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	for i := 1; i <= 30_000; i++ {
		fmt.Fprintf(&in, "%d,%d.5\n", i, i)
	}
	cfg := testConfig(2)
	if sum, _, err := loadCSV(t, pool, m, "u", in.String(), cfg); err != nil || sum.Loaded != 30_000 {
		t.Fatalf("first load: %+v %v", sum, err)
	}
	var xid0, xid1 int64
	if err := pool.QueryRow(ctx, `SELECT txid_current()`).Scan(&xid0); err != nil {
		t.Fatal(err)
	}
	sum, rj, err := loadCSV(t, pool, m, "u", in.String(), cfg)
	if err != nil {
		t.Fatalf("reload: %v", err)
	}
	// Refused rows are found without a subtransaction each: the
	// transaction IDs used grow with the batches, not with the rows.
	if err := pool.QueryRow(ctx, `SELECT txid_current()`).Scan(&xid1); err != nil {
		t.Fatal(err)
	}
	if xid1-xid0 > 1000 {
		t.Errorf("the reload used %d transaction IDs for 30,000 refused rows in 3 batches", xid1-xid0)
	}
	if sum.Loaded != 0 || sum.Rejected != 30_000 || len(rj) != 30_000 {
		t.Fatalf("reload: %+v, %d rejects in the file", sum, len(rj))
	}
	seen := map[int64]bool{}
	for _, r := range rj {
		seen[r.Line] = true
		want := fmt.Sprintf(`duplicate key value violates unique constraint "u_pkey": Key (id)=(%d) already exists.`, r.Line)
		if !strings.HasPrefix(r.Reason, want) || r.Column != "id" || r.Record != fmt.Sprintf("%d,%d.5", r.Line, r.Line) {
			t.Fatalf("reject %+v, want reason %q", r, want)
		}
	}
	if len(seen) != 30_000 {
		t.Fatalf("%d distinct reject lines", len(seen))
	}
}

// TestMixedConstraintRejects: new rows, rows already stored, duplicates
// within one batch and CHECK and foreign-key violations in the same
// batches: each row is stored once or rejected with the server's reason.
func TestMixedConstraintRejects(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := partition.NewManager(pool, nil, nil)
	if _, err := pool.Exec(ctx, `CREATE TABLE p (k int PRIMARY KEY); INSERT INTO p SELECT generate_series(0, 9);
		CREATE TABLE u (id int PRIMARY KEY, v float8 CHECK (v <> 13), k int REFERENCES p);
		INSERT INTO u SELECT g, 1, 0 FROM generate_series(1, 100, 2) g`); err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	want := map[int64]string{} // line → reason prefix
	line := int64(0)
	add := func(id int, v float64, k int, reason string) {
		line++
		fmt.Fprintf(&in, "%d,%g,%d\n", id, v, k)
		if reason != "" {
			want[line] = reason
		}
	}
	loaded := 0
	for id := 1; id <= 200; id++ {
		switch {
		case id%2 == 1 && id <= 100:
			add(id, 1, 0, `duplicate key value violates unique constraint "u_pkey": Key (id)=(`+fmt.Sprint(id)+`) already exists.`)
		case id%17 == 0:
			add(id, 13, 0, `new row for relation "u" violates check constraint "u_v_check"`)
		case id%23 == 0:
			add(id, 1, 99, `insert or update on table "u" violates foreign key constraint "u_k_fkey": Key (k)=(99) is not present in table "p".`)
		default:
			add(id, 1, id%10, "")
			loaded++
			if id%10 == 4 {
				add(id, 2, 1, `duplicate key value violates unique constraint "u_pkey": Key (id)=(`+fmt.Sprint(id)+`) already exists.`)
			}
		}
	}
	cfg := testConfig(2)
	cfg.BatchRows = 32
	sum, rj, err := loadCSV(t, pool, m, "u", in.String(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Loaded != int64(loaded) || sum.Rejected != int64(len(want)) || sum.Read != line {
		t.Fatalf("summary %+v; want %d loaded, %d rejected", sum, loaded, len(want))
	}
	for _, r := range rj {
		w, ok := want[r.Line]
		if !ok || !strings.HasPrefix(r.Reason, w) {
			t.Errorf("line %d rejected with %q, want %q", r.Line, r.Reason, w)
		}
		delete(want, r.Line)
	}
	if len(want) != 0 {
		t.Fatalf("not rejected: %v", want)
	}
	var n, ones int
	if err := pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE v = 1) FROM u`).Scan(&n, &ones); err != nil {
		t.Fatal(err)
	}
	if n != 50+loaded || ones != n {
		t.Fatalf("table has %d rows (%d with v = 1), want %d", n, ones, 50+loaded)
	}
}
