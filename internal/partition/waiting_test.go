package partition

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/pgtest"
)

// anySpec is a daily table accepting 30 days back and 10 ahead, with one
// partition premade: most of its window has no partition yet. The
// manager's clock is the real one, as the server's now() is.
func anySpec(name string) CreateSpec {
	past, future := Interval{Days: 30}, Interval{Days: 10}
	return CreateSpec{Name: name, Columns: "time timestamptz not null, device int not null, value float8, primary key (device, time)",
		TimeColumn: "time", Interval: day(), Premake: 1, AcceptPast: &past, AcceptFuture: &future}
}

// rowPlaces maps each row (device, time) of table to the relation holding
// it.
func rowPlaces(t *testing.T, pool *pgxpool.Pool, table string) map[string]string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT device, time, tableoid::regclass::text FROM `+pg.QuoteIdent(table))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for rows.Next() {
		var dev int
		var ts time.Time
		var rel string
		if err := rows.Scan(&dev, &ts, &rel); err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("%d@%d", dev, ts.UnixMicro())
		if _, dup := out[key]; dup {
			t.Fatalf("row %s is there twice", key)
		}
		out[key] = rel
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkPlaced says every row of table is in the partition of its time.
func checkPlaced(t *testing.T, pool *pgxpool.Pool, table string, iv Interval, want int) {
	t.Helper()
	places := rowPlaces(t, pool, table)
	if len(places) != want {
		t.Fatalf("%s holds %d rows, want %d", table, len(places), want)
	}
	for key, rel := range places {
		var dev int
		var micros int64
		fmt.Sscanf(key, "%d@%d", &dev, &micros)
		lo, _, err := Bounds(iv, micros)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := Name(table, iv, lo)
		if rel != name {
			t.Errorf("row %s is in %s, want %s", key, rel, name)
		}
	}
}

// TestAnyWriterLandsAndMovesOnce writes rows into times without a
// partition the ways a SQL client does (simple and extended protocol,
// multi-row INSERT, INSERT ... SELECT, COPY FROM STDIN in text and binary,
// INSERT ... ON CONFLICT): every row is stored and visible at once, waits
// in the DEFAULT partition, and maintain moves each into its partition
// exactly once.
func TestAnyWriterLandsAndMovesOnce(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := NewManager(pool, nil, time.Now)
	tb, err := m.Create(ctx, anySpec("s1d"))
	if err != nil {
		t.Fatal(err)
	}
	before := partitionNames(t, m, tb)
	if len(before) != 2 {
		t.Fatalf("partitions %v, want today's and tomorrow's", before)
	}
	now := time.Now().UTC().Truncate(time.Second)
	at := func(days int, minute int) time.Time {
		return now.AddDate(0, 0, days).Add(time.Duration(minute) * time.Minute)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	// simple protocol, as psql sends it
	if _, err := conn.Exec(ctx, fmt.Sprintf(`INSERT INTO s1d VALUES ('%s', 1, 1)`, at(-10, 0).Format(time.RFC3339)), pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatalf("simple-protocol INSERT into a missing partition: %v", err)
	}
	// extended protocol
	if _, err := conn.Exec(ctx, `INSERT INTO s1d VALUES ($1, 2, 2)`, at(-10, 1)); err != nil {
		t.Fatalf("extended-protocol INSERT: %v", err)
	}
	// multi-row INSERT over several missing partitions
	if _, err := conn.Exec(ctx, `INSERT INTO s1d VALUES ($1, 3, 3), ($2, 3, 3), ($3, 3, 3)`, at(-9, 0), at(-8, 0), at(5, 0)); err != nil {
		t.Fatalf("multi-row INSERT: %v", err)
	}
	// INSERT ... SELECT: a day of history, 100 rows
	if _, err := conn.Exec(ctx, `INSERT INTO s1d SELECT $1::timestamptz + g * interval '1 minute', 4, g FROM generate_series(0, 99) g`, at(-20, 0)); err != nil {
		t.Fatalf("INSERT ... SELECT: %v", err)
	}
	// COPY FROM STDIN, text, as psql's \copy sends it
	text := fmt.Sprintf("%s\t5\t5\n%s\t5\t6\n", at(-3, 0).Format(time.RFC3339), at(7, 0).Format(time.RFC3339))
	if _, err := conn.Conn().PgConn().CopyFrom(ctx, strings.NewReader(text), `COPY s1d FROM STDIN`); err != nil {
		t.Fatalf("COPY FROM STDIN: %v", err)
	}
	// binary COPY
	if _, err := conn.Conn().CopyFrom(ctx, pgx.Identifier{"s1d"}, []string{"time", "device", "value"},
		pgx.CopyFromRows([][]any{{at(-4, 0), 6, 1.0}, {at(-4, 1), 6, 2.0}})); err != nil {
		t.Fatalf("binary COPY: %v", err)
	}
	// ON CONFLICT on a waiting row: updated where it waits; a new one lands
	if _, err := conn.Exec(ctx, `INSERT INTO s1d VALUES ($1, 1, 42), ($2, 7, 7) ON CONFLICT (device, time) DO UPDATE SET value = excluded.value`, at(-10, 0), at(-2, 0)); err != nil {
		t.Fatalf("INSERT ... ON CONFLICT: %v", err)
	}
	const total = 1 + 1 + 3 + 100 + 2 + 2 + 1
	if n, err := m.Waiting(ctx, tb); err != nil || n != total {
		t.Fatalf("Waiting = %d, %v; want %d", n, err, total)
	}
	if got := partitionNames(t, m, tb); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Fatalf("partitions %v before any maintenance, want %v (the DEFAULT partition is not a time partition)", got, before)
	}
	if n := len(rowPlaces(t, pool, "s1d")); n != total {
		t.Fatalf("a query sees %d rows, want %d", n, total)
	}

	res := m.Maintain(ctx, []*Table{tb})
	if res[0].Err != nil || res[0].Moved != total {
		t.Fatalf("maintain: %+v, want %d rows moved", res[0], total)
	}
	if n, err := m.Waiting(ctx, tb); err != nil || n != 0 {
		t.Fatalf("after maintain, Waiting = %d, %v", n, err)
	}
	checkPlaced(t, pool, "s1d", day(), total)
	var v float64
	if err := pool.QueryRow(ctx, `SELECT value FROM s1d WHERE device = 1`).Scan(&v); err != nil || v != 42 {
		t.Fatalf("the row updated by ON CONFLICT has value %v (%v), want 42", v, err)
	}
	// again: nothing waits, nothing moves
	res = m.Maintain(ctx, []*Table{tb})
	if res[0].Err != nil || res[0].Moved != 0 || res[0].Created != 0 {
		t.Fatalf("second maintain: %+v, want nothing done", res[0])
	}
	// a row for a partition now made goes straight there; ON CONFLICT
	// on a moved row updates it in its partition
	if _, err := pool.Exec(ctx, `INSERT INTO s1d VALUES ($1, 1, 43) ON CONFLICT (device, time) DO UPDATE SET value = excluded.value`, at(-10, 0)); err != nil {
		t.Fatal(err)
	}
	if n, _ := m.Waiting(ctx, tb); n != 0 {
		t.Fatalf("%d rows wait after writing into made partitions", n)
	}
	checkPlaced(t, pool, "s1d", day(), total)
}

// TestAnyWriterRefusesOutsideWindow: a time outside the accepted window
// whose partition does not exist is refused at INSERT and at COPY with a
// check violation naming the window, for every time type, and makes no
// partition.
func TestAnyWriterRefusesOutsideWindow(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := NewManager(pool, nil, time.Now)
	tb, err := m.Create(ctx, anySpec("s1d"))
	if err != nil {
		t.Fatal(err)
	}
	refused := func(what string, err error, want ...string) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: accepted", what)
		}
		if pg.SQLState(err) != "23514" {
			t.Errorf("%s: SQLSTATE %s, want 23514 (check_violation): %v", what, pg.SQLState(err), err)
		}
		for _, w := range append(want, "outside the accepted window of series table public.s1d") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", what, err, w)
			}
		}
	}
	_, err = pool.Exec(ctx, `INSERT INTO s1d VALUES ('2999-01-01 00:00+00', 1, 1)`)
	refused("year 2999", err, "2999-01-01")
	lo, hi := tb.Window(time.Now())
	_, err = pool.Exec(ctx, `INSERT INTO s1d VALUES (now() - interval '31 days', 1, 1)`)
	refused("31 days back", err, FormatMicros(lo)[:13], FormatMicros(hi)[:13])
	_, err = pool.Exec(ctx, `INSERT INTO s1d VALUES ('infinity', 1, 1)`)
	refused("infinity", err, "infinity")
	_, err = pool.Exec(ctx, `INSERT INTO s1d VALUES (now() - interval '1 day', 1, 1), ('2999-01-01 00:00+00', 2, 2)`)
	refused("one bad row of a multi-row INSERT", err)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	_, err = conn.Conn().PgConn().CopyFrom(ctx, strings.NewReader("2999-01-01 00:00:00+00\t1\t1\n"), `COPY s1d FROM STDIN`)
	refused("COPY", err)
	if n := len(partitionNames(t, m, tb)); n != 2 {
		t.Fatalf("%d partitions, want the 2 premade", n)
	}
	if n, _ := m.Waiting(ctx, tb); n != 0 {
		t.Fatalf("%d rows wait after refusals", n)
	}

	// bigint epoch milliseconds, and the default future limit (the end of
	// the premade partitions)
	ms := CreateSpec{Name: "ems", Columns: "ts bigint not null, v int", TimeColumn: "ts", EpochUnit: "ms", Interval: day(), Premake: 1}
	etb, err := m.Create(ctx, ms)
	if err != nil {
		t.Fatal(err)
	}
	_, ehi := etb.Window(time.Now())
	nowMs := time.Now().UnixMilli()
	if _, err := pool.Exec(ctx, `INSERT INTO ems VALUES ($1, 1)`, nowMs-40*86400000); err != nil {
		t.Fatalf("epoch ms 40 days back (no past limit): %v", err)
	}
	_, err = pool.Exec(ctx, `INSERT INTO ems VALUES ($1, 1)`, ehi/1000)
	if err == nil || pg.SQLState(err) != "23514" || !strings.Contains(err.Error(), FormatMicros(ehi)[:16]) {
		t.Fatalf("epoch ms at the end of the premade partitions: %v, want a check violation naming %s", err, FormatMicros(ehi))
	}
	_, err = pool.Exec(ctx, `INSERT INTO ems VALUES (9223372036854775807, 1)`)
	if err == nil || pg.SQLState(err) != "23514" {
		t.Fatalf("epoch ms at the bigint maximum: %v, want a check violation", err)
	}
	if res := m.Maintain(ctx, []*Table{etb}); res[0].Err != nil || res[0].Moved != 1 {
		t.Fatalf("maintain of ems: %+v", res[0])
	}
}

// TestAnyWriterRetentionKeepsWaiting: retention deletes the waiting rows
// whose partition would be expired, and only those; the others are moved.
func TestAnyWriterRetentionKeepsWaiting(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := NewManager(pool, nil, time.Now)
	s := anySpec("kept")
	past, ret := Interval{Days: 60}, Interval{Days: 30}
	s.AcceptPast, s.Retention = &past, &ret
	tb, err := m.Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO kept VALUES (now() - interval '45 days', 1, 1), (now() - interval '20 days', 1, 2),
		(now() - interval '29 days 12 hours', 2, 3)`); err != nil {
		t.Fatal(err)
	}
	dropped, err := m.ApplyRetention(ctx, tb)
	if err != nil || len(dropped) != 0 {
		t.Fatalf("retention: %v, %v", dropped, err)
	}
	if n, _ := m.Waiting(ctx, tb); n != 2 {
		t.Fatalf("%d rows wait after retention, want 2 (the row of 45 days ago deleted, no other)", n)
	}
	if res := m.Maintain(ctx, []*Table{tb}); res[0].Err != nil || res[0].Moved != 2 {
		t.Fatalf("maintain: %+v", res[0])
	}
	checkPlaced(t, pool, "kept", day(), 2)
}

