package partition

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var clock0 = time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC) // a Wednesday

func fixedClock(t time.Time) func() time.Time { return func() time.Time { return t } }

func day() Interval  { return Interval{Days: 1} }
func week() Interval { return Interval{Days: 7} }

func spec(name string) CreateSpec {
	return CreateSpec{Name: name, Columns: "time timestamptz not null, device int not null, value float8",
		TimeColumn: "time", Interval: week(), Premake: 2}
}

func partitionNames(t *testing.T, m *Manager, tb *Table) []string {
	t.Helper()
	parts, err := m.Partitions(context.Background(), tb)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range parts {
		names = append(names, p.Name)
	}
	return names
}

func TestCreatePremakesAndRecords(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := NewManager(pool, nil, fixedClock(clock0))
	tb, err := m.Create(ctx, spec("conditions"))
	if err != nil {
		t.Fatal(err)
	}
	got := partitionNames(t, m, tb)
	want := []string{"conditions_p20240311", "conditions_p20240318", "conditions_p20240325"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("partitions = %v, want %v", got, want)
	}
	again, err := m.Table(ctx, "conditions")
	if err != nil {
		t.Fatal(err)
	}
	if again.Interval != week() || again.TimeType != Timestamptz || again.Premake != 2 || again.Schema != "public" {
		t.Fatalf("catalog row = %+v", again)
	}
	// The window ends where the premade partitions end.
	lo, hi := again.Window(clock0)
	if lo != MinMicros || hi != time.Date(2024, 4, 1, 0, 0, 0, 0, time.UTC).UnixMicro() {
		t.Fatalf("window = %s .. %s", FormatMicros(lo), FormatMicros(hi))
	}
	// Rows land in the partitions, through the parent and directly.
	if _, err := pool.Exec(ctx, `INSERT INTO conditions VALUES ('2024-03-13 10:00:00+00', 1, 1.5)`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO conditions_p20240318 VALUES ('2024-03-18 00:00:00+00', 1, 2.5)`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO conditions_p20240318 VALUES ('2024-03-25 00:00:00+00', 1, 2.5)`); err == nil {
		t.Fatal("a row beyond the partition's bound was accepted")
	}
	// The time index was made, and the check constraints dropped.
	var idx, checks int
	pool.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE tablename = 'conditions_p20240311'`).Scan(&idx)
	pool.QueryRow(ctx, `SELECT count(*) FROM pg_constraint WHERE conrelid = 'conditions_p20240311'::regclass AND contype = 'c'`).Scan(&checks)
	if idx != 1 || checks != 0 {
		t.Fatalf("partition has %d indexes and %d check constraints; want 1 and 0", idx, checks)
	}
}

func TestIdentifiersQuoted(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := NewManager(pool, nil, fixedClock(clock0))
	for _, name := range []string{`we"ird`, "with space", "semi;colon", "ünïcödé", "select", `x"; DROP TABLE pgts.series_table; --`} {
		s := spec(name)
		s.Interval = Interval{Months: 1}
		s.Premake = 0
		tb, err := m.Create(ctx, s)
		if err != nil {
			t.Fatalf("create %q: %v", name, err)
		}
		parts := partitionNames(t, m, tb)
		if len(parts) != 1 || parts[0] != name+"_p20240301" {
			t.Fatalf("%q: partitions %q", name, parts)
		}
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pgts.series_table`).Scan(&n); err != nil || n != 6 {
		t.Fatalf("catalog has %d rows, %v", n, err)
	}
	for _, bad := range []string{"", "tab\there", strings.Repeat("x", 60)} {
		s := spec(bad)
		if _, err := m.Create(ctx, s); err == nil {
			t.Errorf("create %q accepted", bad)
		}
	}
}

