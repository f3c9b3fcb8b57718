package copyload

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/records"
)

// TestSessionTimeZone loads timestamptz text into a database whose
// default TimeZone is America/New_York: a value without a zone is read in
// that zone (as psql's COPY reads it), named zones and abbreviations are
// read as the server reads them, the DST gap and overlap as PostgreSQL
// resolves them, and each row lands in the partition of the value stored.
func TestSessionTimeZone(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	pool := pgtest.PoolFor(t, url)
	var db string
	if err := pool.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "ALTER DATABASE "+pg.QuoteIdent(db)+" SET TimeZone = 'America/New_York'"); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC) // every value below is in the past
	m := partition.NewManager(pool, nil, func() time.Time { return now })
	if _, err := m.Create(ctx, partition.CreateSpec{Name: "tz", TimeColumn: "time", Interval: partition.Interval{Days: 1}, Premake: 2,
		Columns: "time timestamptz not null, v int"}); err != nil {
		t.Fatal(err)
	}
	input := strings.Join([]string{
		"2024-01-01 22:00,1",              // New York: 2024-01-02 03:00 UTC, the next day's partition
		"2024-01-01 10:00 Europe/Paris,2", // a zone name
		"2024-01-01 10:00 EST,3",          // an abbreviation
		"Jan 8 2024 4:05:06 PM,4",         // another spelling, in New York
		"2024-03-10 02:30,5",              // the spring-forward gap: 03:30 EDT
		"2024-11-03 01:30,6",              // the fall-back overlap: the later, EST, instant
		"2024-01-01T10:00:00+05:30,7",     // an offset
		"2024-01-01 10:00 America/Los_Angeles,8",
	}, "\n") + "\n"
	want := "tz_p20240102 2024-01-02 03:00:00, tz_p20240101 2024-01-01 09:00:00, tz_p20240101 2024-01-01 15:00:00, " +
		"tz_p20240108 2024-01-08 21:05:06, tz_p20240310 2024-03-10 07:30:00, tz_p20241103 2024-11-03 06:30:00, " +
		"tz_p20240101 2024-01-01 04:30:00, tz_p20240101 2024-01-01 18:00:00"
	for _, text := range []bool{false, true} {
		target, err := LookupTarget(ctx, pool, m, "tz")
		if err != nil {
			t.Fatal(err)
		}
		zones, err := SessionZones(ctx, pool, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := zones.SessionZone(); got != "America/New_York" {
			t.Fatalf("session zone %q, want the database's America/New_York", got)
		}
		target.UseZones(zones)
		if _, err := pool.Exec(ctx, `TRUNCATE tz`); err != nil {
			t.Fatal(err)
		}
		rd, err := records.NewReader(strings.NewReader(input), records.DefaultOptions(records.CSV))
		if err != nil {
			t.Fatal(err)
		}
		cfg := testConfig(1)
		cfg.Now, cfg.Text = func() time.Time { return now }, text
		l, err := New(pool, m, target, cfg)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := l.Run(ctx, &FileSource{Inputs: []Input{{Name: "tz.csv", Reader: rd}}, Columns: []int{0, 1}})
		if err != nil || sum.Loaded != 8 || sum.Rejected != 0 {
			t.Fatalf("text=%v: summary %+v, %v", text, sum, err)
		}
		var got string
		if err := pool.QueryRow(ctx, `SELECT string_agg(tableoid::regclass::text || ' ' || (time AT TIME ZONE 'UTC')::text, ', ' ORDER BY v) FROM tz`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("text=%v: stored\n%s\nwant\n%s", text, got, want)
		}
	}
}

// TestSessionZonesOverride: --timezone wins over the database's default;
// a zone the server does not know is refused.
func TestSessionZonesOverride(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	z, err := SessionZones(ctx, pool, "asia/kolkata")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := z.ParseTimestamp([]byte("2024-01-01 10:00")); err != nil || got != time.Date(2024, 1, 1, 4, 30, 0, 0, time.UTC).UnixMicro() {
		t.Fatalf("in Asia/Kolkata: %d, %v", got, err)
	}
	if _, err := SessionZones(ctx, pool, "Mars/Olympus_Mons"); err == nil || !strings.Contains(err.Error(), "Mars/Olympus_Mons") {
		t.Fatalf("unknown zone: %v", err)
	}
	if _, err := SessionZones(ctx, pool, "<+03>-3"); err != nil {
		t.Fatalf("a POSIX offset: %v", err)
	}
}