// TestAnyWriterAdoptsOwnDefault: a table restored with pgts' own DEFAULT
// partition (NAME_default) is adopted with it, its rows moved by maintain.
func TestAnyWriterAdoptsOwnDefault(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := NewManager(pool, nil, time.Now)
	for _, q := range []string{
		`CREATE TABLE back (time timestamptz not null, device int not null, value float8) PARTITION BY RANGE (time)`,
		`CREATE TABLE back_default PARTITION OF back DEFAULT`,
		`INSERT INTO back VALUES (now() - interval '2 days', 1, 1)`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s := spec("back")
	s.Columns, s.Like, s.Interval = "", "back", day()
	tb, err := m.Create(ctx, s)
	if err != nil {
		t.Fatalf("adopting a table with its NAME_default: %v", err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO back VALUES ('2999-01-01', 1, 1)`); pg.SQLState(err) != "23514" {
		t.Fatalf("the adopted default partition has no window trigger: %v", err)
	}
	if res := m.Maintain(ctx, []*Table{tb}); res[0].Err != nil || res[0].Moved != 1 {
		t.Fatalf("maintain: %+v", res[0])
	}
}

// TestAnyWriterOpenTransactionDefersMove: a writer that keeps a
// transaction open on the parent does not make maintain queue the other
// writers behind it for good: the move of waiting rows is deferred (no
// error, the rows still wait and are visible) and done by the next pass
// once the transaction ends.
func TestAnyWriterOpenTransactionDefersMove(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := NewManager(pool, nil, time.Now)
	tb, err := m.Create(ctx, anySpec("open"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO open VALUES (now() - interval '5 days', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO open VALUES (now(), 2, 2)`); err != nil {
		t.Fatal(err)
	}
	res := m.Maintain(ctx, []*Table{tb})
	if res[0].Err != nil || res[0].Moved != 0 {
		t.Fatalf("maintain beside an open writer: %+v, want the move deferred", res[0])
	}
	if n, _ := m.Waiting(ctx, tb); n != 1 {
		t.Fatalf("%d rows wait, want 1", n)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if res := m.Maintain(ctx, []*Table{tb}); res[0].Err != nil || res[0].Moved != 1 {
		t.Fatalf("maintain after the writer committed: %+v", res[0])
	}
	checkPlaced(t, pool, "open", day(), 2)
}

// TestWindowConditionAgreesWithWindow holds the trigger's SQL condition to
// Table.Window, for each kind of interval, with and without accept-past
// and accept-future, for each time type: the column value just inside
// each end is accepted, the one just outside refused. Ends relative to
// now are probed a second inside and outside (the server's now() and the
// test's differ by milliseconds); premade ends, aligned, to the unit.
func TestWindowConditionAgreesWithWindow(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	past, future := &Interval{Months: 1, Days: 3}, &Interval{Days: 2, Micros: 3600e6}
	types := []TimeType{Timestamptz, Timestamp, Date, EpochSeconds, EpochMillis, EpochMicros}
	for _, iv := range []Interval{{Months: 1}, {Months: 3}, {Days: 7}, {Days: 14}, {Days: 1}, {Micros: 3600e6}, {Micros: 5400e6}} {
		for _, tt := range types {
			if tt.CheckInterval(iv) != nil {
				continue
			}
			for _, w := range []struct{ past, future *Interval }{{nil, nil}, {past, nil}, {past, future}} {
				tb := &Table{Schema: "public", Name: "x", TimeColumn: "time", TimeType: tt, Interval: iv, Premake: 2, AcceptPast: w.past, AcceptFuture: w.future}
				lo, hi := tb.Window(time.Now())
				probe := func(micros int64, want bool) {
					t.Helper()
					lit := BoundLiteral(tt, micros)
					if tt == Date || tt.unit() > 1 {
						lit = BoundLiteral(tt, micros-micros%tt.unit()) // the unit holding micros, rounded down
						if micros%tt.unit() < 0 {
							lit = BoundLiteral(tt, micros-micros%tt.unit()-tt.unit())
						}
					}
					var got bool
					q := "SELECT " + windowCondition(tb, lit)
					if err := pool.QueryRow(ctx, q).Scan(&got); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
					if got != want {
						t.Errorf("interval %s, %s, past %v, future %v: %s accepted = %v, want %v (window %s to %s)",
							iv, tt, w.past, w.future, lit, got, want, FormatMicros(lo), FormatMicros(hi))
					}
				}
				slack := int64(2e6)
				if tt == Date {
					slack = dayMicros
				}
				if w.past != nil {
					probe(lo+slack, true)
					probe(lo-slack, false)
				}
				if w.future != nil {
					probe(hi-slack, true)
					probe(hi+slack, false)
				} else {
					probe(hi-1, true)
					probe(hi, false)
				}
			}
		}
	}
}
