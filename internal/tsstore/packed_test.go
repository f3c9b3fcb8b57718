package tsstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/ingest"
)

// specialValues are the values whose bits a packed archive row must keep.
var specialValues = []float64{math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1), math.NaN(), 5e-324, -2.2250738585072014e-308,
	math.MaxFloat64, -1.5, 0.1}

// nowConfig is graphiteConfig with the clock 100 s past t0, a time within
// the last hour of the real clock, so that pgts.rra_points (which keeps
// what is within each archive's span of now()) shows what is stored.
func nowConfig(t testing.TB, c *clock) (Config, int64) {
	t0 := (time.Now().Unix() - 900) / 60 * 60
	c.now = time.Unix(t0+100, 0)
	return graphiteConfig(t, c), t0
}

// sameBits compares fetched series value by value, bit by bit (any NaN
// equal to any NaN).
func sameBits(t testing.TB, what string, got, want []Series) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d series, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Name != w.Name || g.Start != w.Start || g.Step != w.Step || len(g.Values) != len(w.Values) {
			t.Fatalf("%s: %s start %d step %d, %d values; want %s start %d step %d, %d values", what,
				g.Name, g.Start, g.Step, len(g.Values), w.Name, w.Start, w.Step, len(w.Values))
		}
		for k := range g.Values {
			a, b := g.Values[k], w.Values[k]
			if !(math.IsNaN(a) && math.IsNaN(b)) && math.Float64bits(a) != math.Float64bits(b) {
				t.Fatalf("%s: %s value %d: %v (%#x), want %v (%#x)", what, g.Name, k, a, math.Float64bits(a), b, math.Float64bits(b))
			}
		}
	}
}

// viewRows reads pgts.rra_points of the series named like prefix%, each
// row as text with the value's bits.
func viewRows(t testing.TB, pool *pgxpool.Pool, prefix string) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT key || ' ' || archive || ' ' || extract(epoch FROM time)::bigint || ' ' ||
		coalesce(CASE WHEN value = 'NaN' THEN 'NaN' ELSE encode(float8send(value), 'hex') END, 'NULL')
		FROM pgts.rra_points WHERE name LIKE $1 ORDER BY 1`, prefix+"%")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	return out
}

// TestPackedSpecialValuesRoundTrip: values whose bits matter (-0, ±Inf,
// NaN, subnormals, the extremes) come back from the database exactly as
// the cache gave them before the flush, through Fetch (whole-slot reads
// and the lap-window read) and through pgts.rra_points; the archive rows
// are packed.
func TestPackedSpecialValuesRoundTrip(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t)
	var c clock
	cfg, t0 := nowConfig(t, &c)
	s := open(t, pool, cfg)
	var keys []string
	for i, v := range specialValues {
		k := fmt.Sprintf("g.sv.s%02d", i)
		keys = append(keys, k)
		mustAdd(t, s, ingest.Point{Name: k, Time: (t0 + 20) * 1e6, Value: v}, ingest.Point{Name: k, Time: (t0 + 60) * 1e6, Value: v})
	}
	// padding series, so that the segment is read in whole slots
	for i := range 40 {
		mustAdd(t, s, ingest.Point{Name: fmt.Sprintf("g.sv.z%02d", i), Time: (t0 + 20) * 1e6, Value: float64(i)})
	}
	fetchAll := func(s *Store) (lap, whole []Series) {
		var err error
		if lap, err = s.FetchAt(ctx, keys, t0-600, t0+100, t0+100, 0); err != nil {
			t.Fatal(err)
		}
		if whole, err = s.FetchAt(ctx, keys, t0-30*3600, t0+100, t0+100, 0); err != nil {
			t.Fatal(err)
		}
		return lap, whole
	}
	cacheLap, cacheWhole := fetchAll(s)
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, pool, cfg)
	dbLap, dbWhole := fetchAll(s2)
	sameBits(t, "10 s slots from the database", dbLap, cacheLap)
	sameBits(t, "minute slots from the database", dbWhole, cacheWhole)
	negZero := false
	for _, sr := range dbLap {
		for _, v := range sr.Values {
			negZero = negZero || (v == 0 && math.Signbit(v))
		}
	}
	if !negZero {
		t.Fatalf("no -0 read back: %v", dbLap)
	}
	// the view: each known value of the 10 s slots, bit for bit (the
	// store keeps no point of value ±Inf or NaN: those are unknown)
	got := strings.Join(viewRows(t, pool, "g.sv.s"), "\n") + "\n"
	known := 0
	for _, sr := range cacheLap {
		for k, v := range sr.Values {
			if math.IsNaN(v) {
				continue
			}
			known++
			want := fmt.Sprintf("%s average:10s:6h:0.5 %d %016x\n", sr.Name, sr.Start+int64(k)*sr.Step, math.Float64bits(v))
			if !strings.Contains(got, want) {
				t.Fatalf("pgts.rra_points lacks %q:\n%s", want, got)
			}
		}
	}
	if known < 2*(len(specialValues)-3) {
		t.Fatalf("%d values known: %v", known, cacheLap)
	}
	var kinds string
	if err := pool.QueryRow(ctx, `SELECT string_agg(DISTINCT pg_typeof(vals)::text || ' ' || pg_typeof(times)::text, ',') FROM pgts.rra_data`).Scan(&kinds); err != nil {
		t.Fatal(err)
	}
	if kinds != "bytea bytea" {
		t.Fatalf("archive rows of types %q, want packed (bytea)", kinds)
	}
}

// oldWriteSlots is the flush's statement before archive rows were packed
// (float8[] and bigint[] rows, pgts.array_put), which filled the
// databases that catalog migration 13 converts.
const oldWriteSlots = `WITH u AS (
	SELECT b, g, sl, array_agg(p ORDER BY p, t, o) AS i, array_agg(v ORDER BY p, t, o) AS v, array_agg(t ORDER BY p, t, o) AS t
	FROM unnest($1::int4[], $2::int8[], $3::int4[], $4::int4[], $5::int8[], $6::float8[]) WITH ORDINALITY AS x(b, g, sl, p, t, v, o)
	GROUP BY b, g, sl
), upd AS (
	UPDATE pgts.rra_data d SET vals = pgts.array_put(d.vals, u.i, u.v), times = pgts.array_put(d.times, u.i, u.t)
	FROM u WHERE d.bundle_id = u.b AND d.seg = u.g AND d.slot = u.sl
	RETURNING d.bundle_id, d.seg, d.slot
)
INSERT INTO pgts.rra_data (bundle_id, seg, slot, vals, times)
SELECT u.b, u.g, u.sl,
	pgts.array_put(array_fill(NULL::float8, ARRAY[200]), u.i, u.v),
	pgts.array_put(array_fill(NULL::int8, ARRAY[200]), u.i, u.t)
