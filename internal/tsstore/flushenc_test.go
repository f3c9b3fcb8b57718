package tsstore

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// encCase is one random array of each type the flush encodes itself,
// with the values pgx is given for the same arrays.
type encCase struct {
	i4   []int32
	i8   []int64
	f8   []float64
	null []bool // of f8
	ba   [][]byte
}

// pgxF8 is c's float8 array as pgx is given a nullable one.
func (c encCase) pgxF8() []*float64 {
	r := make([]*float64, len(c.f8))
	for i := range c.f8 {
		if c.null == nil || !c.null[i] {
			r[i] = &c.f8[i]
		}
	}
	return r
}

func randomEncCases(rng *rand.Rand) []encCase {
	specials := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0,
		math.MaxFloat64, -math.SmallestNonzeroFloat64, 1e-310}
	var cases []encCase
	for k := range 200 {
		n := rng.IntN(50)
		if k < 3 {
			n = k // empty, one, two elements
		}
		c := encCase{i4: make([]int32, n), i8: make([]int64, n), f8: make([]float64, n), ba: make([][]byte, n)}
		if k%2 == 1 {
			c.null = make([]bool, n)
		}
		for i := range n {
			c.i4[i] = int32(rng.Uint32())
			c.i8[i] = int64(rng.Uint64())
			switch rng.IntN(3) {
			case 0:
				c.f8[i] = specials[rng.IntN(len(specials))]
			case 1:
				c.f8[i] = math.Float64frombits(rng.Uint64())
			default:
				c.f8[i] = rng.NormFloat64() * 1e3
			}
			if c.null != nil {
				c.null[i] = rng.IntN(4) == 0
			}
			if rng.IntN(5) > 0 {
				c.ba[i] = make([]byte, rng.IntN(20))
				for j := range c.ba[i] {
					c.ba[i][j] = byte(rng.Uint32())
				}
			}
		}
		cases = append(cases, c)
	}
	return cases
}

// TestFlushEncodingMatchesPgx checks the flush's own binary encoding of
// array parameters against pgx's, over random arrays with NaN, ±Inf, -0,
// NULLs and empty arrays: byte for byte, and in what PostgreSQL stores
// (array_send of either, as it tells -0 from 0 and NaN from NULL).
func TestFlushEncodingMatchesPgx(t *testing.T) {
	ctx := context.Background()
	cases := randomEncCases(rand.New(rand.NewPCG(27, 1)))
	m := pgtype.NewMap()
	for k, c := range cases {
		for _, e := range []struct {
			what string
			oid  uint32
			pgx  any
			ours []byte
		}{
			{"int4", pgtype.Int4ArrayOID, c.i4, appendInt4Array(nil, c.i4)},
			{"int8", pgtype.Int8ArrayOID, c.i8, appendInt8Array(nil, c.i8)},
			{"float8", pgtype.Float8ArrayOID, c.pgxF8(), appendFloat8Array(nil, c.f8, c.null)},
			{"bytea", pgtype.ByteaArrayOID, c.ba, appendByteaArray(nil, c.ba)},
		} {
			want, err := m.Encode(e.oid, pgtype.BinaryFormatCode, e.pgx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(e.ours, want) {
				t.Errorf("case %d, %s[]: encoded\n%x\npgx encodes\n%x", k, e.what, e.ours, want)
			}
		}
	}

	pool := newPool(t)
	if _, err := pool.Exec(ctx, `CREATE TABLE enc (k int PRIMARY KEY, i4 int4[], i8 int8[], f8 float8[], ba bytea[],
		i4b int4[], i8b int8[], f8b float8[], bab bytea[])`); err != nil {
		t.Fatal(err)
	}
	st := flushStmt{"pgts_test_enc", `UPDATE enc SET i4b = $2, i8b = $3, f8b = $4, bab = $5 WHERE k = ($1::int4[])[1]`,
		[]uint32{pgtype.Int4ArrayOID, pgtype.Int4ArrayOID, pgtype.Int8ArrayOID, pgtype.Float8ArrayOID, pgtype.ByteaArrayOID}}
	for k, c := range cases {
		if _, err := pool.Exec(ctx, `INSERT INTO enc (k, i4, i8, f8, ba) VALUES ($1, $2, $3, $4, $5)`,
			k, c.i4, c.i8, c.pgxF8(), c.ba); err != nil {
			t.Fatal(err)
		}
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			params := [][]byte{appendInt4Array(nil, []int32{int32(k)}), appendInt4Array(nil, c.i4),
				appendInt8Array(nil, c.i8), appendFloat8Array(nil, c.f8, c.null), appendByteaArray(nil, c.ba)}
			n, err := execEncoded(ctx, tx, st, params)
			if err == nil && n != 1 {
				t.Errorf("case %d: updated %d rows", k, n)
			}
			return err
		})
		if err != nil {
			t.Fatalf("case %d: %v", k, err)
		}
	}
	var rows, differ, negZero, nans, nulls int
	err := pool.QueryRow(ctx, `SELECT count(*),
		count(*) FILTER (WHERE array_send(i4) IS DISTINCT FROM array_send(i4b) OR array_send(i8) IS DISTINCT FROM array_send(i8b)
			OR array_send(f8) IS DISTINCT FROM array_send(f8b) OR array_send(ba) IS DISTINCT FROM array_send(bab)),
		count(*) FILTER (WHERE EXISTS (SELECT FROM unnest(f8b) x WHERE x::text = '-0')),
		count(*) FILTER (WHERE 'NaN' = ANY(f8b)),
		count(*) FILTER (WHERE array_position(f8b, NULL) IS NOT NULL)
		FROM enc`).Scan(&rows, &differ, &negZero, &nans, &nulls)
	if err != nil {
		t.Fatal(err)
	}
	if rows != len(cases) || differ != 0 {
		t.Errorf("%d of %d arrays stored differ from pgx's", differ, rows)
	}
	if negZero == 0 || nans == 0 || nulls == 0 {
		t.Errorf("the cases lack -0 (%d), NaN (%d) or NULL (%d) arrays", negZero, nans, nulls)
	}
}

