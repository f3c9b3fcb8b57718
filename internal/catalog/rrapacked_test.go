package catalog

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
)

// TestFloat8FromBitsExact: pgts.float8_from_bits, which pgts.rra_points
// reads packed values with, gives for every bit pattern the float64 Go
// gives (NaN for every NaN): random patterns over the whole range, the
// subnormals and normals near their boundary, ±0, ±Infinity and NaNs.
func TestFloat8FromBitsExact(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(27, 14))
	bits := []uint64{0, 1 << 63, 1, 1<<63 | 1, 0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x001FFFFFFFFFFFFF,
		0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000,
		0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, math.Float64bits(math.NaN()),
		math.Float64bits(1), math.Float64bits(-1.5), math.Float64bits(0.1), math.Float64bits(1e308)}
	for range 20_000 {
		bits = append(bits, rng.Uint64())
	}
	for range 5_000 {
		// subnormals and the smallest normals
		bits = append(bits, rng.Uint64()&(1<<63|0x001FFFFFFFFFFFFF))
	}
	in := make([]int64, len(bits))
	for i, b := range bits {
		in[i] = int64(b)
	}
	rows, err := pool.Query(ctx, `SELECT float8send(pgts.float8_from_bits(x)) FROM unnest($1::int8[]) WITH ORDINALITY AS u(x, o) ORDER BY o`, in)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i, bad := 0, 0
	for rows.Next() {
		var got []byte
		if err := rows.Scan(&got); err != nil {
			t.Fatal(err)
		}
		g, w := math.Float64frombits(binary.BigEndian.Uint64(got)), math.Float64frombits(bits[i])
		if !(math.IsNaN(w) && math.IsNaN(g)) && math.Float64bits(g) != bits[i] {
			if bad++; bad < 10 {
				t.Errorf("bits %#016x: %v (%#016x), want %v", bits[i], g, math.Float64bits(g), w)
			}
		}
		i++
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if i != len(bits) || bad > 0 {
		t.Fatalf("%d of %d patterns read, %d wrong", i, len(bits), bad)
	}
}

// TestRRAPackedMigrationIdempotent: the packing migration and the next
// (fillfactor) apply again over themselves and leave the archive columns
// packed and PLAIN, the table's pages half filled.
func TestRRAPackedMigrationIdempotent(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM pgts.schema_version WHERE version >= $1`, rraPackedVersion); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, pool); err != nil {
		t.Fatalf("the packing migration over itself: %v", err)
	}
	var types string
	if err := pool.QueryRow(ctx, `SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod) || ' ' || attstorage::text, ', ' ORDER BY attname)
		FROM pg_attribute WHERE attrelid = 'pgts.rra_data'::regclass AND attname IN ('vals', 'times')`).Scan(&types); err != nil {
		t.Fatal(err)
	}
	if want := "times bytea p, vals bytea p"; types != want {
		t.Fatalf("pgts.rra_data columns %q, want %q", types, want)
	}
	var opts []string
	if err := pool.QueryRow(ctx, `SELECT reloptions FROM pg_class WHERE oid = 'pgts.rra_data'::regclass`).Scan(&opts); err != nil {
		t.Fatal(err)
	}
	if len(opts) != 1 || opts[0] != "fillfactor=50" {
		t.Fatalf("pgts.rra_data options %q, want fillfactor=50", opts)
	}
}

// rraPackedVersion is the number of the packing migration.
const rraPackedVersion = 13