FROM u WHERE NOT EXISTS (SELECT FROM upd WHERE upd.bundle_id = u.b AND upd.seg = u.g AND upd.slot = u.sl)`

// unpackRows turns the database's archive rows back into the arrays of
// the catalog before migration 13, with its pgts.rra_points, and forgets
// the migration.
const unpackRows = `DROP VIEW pgts.rra_points;
CREATE FUNCTION public.unpack_vals(a bytea) RETURNS float8[] LANGUAGE sql AS
	'SELECT array_agg(pgts.rra_value(a, i) ORDER BY i) FROM generate_series(1, 200) i';
CREATE FUNCTION public.unpack_times(a bytea) RETURNS bigint[] LANGUAGE sql AS
	'SELECT array_agg(pgts.rra_time(a, i) ORDER BY i) FROM generate_series(1, 200) i';
ALTER TABLE pgts.rra_data
	ALTER COLUMN vals TYPE float8[] USING public.unpack_vals(vals),
	ALTER COLUMN times TYPE bigint[] USING public.unpack_times(times);
ALTER TABLE pgts.rra_data ALTER COLUMN vals SET STORAGE PLAIN, ALTER COLUMN times SET STORAGE PLAIN;
CREATE VIEW pgts.rra_points AS
	SELECT m.name, m.tags, m.key, m.rras[a.n::integer] AS archive,
		to_timestamp(d.times[m.id % 200 + 1]) AS time, d.vals[m.id % 200 + 1] AS value
	FROM pgts.metric m
	CROSS JOIN LATERAL unnest(m.bundles) WITH ORDINALITY AS a(bundle_id, n)
	JOIN pgts.rra_bundle b ON b.id = a.bundle_id
	JOIN pgts.rra_data d ON d.bundle_id = a.bundle_id AND d.seg = m.id / 200
	WHERE d.times[m.id % 200 + 1] > extract(epoch FROM now()) - b.step_s::bigint * b.size`

// TestPackedMigrationKeepsReads: a database whose archive rows were
// written as arrays (by the flush's former statement, special values and
// a NULL value included) reads the same after catalog migration 13 packs
// them: every position's time and value bits, pgts.rra_points' rows, and
// Fetch.
func TestPackedMigrationKeepsReads(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t)
	var c clock
	cfg, t0 := nowConfig(t, &c)
	s := open(t, pool, cfg)
	var keys []string
	for i := range 60 {
		k := fmt.Sprintf("g.mig.s%02d", i)
		keys = append(keys, k)
		for m := range int64(10) {
			mustAdd(t, s, ingest.Point{Name: k, Time: (t0 - 600 + 60*m + int64(i%7)) * 1e6, Value: float64(i*10) + float64(m)/4})
		}
	}
	c.now = time.Unix(t0+100, 0)
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	fetchAll := func() []Series {
		s := open(t, pool, cfg)
		defer s.Close(ctx)
		lap, err := s.FetchAt(ctx, keys, t0-900, t0+100, t0+100, 0)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := s.FetchAt(ctx, keys, t0-30*3600, t0+100, t0+100, 0)
		if err != nil {
			t.Fatal(err)
		}
		return append(lap, whole...)
	}
	before := fetchAll()

	// Back to arrays, then more slots written by the former flush: the
	// special values at the next 10 s slots of the first series, one at
	// a new row, and a NULL value with a time.
	if _, err := pool.Exec(ctx, unpackRows+`; DELETE FROM pgts.schema_version WHERE version >= 13`); err != nil {
		t.Fatal(err)
	}
	var bundle int32
	var id int64
	if err := pool.QueryRow(ctx, `SELECT m.bundles[1], m.id FROM pgts.metric m WHERE m.key = $1`, keys[0]).Scan(&bundle, &id); err != nil {
		t.Fatal(err)
	}
	var b, sl, p []int32
	var g, ts []int64
	var vs []float64
	for i, v := range specialValues {
		at := t0 + 10*int64(i)
		b, g, sl, p = append(b, bundle), append(g, id/SegmentWidth), append(sl, int32(at/10%2160)), append(p, int32(id%SegmentWidth)+1)
		ts, vs = append(ts, at), append(vs, v)
	}
	if _, err := pool.Exec(ctx, oldWriteSlots, b, g, sl, p, ts, vs); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE pgts.rra_data SET vals[$4] = NULL WHERE bundle_id = $1 AND seg = $2 AND slot = $3`,
		bundle, id/SegmentWidth, sl[0], p[0]+1); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE pgts.rra_data SET times[$4] = $5 WHERE bundle_id = $1 AND seg = $2 AND slot = $3`,
		bundle, id/SegmentWidth, sl[0], p[0]+1, ts[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE old_rows AS SELECT * FROM pgts.rra_data`); err != nil {
		t.Fatal(err)
	}
	oldView := viewRows(t, pool, "g.mig.")
	if !strings.Contains(strings.Join(oldView, "\n"), " NULL") {
		t.Fatalf("the NULL value is not in the view:\n%s", strings.Join(oldView, "\n"))
	}

	if err := catalog.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var rows, diff int64
	if err := pool.QueryRow(ctx, `SELECT count(DISTINCT (o.bundle_id, o.seg, o.slot)), count(*) FILTER (WHERE
			substring(n.times FROM i * 8 - 7 FOR 8) IS DISTINCT FROM coalesce(int8send(o.times[i]), '\x8000000000000000'::bytea)
			OR substring(n.vals FROM i * 8 - 7 FOR 8) IS DISTINCT FROM coalesce(float8send(o.vals[i]), '\x7ff0000000000001'::bytea))
		FROM old_rows o JOIN pgts.rra_data n USING (bundle_id, seg, slot), generate_series(1, 200) i`).Scan(&rows, &diff); err != nil {
		t.Fatal(err)
	}
	var total int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pgts.rra_data`).Scan(&total); err != nil {
		t.Fatal(err)
	}
	if rows == 0 || rows != total || diff != 0 {
		t.Fatalf("%d of %d rows converted, %d positions differ", rows, total, diff)
	}
	if newView := viewRows(t, pool, "g.mig."); strings.Join(newView, "\n") != strings.Join(oldView, "\n") {
		t.Fatalf("pgts.rra_points after the migration:\n%s\nbefore:\n%s", strings.Join(newView, "\n"), strings.Join(oldView, "\n"))
	}
	after := fetchAll()
	// The former flush's slots of the first series, as Fetch labels them.
	for i, v := range specialValues {
		at := t0 + 10*int64(i)
		before[0].Values[(at-before[0].Start)/before[0].Step] = v
	}
	sameBits(t, "Fetch after the migration", after, before)
}

// TestPackedEncodeKeepsLatest: the flush's packed parameters, applied to
// empty rows as pgts.rra_put applies them, give every position the
// update the former per-update statement left there: of several for one
// position, the one of the latest slot time, and of those the last in
// the arguments; runs cover consecutive positions only.
func TestPackedEncodeKeepsLatest(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 3))
	for round := range 200 {
		var r slotRows
		for range 1 + rng.IntN(600) {
			r.bundle = append(r.bundle, int32(1+rng.IntN(2)))
			r.seg = append(r.seg, int64(rng.IntN(2)))
			r.slot = append(r.slot, int32(rng.IntN(3)))
			if round%2 == 0 {
				r.pos = append(r.pos, int32(1+rng.IntN(SegmentWidth)))
			} else {
				r.pos = append(r.pos, int32(1+rng.IntN(8)))
			}
			r.time = append(r.time, int64(rng.IntN(3)))
			r.val = append(r.val, float64(rng.IntN(1000)))
		}
		type key struct {
			b  int32
			g  int64
			sl int32
			p  int32
		}
		type tv struct {
			t int64
			v float64
		}
		want := map[key]tv{}
		for i := range r.len() {
			k := key{r.bundle[i], r.seg[i], r.slot[i], r.pos[i]}
			if w, ok := want[k]; !ok || r.time[i] >= w.t {
				want[k] = tv{r.time[i], r.val[i]}
			}
		}
		params := r.encode()
		elems := func(b []byte, size int) [][]byte {
			n := int(binary.BigEndian.Uint32(b[12:]))
			b = b[20:]
			out := make([][]byte, n)
			for i := range out {
				l := int(binary.BigEndian.Uint32(b))
				if size > 0 && l != size {
					t.Fatalf("element of %d bytes, want %d", l, size)
				}
				out[i], b = b[4:4+l], b[4+l:]
			}
			if len(b) != 0 {
				t.Fatalf("%d bytes after the elements", len(b))
			}
			return out
		}
		bs, gs, sls := elems(params[0], 4), elems(params[1], 8), elems(params[2], 4)
		runs, vals, times := elems(params[3], 0), elems(params[4], 0), elems(params[5], 0)
		got := map[key]tv{}
		rows := map[key]bool{}
		for i := range bs {
			rk := key{int32(binary.BigEndian.Uint32(bs[i])), int64(binary.BigEndian.Uint64(gs[i])), int32(binary.BigEndian.Uint32(sls[i])), 0}
			if rows[rk] {
				t.Fatalf("round %d: row %v twice", round, rk)
			}
			rows[rk] = true
			off, last := 0, int32(-1)
			for k := 0; k < len(runs[i]); k += 4 {
				first := int32(binary.BigEndian.Uint16(runs[i][k:]))
				n := int(binary.BigEndian.Uint16(runs[i][k+2:]))
				if first <= last+1 && last >= 0 || n < 1 || int(first)+n-1 > SegmentWidth {
					t.Fatalf("round %d: run (%d, %d) after position %d", round, first, n, last)
				}
				for j := range n {
					k := rk
					k.p = first + int32(j)
					got[k] = tv{int64(binary.BigEndian.Uint64(times[i][off:])), math.Float64frombits(binary.BigEndian.Uint64(vals[i][off:]))}
					off += 8
				}
				last = first + int32(n) - 1
			}
			if off != len(vals[i]) || off != len(times[i]) {
				t.Fatalf("round %d: runs of %d bytes, values of %d, times of %d", round, off, len(vals[i]), len(times[i]))
			}
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: %d positions written, want %d", round, len(got), len(want))
		}
		for k, w := range want {
			if got[k] != w {
				t.Fatalf("round %d: %v holds %v, want %v", round, k, got[k], w)
			}
		}
	}
}

// The SQL statements spell the markers of packed rows out.
func TestPackedMarkersSQL(t *testing.T) {
	noTime := packedNoTime
	if fmt.Sprintf("%016x", uint64(noTime)) != packedNoTimeHex || fmt.Sprintf("%016x", packedNull) != packedNullHex {
		t.Fatalf("markers %016x %016x, spelt %s %s", uint64(noTime), packedNull, packedNoTimeHex, packedNullHex)
	}
}