// TestFlushEncodingRefusesOtherTypes checks that a statement whose
// parameters PostgreSQL types otherwise than the flush encodes them is
// refused before anything is sent.
func TestFlushEncodingRefusesOtherTypes(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t)
	st := flushStmt{"pgts_test_enc_types", `SELECT cardinality($1::int8[])`, []uint32{pgtype.Int4ArrayOID}}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := execEncoded(ctx, tx, st, [][]byte{appendInt4Array(nil, []int32{1, 2})})
		return err
	})
	if err == nil {
		t.Fatal("int4[] sent for an int8[] parameter")
	}
}

// TestSlotOrderIsSorted: slotRows.order, which groups the updates by
// bundle and sorts a segment's only when needed, orders them as one sort
// of all of them by slotRows.compare does, whatever order they come in:
// the flush's (series by id, archive by archive, some with two slots of
// an archive), shuffled, or of more bundles than it groups.
func TestSlotOrderIsSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		var r slotRows
		bundles := 1 + rng.IntN(4)
		if trial%10 == 9 {
			bundles = maxOrderBundles + 1 + rng.IntN(4)
		}
		series := 1 + rng.IntN(600)
		for id := range series {
			seg, pos := int64(id/200), int32(id%200)+1
			for b := range bundles {
				for range 1 + rng.IntN(2) {
					r.bundle = append(r.bundle, int32(100-b))
					r.seg = append(r.seg, seg)
					r.slot = append(r.slot, int32(rng.IntN(3)))
					r.pos = append(r.pos, pos)
					r.time = append(r.time, int64(rng.IntN(3)))
					r.val = append(r.val, rng.Float64())
				}
			}
		}
		if trial%3 == 2 { // shuffled
			perm := rng.Perm(r.len())
			var q slotRows
			for _, i := range perm {
				q.bundle, q.seg, q.slot = append(q.bundle, r.bundle[i]), append(q.seg, r.seg[i]), append(q.slot, r.slot[i])
				q.pos, q.time, q.val = append(q.pos, r.pos[i]), append(q.time, r.time[i]), append(q.val, r.val[i])
			}
			r = q
		}
		want := make([]int32, r.len())
		for i := range want {
			want[i] = int32(i)
		}
		slices.SortFunc(want, r.compare)
		if got := r.order(); !slices.Equal(got, want) {
			t.Fatalf("trial %d (%d updates, %d bundles): order differs from one sort", trial, r.len(), bundles)
		}
	}
}

// BenchmarkSlotOrder orders a statement's 20,000 slot updates as a flush
// adds them (series by id, three archives, two slots of the finest):
// slotRows.order beside one sort of them all.
//
//	go test -run '^$' -bench SlotOrder ./internal/tsstore
func BenchmarkSlotOrder(b *testing.B) {
	var r slotRows
	for id := 0; r.len() < slotChunk; id++ {
		seg, pos := int64(id/200), int32(id%200)+1
		for a, slots := range []int{2, 1, 1} {
			for k := range slots {
				r.bundle, r.seg, r.slot = append(r.bundle, int32(a+1)), append(r.seg, seg), append(r.slot, int32(7+k))
				r.pos, r.time, r.val = append(r.pos, pos), append(r.time, int64(k)), append(r.val, 1)
			}
		}
	}
	b.Run("order", func(b *testing.B) {
		for b.Loop() {
			r.order()
		}
	})
	b.Run("sort", func(b *testing.B) {
		for b.Loop() {
			keep := make([]int32, r.len())
			for i := range keep {
				keep[i] = int32(i)
			}
			slices.SortFunc(keep, r.compare)
		}
	})
}