func TestCreateErrors(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := NewManager(pool, nil, fixedClock(clock0))
	if _, err := m.Create(ctx, spec("dup")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		mod  func(*CreateSpec)
		want string
	}{
		{"exists", func(s *CreateSpec) { s.Name = "dup" }, "already exists"},
		{"text time", func(s *CreateSpec) { s.Columns = "time text not null, v int" }, "time column"},
		{"missing time", func(s *CreateSpec) { s.TimeColumn = "ts" }, "not one of the table's columns"},
		{"no hash col", func(s *CreateSpec) { s.HashColumn, s.HashPartitions = "nope", 4 }, `hash column "nope" does not exist`},
		{"unique", func(s *CreateSpec) { s.Columns = "time timestamptz not null, device int primary key" }, "must include the time column"},
		{"second statement", func(s *CreateSpec) { s.Columns = "time timestamptz, v int); DROP TABLE dup; --" }, "--columns"},
		{"bigint without epoch", func(s *CreateSpec) { s.Columns = "time bigint not null" }, "time column"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec("t_" + strings.ReplaceAll(tc.name, " ", "_"))
			tc.mod(&s)
			_, err := m.Create(ctx, s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := m.Table(ctx, "dup"); err != nil {
		t.Fatalf("dup was harmed: %v", err)
	}
	var uerr error
	s := spec("uniq")
	s.Columns = "time timestamptz not null, device int, UNIQUE (device)"
	_, uerr = m.Create(ctx, s)
	if !errors.Is(uerr, ErrUniqueWithoutTime) {
		t.Fatalf("unique without time: %v", uerr)
	}
	s.Columns = "time timestamptz not null, device int, UNIQUE (device, time)"
	if _, err := m.Create(ctx, s); err != nil {
		t.Fatalf("unique with time refused: %v", err)
	}
	if _, err := m.Table(ctx, "nosuch"); err == nil {
		t.Fatal("Table(nosuch) succeeded")
	}
}

func TestTimeTypesAndHash(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := NewManager(pool, nil, fixedClock(clock0))
	for _, tc := range []struct {
		cols, epoch, insert string
		iv                  Interval
	}{
		{"time timestamp not null, v int", "", "'2024-03-13 12:00'", day()},
		{"time date not null, v int", "", "'2024-03-13'", Interval{Months: 1}},
		{"time bigint not null, v int", "ms", "1710331200000", day()},
		{"time bigint not null, v int", "s", "1710343800", Interval{Micros: 3600e6}},
	} {
		name := fmt.Sprintf("tt_%s_%s", strings.Fields(tc.cols)[1], tc.epoch)
		s := CreateSpec{Name: name, Columns: tc.cols, TimeColumn: "time", EpochUnit: tc.epoch, Interval: tc.iv, Premake: 1}
		if _, err := m.Create(ctx, s); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := pool.Exec(ctx, fmt.Sprintf("INSERT INTO %s VALUES (%s, 1)", name, tc.insert)); err != nil {
			t.Fatalf("%s: insert: %v", name, err)
		}
	}
	s := spec("hashed")
	s.HashColumn, s.HashPartitions = "device", 4
	tb, err := m.Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	var leaves int
	pool.QueryRow(ctx, `SELECT count(*) FROM pg_partition_tree('hashed') WHERE isleaf`).Scan(&leaves)
	// 4 per time partition, and the DEFAULT partition (not split by hash)
	if leaves != 4*(tb.Premake+1)+1 {
		t.Fatalf("%d leaves, want %d", leaves, 4*(tb.Premake+1)+1)
	}
	for d := 0; d < 20; d++ {
		if _, err := pool.Exec(ctx, `INSERT INTO hashed VALUES ('2024-03-13 10:00:00+00', $1, 1)`, d); err != nil {
			t.Fatal(err)
		}
	}
}

func TestEnsureConcurrent(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	pool := pgtest.PoolFor(t, url)
	m0 := NewManager(pool, nil, fixedClock(clock0))
	s := spec("conc")
	s.Interval = day()
	s.Premake = 0
	s.AcceptPast = &Interval{Days: 60}
	tb, err := m0.Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	// Eight callers, each with its own pool and Manager as separate
	// processes would have, ask for overlapping days while two of them also
	// run maintenance.
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := pgxpool.New(ctx, url)
			if err != nil {
				errs <- err
				return
			}
			defer p.Close()
			m := NewManager(p, nil, fixedClock(clock0))
			var times []int64
			for d := 0; d < 30; d++ {
				times = append(times, clock0.AddDate(0, 0, -((d+i)%30)).UnixMicro())
			}
			if _, err := m.Ensure(ctx, tb, times); err != nil {
				errs <- err
			}
			if i < 2 {
				if r := m.Maintain(ctx, []*Table{tb}); r[0].Err != nil {
					errs <- r[0].Err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	names := partitionNames(t, m0, tb)
	if len(names) != 30 {
		t.Fatalf("%d partitions, want 30: %v", len(names), names)
	}
}

func TestWindowRejectsWildTimes(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := NewManager(pool, nil, fixedClock(clock0))
	s := spec("windowed")
	s.AcceptPast = &Interval{Days: 365}
	tb, err := m.Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	before := partitionNames(t, m, tb)
	for _, wild := range []time.Time{time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1800, 6, 1, 0, 0, 0, 0, time.UTC)} {
		n, err := m.Ensure(ctx, tb, []int64{clock0.UnixMicro(), wild.UnixMicro()})
		if !errors.Is(err, ErrOutsideWindow) || n != 0 {
			t.Fatalf("Ensure(%v) = %d, %v; want ErrOutsideWindow and nothing created", wild, n, err)
		}
	}
	if after := partitionNames(t, m, tb); len(after) != len(before) {
		t.Fatalf("partitions changed: %v → %v", before, after)
	}
}

func TestRetentionDropsOnlyExpired(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := NewManager(pool, nil, fixedClock(clock0))
	s := spec("ret")
	s.Interval = day()
	s.Premake = 1
	s.Retention = &Interval{Days: 7}
	tb, err := m.Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	var times []int64
	for d := 0; d < 7; d++ {
		times = append(times, clock0.AddDate(0, 0, -d).UnixMicro())
	}
	if _, err := m.Ensure(ctx, tb, times); err != nil {
		t.Fatal(err)
	}
	// Three days later, the cutoff is 2024-03-09 15:30: partitions ending
	// at or before it (days up to 03-08) go; 03-09 holds in-window time.
	later := NewManager(pool, nil, fixedClock(clock0.AddDate(0, 0, 3)))
	expired, cutoff, err := later.Expired(ctx, tb)
	if err != nil {
		t.Fatal(err)
	}
	if FormatMicros(cutoff) != "2024-03-09T15:30:00Z" {
		t.Fatalf("cutoff %s", FormatMicros(cutoff))
	}
	var names []string
	for _, p := range expired {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "ret_p20240307,ret_p20240308" {
		t.Fatalf("expired = %v", names)
	}
	dropped, err := later.ApplyRetention(ctx, tb)
	if err != nil || len(dropped) != 2 {
		t.Fatalf("dropped %v, %v", dropped, err)
	}
	left := partitionNames(t, later, tb)
	if left[0] != "ret_p20240309" {
		t.Fatalf("oldest left = %s", left[0])
	}
	var gone bool
	pool.QueryRow(ctx, `SELECT to_regclass('ret_p20240307') IS NULL`).Scan(&gone)
	if !gone {
		t.Fatal("expired partition was detached, not dropped")
	}
}

func TestMaintainContinuesAfterFailure(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := NewManager(pool, nil, fixedClock(clock0))
	a, err := m.Create(ctx, spec("a_broken"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Create(ctx, spec("b_fine"))
	if err != nil {
		t.Fatal(err)
	}
	// Break a: its parent disappears behind pgts' back.
	if _, err := pool.Exec(ctx, `DROP TABLE a_broken`); err != nil {
		t.Fatal(err)
	}
	later := NewManager(pool, nil, fixedClock(clock0.AddDate(0, 0, 14)))
	res := later.Maintain(ctx, []*Table{a, b})
	if len(res) != 2 || res[0].Err == nil || res[1].Err != nil || res[1].Created != 2 {
		t.Fatalf("results = %+v", res)
	}
}

func TestLikeConvertsEmptyTable(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := NewManager(pool, nil, fixedClock(clock0))
	if _, err := pool.Exec(ctx, `CREATE TABLE readings (time timestamptz not null, device int default 7, v float8 check (v > 0))`); err != nil {
		t.Fatal(err)
	}
	s := CreateSpec{Name: "readings", Like: "readings", TimeColumn: "time", Interval: week(), Premake: 1}
	if _, err := m.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO readings (time, v) VALUES ('2024-03-13', 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO readings (time, v) VALUES ('2024-03-13', -1)`); err == nil {
		t.Fatal("check constraint lost")
	}
	var device int
	pool.QueryRow(ctx, `SELECT device FROM readings`).Scan(&device)
	if device != 7 {
		t.Fatalf("default lost: device = %d", device)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE full_t (time timestamptz not null); INSERT INTO full_t VALUES (now())`); err != nil {
		t.Fatal(err)
	}
	s = CreateSpec{Name: "full_t", Like: "full_t", TimeColumn: "time", Interval: week()}
	if _, err := m.Create(ctx, s); err == nil || !strings.Contains(err.Error(), "has rows") {
		t.Fatalf("converting a table with rows: %v", err)
	}
	s = CreateSpec{Name: "copy_of", Like: "full_t", TimeColumn: "time", Interval: week()}
	if _, err := m.Create(ctx, s); err != nil {
		t.Fatalf("copying a definition: %v", err)
	}
}

func TestDropTable(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := NewManager(pool, nil, fixedClock(clock0))
	tb, err := m.Create(ctx, spec("gone"))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Drop(ctx, tb); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Table(ctx, "gone"); err == nil {
		t.Fatal("table still in catalog")
	}
	var parts int
	pool.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relname LIKE 'gone_p%'`).Scan(&parts)
	if parts != 0 {
		t.Fatalf("%d partitions left", parts)
	}
}

// TestDumpRestore dumps a database with a series table with pg_dump,
// restores it with psql into a new database, and keeps using it.
func TestDumpRestore(t *testing.T) {
	ctx := context.Background()
	src := pgtest.DB(t)
	pool := pgtest.PoolFor(t, src)
	m := NewManager(pool, nil, fixedClock(clock0))
	tb, err := m.Create(ctx, spec("dumped"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO dumped VALUES ('2024-03-13 10:00:00+00', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	bindir := pgBinDir(t)
	dump := filepath.Join(t.TempDir(), "dump.sql")
	if out, err := exec.Command(filepath.Join(bindir, "pg_dump"), "--dbname", src, "--file", dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	dst := pgtest.DB(t)
	if out, err := exec.Command(filepath.Join(bindir, "psql"), "--dbname", dst, "-v", "ON_ERROR_STOP=1", "-q", "-f", dump).CombinedOutput(); err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	pool2 := pgtest.PoolFor(t, dst)
	later := NewManager(pool2, nil, fixedClock(clock0.AddDate(0, 0, 21)))
	tb2, err := later.Table(ctx, "dumped")
	if err != nil {
		t.Fatal(err)
	}
	if tb2.Interval != tb.Interval || tb2.Premake != tb.Premake {
		t.Fatalf("restored definition %+v", tb2)
	}
	if res := later.Maintain(ctx, []*Table{tb2}); res[0].Err != nil || res[0].Created != 3 {
		t.Fatalf("maintain after restore: %+v", res[0])
	}
	if _, err := pool2.Exec(ctx, `INSERT INTO dumped VALUES ('2024-04-05 10:00:00+00', 1, 2)`); err != nil {
		t.Fatal(err)
	}
	var n int
	pool2.QueryRow(ctx, `SELECT count(*) FROM dumped`).Scan(&n)
	if n != 2 {
		t.Fatalf("%d rows after restore and insert", n)
	}
}

func pgBinDir(t *testing.T) string {
	t.Helper()
	if c := pgtest.Cluster(t); c != nil {
		return c.BinDir()
	}
	p, err := exec.LookPath("pg_dump")
	if err != nil {
		t.Fatal("pg_dump not found")
	}
	return filepath.Dir(p)
}
