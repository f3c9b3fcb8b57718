package sqlfn_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// connect gives a fresh database with the pgts catalog, in a session
// whose time zone is not UTC: no helper may depend on it.
func connect(t *testing.T) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn := pgtest.Conn(t)
	if err := catalog.Migrate(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SET TimeZone = 'America/New_York'`); err != nil {
		t.Fatal(err)
	}
	return conn
}

// zones: daylight saving time changes at 01:00 UTC (Berlin), at local
// 02:00 (New York), at local midnight (Sao Paulo until 2019), by 30
// minutes (Lord Howe); odd offsets (Kathmandu, St Johns); a skipped day
// (Apia, December 2011); a change of standard time (Moscow 2011, 2014).
var zones = []string{"UTC", "Europe/Berlin", "America/New_York", "America/Sao_Paulo",
	"Australia/Lord_Howe", "Asia/Kathmandu", "America/St_Johns", "Pacific/Apia", "Europe/Moscow"}

type gen struct {
	rng         *rand.Rand
	locs        []*time.Location
	transitions map[*time.Location][]int64
}

func newGen(t *testing.T, seed uint64) *gen {
	g := &gen{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), transitions: map[*time.Location][]int64{}}
	lo, hi := time.Date(1902, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, z := range zones {
		loc, err := time.LoadLocation(z)
		if err != nil {
			t.Fatalf("loading zone %q: %v", z, err)
		}
		g.locs = append(g.locs, loc)
		for at := lo; at.Before(hi); {
			_, end := at.In(loc).ZoneBounds()
			if end.IsZero() || !end.After(at) {
				break
			}
			g.transitions[loc] = append(g.transitions[loc], fromTime(end))
			at = end
		}
	}
	return g
}

var (
	year1600 = fromTime(time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC))
	year2400 = fromTime(time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC))
	year1902 = fromTime(time.Date(1902, 1, 1, 0, 0, 0, 0, time.UTC))
	year2100 = fromTime(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))
)

// width draws a bucket width: months, whole days, or any span up to ten
// days; days only when days is set.
func (g *gen) width(months, days bool) width {
	r := g.rng
	if months && r.IntN(4) == 0 {
		ms := []int32{1, 1, 2, 3, 4, 6, 12, 12, 24, 7, 5}
		m := ms[r.IntN(len(ms))]
		if r.IntN(5) == 0 {
			m = int32(1 + r.IntN(120))
		}
		return width{months: m}
	}
	if days {
		return width{days: int32(1 + r.IntN(40))}
	}
	fixed := []width{{us: 1}, {us: 7}, {us: usPerSec}, {us: 90 * usPerSec}, {us: 300 * usPerSec},
		{us: 900 * usPerSec}, {us: 3600 * usPerSec}, {us: 3 * 3600 * usPerSec}, {days: 1}, {days: 7},
		{days: 1, us: 12 * 3600 * usPerSec}, {us: (13*60 + 17) * 60 * usPerSec}, {days: 10}, {us: 36 * 3600 * usPerSec}}
	if r.IntN(3) == 0 {
		return width{us: 1 + r.Int64N(10*usPerDay)}
	}
	return fixed[r.IntN(len(fixed))]
}

// ts draws a time in [lo, hi): uniform, or near a transition of loc,
// at a month's end or start, on a leap day, on a bucket boundary.
func (g *gen) ts(lo, hi int64, loc *time.Location, w width) int64 {
	r := g.rng
	switch r.IntN(6) {
	case 0:
		if tr := g.transitions[loc]; len(tr) > 0 {
			x := tr[r.IntN(len(tr))] + r.Int64N(6*3600*usPerSec) - 3*3600*usPerSec
			if r.IntN(2) == 0 {
				x = x - x%(900*usPerSec) // on a quarter hour
			}
			if x >= lo && x < hi {
				return x
			}
		}
	case 1: // a month's last microsecond or first instant
		t := toTime(lo + r.Int64N(hi-lo))
		first := fromTime(time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC))
		if x := first - int64(r.IntN(2)); x >= lo && x < hi {
			return x
		}
	case 2: // a leap day
		y := 1604 + 4*r.IntN(199)
		x := fromTime(time.Date(y, 2, 29, r.IntN(24), r.IntN(60), 0, 0, time.UTC)) + r.Int64N(usPerSec)
		if x >= lo && x < hi && !(y%100 == 0 && y%400 != 0) {
			return x
		}
	case 3: // a boundary of the default grid, or the microsecond before
		if w.months == 0 {
			b := refBucket(w, lo+r.Int64N(hi-lo), 0, false) - int64(r.IntN(2))
			if b >= lo && b < hi {
				return b
			}
		}
	}
	return lo + r.Int64N(hi-lo)
}

// offset draws an offset: a span, days, or (when months) months too.
func (g *gen) offset(months bool) width {
	r := g.rng
	o := width{days: int32(r.IntN(9) - 4), us: r.Int64N(2*usPerDay) - usPerDay}
	if months && r.IntN(3) == 0 {
		o.months = int32(r.IntN(25) - 12)
	}
	return o
}

func (w width) String() string { return fmt.Sprintf("%d mons %d days %d us", w.months, w.days, w.us) }

// batch holds one form's inputs as arrays, so that one query checks
// thousands of combinations.
type batch struct {
	wm, wd, om, od []int32
	wu, ou         []int64
	ts, origin     []time.Time
	tz             []string
	want           []int64
	desc           []string
}

func (b *batch) add(w width, ts time.Time, want int64, desc string) {
	b.wm, b.wd, b.wu = append(b.wm, w.months), append(b.wd, w.days), append(b.wu, w.us)
	b.ts, b.want, b.desc = append(b.ts, ts), append(b.want, want), append(b.desc, desc)
}

const widthSQL = `make_interval(months => wm, days => wd) + wu * interval '1 microsecond'`
const offsetSQL = `(make_interval(months => om, days => od) + ou * interval '1 microsecond')`

// run sends the batch and compares each result, read back by scan (as
// microseconds since 2000-01-01), with want.
func (b *batch) run(t *testing.T, conn *pgx.Conn, name, expr, tsType string, scan func(pgx.Rows) (int64, error)) int {
	t.Helper()
	ctx := context.Background()
	q := fmt.Sprintf(`SELECT %s FROM unnest($1::int[], $2::int[], $3::bigint[], $4::%s[], $5::%s[], $6::int[], $7::int[], $8::bigint[], $9::text[])
		WITH ORDINALITY AS u(wm, wd, wu, ts, origin, om, od, ou, tz, n) ORDER BY n`, expr, tsType, tsType)
	n := len(b.want)
	fill := func(a []time.Time) []time.Time {
		for len(a) < n {
			a = append(a, pgEpoch)
		}
		return a
	}
	for len(b.om) < n {
		b.om, b.od, b.ou = append(b.om, 0), append(b.od, 0), append(b.ou, 0)
	}
	for len(b.tz) < n {
		b.tz = append(b.tz, "UTC")
	}
	rows, err := conn.Query(ctx, q, b.wm, b.wd, b.wu, fill(b.ts), fill(b.origin), b.om, b.od, b.ou, b.tz)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer rows.Close()
	i, bad := 0, 0
	for rows.Next() {
		got, err := scan(rows)
		if err != nil {
			t.Fatalf("%s row %d (%s): %v", name, i, b.desc[i], err)
		}
		if got != b.want[i] {
			bad++
			if bad <= 10 {
				t.Errorf("%s: %s: got %s, want %s", name, b.desc[i], toTime(got).Format(time.RFC3339Nano), toTime(b.want[i]).Format(time.RFC3339Nano))
			}
		}
		i++
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s row %d (%s): %v", name, i, b.desc[min(i, n-1)], err)
	}
	if i != n {
		t.Fatalf("%s: %d rows, want %d", name, i, n)
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d wrong", name, bad, n)
	}
	return n
}

func scanTime(rows pgx.Rows) (int64, error) {
	var t time.Time
	err := rows.Scan(&t)
	return fromTime(t), err
}

func scanDate(rows pgx.Rows) (int64, error) {
	var t time.Time
	err := rows.Scan(&t)
	return fromTime(time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)), err
}

func neg(o width) (int32, int32, int64) { return -o.months, -o.days, -o.us }

// TestTimeBucketDifferential compares every form of pgts.time_bucket
// (and pgts._bin_arith, the PostgreSQL 13 path) with the Go model on
// random and chosen (width, time, origin or offset, zone) combinations.
func TestTimeBucketDifferential(t *testing.T) {
	conn := connect(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	g := newGen(t, seed)
	const per = 8000
	total := 0
	utc := time.UTC

	for _, typ := range []string{"timestamptz", "timestamp"} {
		// Two arguments; an origin; an offset.
		var b2, bo, boff, barith batch
		for range per {
			w := g.width(true, false)
			ts := g.ts(year1600, year2400, utc, w)
			b2.add(w, toTime(ts), refBucket(w, ts, 0, false), fmt.Sprintf("%v %v", w, toTime(ts)))

			w = g.width(true, false)
			ts, origin := g.ts(year1600, year2400, utc, w), year1600+g.rng.Int64N(year2400-year1600)
			bo.add(w, toTime(ts), refBucket(w, ts, origin, true), fmt.Sprintf("%v %v origin %v", w, toTime(ts), toTime(origin)))
			bo.origin = append(bo.origin, toTime(origin))

			w, o := g.width(true, false), g.offset(typ == "timestamp")
			ts = g.ts(year1600, year2400, utc, w)
			m, d, u := neg(o)
			want := addInterval(refBucket(w, addInterval(ts, m, d, u), 0, false), o.months, o.days, o.us)
			boff.add(w, toTime(ts), want, fmt.Sprintf("%v %v offset %v", w, toTime(ts), o))
			boff.om, boff.od, boff.ou = append(boff.om, o.months), append(boff.od, o.days), append(boff.ou, o.us)

			w = g.width(false, false)
			ts, origin = g.ts(year1600, year2400, utc, w), year1600+g.rng.Int64N(year2400-year1600)
			barith.add(w, toTime(ts), refBucket(w, ts, origin, true), fmt.Sprintf("%v %v origin %v", w, toTime(ts), toTime(origin)))
			barith.origin = append(barith.origin, toTime(origin))
		}
		total += b2.run(t, conn, "time_bucket(interval, "+typ+")", `pgts.time_bucket(`+widthSQL+`, ts)`, typ, scanTime)
		total += bo.run(t, conn, "time_bucket(interval, "+typ+", origin)", `pgts.time_bucket(`+widthSQL+`, ts, origin)`, typ, scanTime)
		total += boff.run(t, conn, "time_bucket(interval, "+typ+", offset)", `pgts.time_bucket(`+widthSQL+`, ts, `+offsetSQL+`)`, typ, scanTime)
		total += barith.run(t, conn, "_bin_arith(interval, "+typ+", origin)", `pgts._bin_arith(`+widthSQL+`, ts, origin)`, typ, scanTime)
	}

	// Time zones: bucket on the local wall clock, convert back.
	var bz, bzo, bzoff batch
	for range per {
		loc := g.locs[g.rng.IntN(len(g.locs))]
		w := g.width(true, false)
		ts := g.ts(year1902, year2100, loc, w)
		bz.add(w, toTime(ts), fromLocal(refBucket(w, toLocal(ts, loc), 0, false), loc), fmt.Sprintf("%v %v %s", w, toTime(ts), loc))
		bz.tz = append(bz.tz, loc.String())

		loc = g.locs[g.rng.IntN(len(g.locs))]
		w = g.width(true, false)
		ts, origin := g.ts(year1902, year2100, loc, w), year1902+g.rng.Int64N(year2100-year1902)
		bzo.add(w, toTime(ts), fromLocal(refBucket(w, toLocal(ts, loc), toLocal(origin, loc), true), loc), fmt.Sprintf("%v %v %s origin %v", w, toTime(ts), loc, toTime(origin)))
		bzo.tz, bzo.origin = append(bzo.tz, loc.String()), append(bzo.origin, toTime(origin))

		loc = g.locs[g.rng.IntN(len(g.locs))]
		w, o := g.width(true, false), g.offset(true)
		ts = g.ts(year1902, year2100, loc, w)
		m, d, u := neg(o)
		local := refBucket(w, addInterval(toLocal(ts, loc), m, d, u), 0, false)
		bzoff.add(w, toTime(ts), fromLocal(addInterval(local, o.months, o.days, o.us), loc), fmt.Sprintf("%v %v %s offset %v", w, toTime(ts), loc, o))
		bzoff.tz = append(bzoff.tz, loc.String())
		bzoff.om, bzoff.od, bzoff.ou = append(bzoff.om, o.months), append(bzoff.od, o.days), append(bzoff.ou, o.us)
	}
	total += bz.run(t, conn, "time_bucket(interval, timestamptz, timezone)", `pgts.time_bucket(`+widthSQL+`, ts, tz)`, "timestamptz", scanTime)
	total += bzo.run(t, conn, "time_bucket(interval, timestamptz, timezone, origin)", `pgts.time_bucket(`+widthSQL+`, ts, tz, origin => origin)`, "timestamptz", scanTime)
	total += bzoff.run(t, conn, "time_bucket(interval, timestamptz, timezone, offset)", `pgts.time_bucket(`+widthSQL+`, ts, tz, "offset" => `+offsetSQL+`)`, "timestamptz", scanTime)

	// Dates: widths of whole days or months; an offset may be any span.
	var bd, bdo, bdoff batch
	day := func(us int64) int64 { return floorDiv(us, usPerDay) * usPerDay }
	for range per {
		w := g.width(true, true)
		ts := day(g.ts(year1600, year2400, utc, w))
		bd.add(w, toTime(ts), day(refBucket(w, ts, 0, false)), fmt.Sprintf("%v %v", w, toTime(ts)))

		w = g.width(true, true)
		ts, origin := day(g.ts(year1600, year2400, utc, w)), day(year1600+g.rng.Int64N(year2400-year1600))
		bdo.add(w, toTime(ts), day(refBucket(w, ts, origin, true)), fmt.Sprintf("%v %v origin %v", w, toTime(ts), toTime(origin)))
		bdo.origin = append(bdo.origin, toTime(origin))

		w, o := g.width(true, false), g.offset(true)
		ts = day(g.ts(year1600, year2400, utc, w))
		m, d, u := neg(o)
		want := day(addInterval(refBucket(w, addInterval(ts, m, d, u), 0, false), o.months, o.days, o.us))
		bdoff.add(w, toTime(ts), want, fmt.Sprintf("%v %v offset %v", w, toTime(ts), o))
		bdoff.om, bdoff.od, bdoff.ou = append(bdoff.om, o.months), append(bdoff.od, o.days), append(bdoff.ou, o.us)
	}
	total += bd.run(t, conn, "time_bucket(interval, date)", `pgts.time_bucket(`+widthSQL+`, ts)`, "date", scanDate)
	total += bdo.run(t, conn, "time_bucket(interval, date, origin)", `pgts.time_bucket(`+widthSQL+`, ts, origin)`, "date", scanDate)
	total += bdoff.run(t, conn, "time_bucket(interval, date, offset)", `pgts.time_bucket(`+widthSQL+`, ts, `+offsetSQL+`)`, "date", scanDate)

	total += intDifferential(t, conn, g, per)
	if total < 100_000 {
		t.Fatalf("checked %d combinations, want at least 100,000", total)
	}
	t.Logf("checked %d combinations", total)
}

// intDifferential checks the smallint, integer and bigint forms, with
// and without an offset, on negative and positive times.
func intDifferential(t *testing.T, conn *pgx.Conn, g *gen, per int) int {
	ctx := context.Background()
	total := 0
	for _, c := range []struct {
		typ      string
		maxTS    int64
		maxWidth int64
	}{{"smallint", 16000, 1000}, {"integer", 1 << 30, 1 << 20}, {"bigint", 1 << 60, 1 << 40}} {
		ws, ts, offs, want, wantOff := make([]int64, per), make([]int64, per), make([]int64, per), make([]int64, per), make([]int64, per)
		for i := range per {
			ws[i] = 1 + g.rng.Int64N(c.maxWidth)
			if g.rng.IntN(4) == 0 {
				ws[i] = []int64{1, 2, 10, 60, 1000}[g.rng.IntN(5)]
			}
			ts[i] = g.rng.Int64N(2*c.maxTS) - c.maxTS
			offs[i] = g.rng.Int64N(2*c.maxTS) - c.maxTS
			want[i], wantOff[i] = refInt(ws[i], ts[i], 0), refInt(ws[i], ts[i], offs[i])
		}
		rows, err := conn.Query(ctx, fmt.Sprintf(`SELECT pgts.time_bucket(w::%[1]s, ts::%[1]s)::bigint, pgts.time_bucket(w::%[1]s, ts::%[1]s, o::%[1]s)::bigint
			FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS u(w, ts, o, n) ORDER BY n`, c.typ), ws, ts, offs)
		if err != nil {
			t.Fatalf("%s: %v", c.typ, err)
		}
		i, bad := 0, 0
		for rows.Next() {
			var got, gotOff int64
			if err := rows.Scan(&got, &gotOff); err != nil {
				t.Fatal(err)
			}
			if got != want[i] || gotOff != wantOff[i] {
				if bad++; bad <= 10 {
					t.Errorf("time_bucket(%d::%s, %d [, %d]) = %d, %d; want %d, %d", ws[i], c.typ, ts[i], offs[i], got, gotOff, want[i], wantOff[i])
				}
			}
			i++
		}
		rows.Close()
		if err := rows.Err(); err != nil || i != per {
			t.Fatalf("%s: %d rows: %v", c.typ, i, err)
		}
		total += 2 * per
	}
	return total
}

// TestTimeBucketHostileInput: widths the function cannot honour are
// refused with an error that says why; NULL in gives NULL out; an
// unknown zone names itself. None yields a bucket.
func TestTimeBucketHostileInput(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	for _, c := range []struct{ sql, err string }{
		{`SELECT pgts.time_bucket('0 hours', now())`, "bucket width must be greater than zero"},
		{`SELECT pgts.time_bucket('-1 hour', now())`, "bucket width must be greater than zero"},
		{`SELECT pgts.time_bucket('1 day -24 hours', now())`, "bucket width must be greater than zero"},
		{`SELECT pgts.time_bucket('-1 month', now())`, "bucket width must be greater than zero"},
		{`SELECT pgts.time_bucket('-1 hour', localtimestamp)`, "bucket width must be greater than zero"},
		{`SELECT pgts.time_bucket('1 month 1 day', now())`, "months cannot also have days or a time"},
		{`SELECT pgts.time_bucket('1 mon 1 day -24 hours', now())`, "months cannot also have days or a time"},
		{`SELECT pgts.time_bucket('1 year 1 second', localtimestamp)`, "months cannot also have days or a time"},
		{`SELECT pgts.time_bucket('12 hours', current_date)`, "whole number of days"},
		{`SELECT pgts.time_bucket('1 day 1 hour', current_date)`, "whole number of days"},
		{`SELECT pgts.time_bucket('0 days', current_date)`, "bucket width must be greater than zero"},
		{`SELECT pgts.time_bucket('1 day', now(), 'Mars/Olympus_Mons')`, `time zone "Mars/Olympus_Mons" not recognized`},
		{`SELECT pgts.time_bucket('1 day', now(), 'Europe/Berlin', origin => now(), "offset" => '1 hour')`, "offset and origin cannot be used at the same time"},
		{`SELECT pgts.time_bucket(0, 5)`, "bucket width must be greater than zero"},
		{`SELECT pgts.time_bucket(-10::smallint, 5::smallint)`, "bucket width must be greater than zero"},
		{`SELECT pgts.time_bucket(0::bigint, 5::bigint, 3::bigint)`, "bucket width must be greater than zero"},
		{`SELECT pgts.time_bucket(10::smallint, -32768::smallint, 5::smallint)`, "out of range"},
		{`SELECT pgts.time_bucket(w, ts) FROM (VALUES (interval '1 hour', now()), (interval '0', now())) v(w, ts)`, "bucket width must be greater than zero"},
		{`SELECT pgts.buckets('0 hours', '2024-01-01', '2024-01-02')`, "bucket width must be greater than zero"},
		{`SELECT pgts.buckets('-1 day', '2024-01-01', '2024-01-02', 'Europe/Berlin')`, "bucket width must be greater than zero"},
		{`SELECT pgts.buckets('1 day', '2024-01-01', '2024-01-02', 'Mars/Olympus_Mons')`, `time zone "Mars/Olympus_Mons" not recognized`},
		{`SELECT pgts.int_buckets(0, 1, 100)`, "bucket width must be greater than zero"},
	} {
		_, err := conn.Exec(ctx, c.sql)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: got %v, want an error containing %q", c.sql, err, c.err)
		}
	}
	for _, sql := range []string{
		`SELECT pgts.time_bucket(NULL::interval, now())`,
		`SELECT pgts.time_bucket('1 hour', NULL::timestamptz)`,
		`SELECT pgts.time_bucket('1 month', NULL::timestamptz)`,
		`SELECT pgts.time_bucket('1 hour', now(), NULL::timestamptz)`,
		`SELECT pgts.time_bucket('1 month', now(), NULL::timestamptz)`,
		`SELECT pgts.time_bucket('1 hour', now(), NULL::interval)`,
		`SELECT pgts.time_bucket('1 hour', now(), NULL::text)`,
		`SELECT pgts.time_bucket('1 hour', localtimestamp, NULL::timestamp)`,
		`SELECT pgts.time_bucket('1 day', current_date, NULL::date)`,
		`SELECT pgts.time_bucket(NULL::interval, current_date)`,
		`SELECT pgts.time_bucket(NULL::bigint, 5::bigint)`,
		`SELECT pgts.time_bucket(5, NULL::integer)`,
		`SELECT pgts.time_bucket(5, 7, NULL::integer)`,
	} {
		var got *string
		if err := conn.QueryRow(ctx, sql+`::text`).Scan(&got); err != nil || got != nil {
			t.Errorf("%s: got %v, %v; want NULL", sql, deref(got), err)
		}
	}
	// Infinite times are their own bucket, as in TimescaleDB.
	var s1, s2, s3, s4 string
	err := conn.QueryRow(ctx, `SELECT pgts.time_bucket('1 hour', 'infinity'::timestamptz)::text,
		pgts.time_bucket('1 month', '-infinity'::timestamp)::text, pgts.time_bucket('1 day', 'infinity'::date)::text,
		pgts._bin_arith('1 hour', '-infinity'::timestamptz, '2000-01-03')::text`).Scan(&s1, &s2, &s3, &s4)
	if err != nil || s1 != "infinity" || s2 != "-infinity" || s3 != "infinity" || s4 != "-infinity" {
		t.Errorf("infinite times: %q %q %q %q, %v", s1, s2, s3, s4, err)
	}
}

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return *s
}
