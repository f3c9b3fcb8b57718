package tsstore

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// The flush statements take columns of tens of thousands of values as
// array parameters. Given Go slices, pgx encodes an array element by
// element through its type map, boxing every element in an interface (a
// fifth of the daemon's CPU and most of its allocations at a flush), so
// the flush encodes them itself, straight from its slices into
// PostgreSQL's binary array form, and runs the statements with the
// encoded parameters.

// flushStmt is a statement the flush runs with parameters it encodes
// itself: its name among the connection's prepared statements, its text
// and the types of its parameters, as the statement's casts fix them.
type flushStmt struct {
	name string
	sql  string
	oids []uint32
}

var (
	stmtWriteSlots = flushStmt{"pgts_flush_write_packed_slots", sqlWriteSlots, []uint32{
		pgtype.Int4ArrayOID, pgtype.Int8ArrayOID, pgtype.Int4ArrayOID, pgtype.ByteaArrayOID,
		pgtype.ByteaArrayOID, pgtype.ByteaArrayOID}}
	stmtWriteStates = flushStmt{"pgts_flush_write_states", sqlWriteStates, []uint32{
		pgtype.Int8ArrayOID, pgtype.Int4ArrayOID, pgtype.ByteaArrayOID}}
	stmtInsertSeries    = flushStmt{"pgts_register_series", sqlInsertSeries, insertSeriesOIDs}
	stmtInsertSeriesNew = flushStmt{"pgts_register_new_series", sqlInsertSeriesNew, insertSeriesOIDs}
	insertSeriesOIDs    = []uint32{
		pgtype.Int8ArrayOID, pgtype.TextArrayOID, pgtype.TextArrayOID, pgtype.Int4ArrayOID,
		pgtype.TextArrayOID, pgtype.Int4ArrayOID, pgtype.Int4ArrayOID, pgtype.TextArrayOID, pgtype.TextArrayOID}
)

// binaryFormats are the format codes of up to 9 binary parameters (or
// results).
var binaryFormats = []int16{1, 1, 1, 1, 1, 1, 1, 1, 1}

// execEncoded runs st in tx with params, each the binary form of its
// parameter, and returns the rows it affected. The statement is prepared
// once per connection, under st's name.
func execEncoded(ctx context.Context, tx pgx.Tx, st flushStmt, params [][]byte) (int64, error) {
	sd, err := st.prepare(ctx, tx, params)
	if err != nil {
		return 0, err
	}
	tag, err := tx.Conn().PgConn().ExecPrepared(ctx, sd.Name, params, binaryFormats[:len(params)], nil).Close()
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// runWrite runs st, a write statement that returns the number of rows it
// neither updated nor inserted (sqlWriteSlots, sqlWriteStates), again
// until it leaves none. A row is left so when another writer, a second
// daemon whose series share the segment, inserted it after the
// statement's snapshot was taken: the insert waited for that writer and
// skipped the row, and the next run, under a new snapshot (the flush's
// transactions are READ COMMITTED), updates it. Writing a position again
// writes the same bytes, so a row the first run wrote is unchanged.
func runWrite(ctx context.Context, tx pgx.Tx, st flushStmt, params [][]byte) error {
	const runs = 3
	for run := 1; ; run++ {
		missed, err := queryEncodedCount(ctx, tx, st, params)
		if err != nil {
			return err
		}
		if missed == 0 {
			return nil
		}
		if run == runs {
			return fmt.Errorf("%d rows were neither updated nor inserted, %d runs in a row", missed, runs)
		}
	}
}

// queryEncodedCount runs st in tx with params, as execEncoded does, and
// returns the bigint of its one row.
func queryEncodedCount(ctx context.Context, tx pgx.Tx, st flushStmt, params [][]byte) (int64, error) {
	sd, err := st.prepare(ctx, tx, params)
	if err != nil {
		return 0, err
	}
	rr := tx.Conn().PgConn().ExecPrepared(ctx, sd.Name, params, binaryFormats[:len(params)], binaryFormats[:1])
	var n int64
	rows := 0
	for rr.NextRow() {
		v := rr.Values()[0]
		if len(v) != 8 {
			rr.Close()
			return 0, fmt.Errorf("statement %q returned %d bytes for a bigint", st.name, len(v))
		}
		n = int64(binary.BigEndian.Uint64(v))
		rows++
	}
	if _, err := rr.Close(); err != nil {
		return 0, err
	}
	if rows != 1 {
		return 0, fmt.Errorf("statement %q returned %d rows, want 1", st.name, rows)
	}
	return n, nil
}

// prepare prepares st on tx's connection (once per connection, under
// st's name) and checks that params fit it.
func (st flushStmt) prepare(ctx context.Context, tx pgx.Tx, params [][]byte) (*pgconn.StatementDescription, error) {
	sd, err := tx.Conn().Prepare(ctx, st.name, st.sql)
	if err != nil {
		return nil, err
	}
	if err := st.check(sd, params); err != nil {
		return nil, err
	}
	return sd, nil
}

// check tells whether params fit the prepared statement sd: as many, each
// encoded as the type the statement takes.
func (st flushStmt) check(sd *pgconn.StatementDescription, params [][]byte) error {
	if len(sd.ParamOIDs) != len(st.oids) || len(params) != len(st.oids) {
		return fmt.Errorf("statement %q takes %d parameters, given %d", st.name, len(sd.ParamOIDs), len(params))
	}
	for i, oid := range sd.ParamOIDs {
		if oid != st.oids[i] {
			return fmt.Errorf("statement %q: parameter %d is of type %d, encoded as %d", st.name, i+1, oid, st.oids[i])
		}
	}
	return nil
}

// arrayHeaderLen is the length of the binary form of a one-dimensional
// array before its elements: dimensions, flags, element type, then the
// dimension's length and lower bound.
const arrayHeaderLen = 20

// appendArrayHeader appends the header of a one-dimensional array of n
// elements of type elem, hasNull telling whether any is NULL. An empty
// array is sent as pgx sends it, one dimension of length 0 (PostgreSQL
// reads it as the empty array).
func appendArrayHeader(buf []byte, elem uint32, n int, hasNull bool) []byte {
	flags := uint32(0)
	if hasNull {
		flags = 1
	}
	buf = binary.BigEndian.AppendUint32(buf, 1)
	buf = binary.BigEndian.AppendUint32(buf, flags)
	buf = binary.BigEndian.AppendUint32(buf, elem)
	buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	return binary.BigEndian.AppendUint32(buf, 1)
}

// int4ArrayLen, int8ArrayLen and float8ArrayLen are the lengths of the
// binary forms of arrays of n elements, none NULL.
func int4ArrayLen(n int) int   { return arrayHeaderLen + n*(4+4) }
func int8ArrayLen(n int) int   { return arrayHeaderLen + n*(4+8) }
func float8ArrayLen(n int) int { return arrayHeaderLen + n*(4+8) }

// appendInt4Array appends the binary form of int4[] holding vs.
func appendInt4Array(buf []byte, vs []int32) []byte {
	buf = appendArrayHeader(buf, pgtype.Int4OID, len(vs), false)
	for _, v := range vs {
		buf = binary.BigEndian.AppendUint32(buf, 4)
		buf = binary.BigEndian.AppendUint32(buf, uint32(v))
	}
	return buf
}

// appendInt8Array appends the binary form of int8[] holding vs.
func appendInt8Array(buf []byte, vs []int64) []byte {
	buf = appendArrayHeader(buf, pgtype.Int8OID, len(vs), false)
	for _, v := range vs {
		buf = binary.BigEndian.AppendUint32(buf, 8)
		buf = binary.BigEndian.AppendUint64(buf, uint64(v))
	}
	return buf
}

// appendFloat8Array appends the binary form of float8[] holding vs, NULL
// where null is true (null is nil or as long as vs). Values keep their
// bits: NaN, infinities and -0 arrive as they are.
func appendFloat8Array(buf []byte, vs []float64, null []bool) []byte {
	hasNull := false
	for _, n := range null {
		hasNull = hasNull || n
	}
	buf = appendArrayHeader(buf, pgtype.Float8OID, len(vs), hasNull)
	for i, v := range vs {
		if hasNull && null[i] {
			buf = binary.BigEndian.AppendUint32(buf, math.MaxUint32) // length -1: NULL
			continue
		}
		buf = binary.BigEndian.AppendUint32(buf, 8)
		buf = binary.BigEndian.AppendUint64(buf, math.Float64bits(v))
	}
	return buf
}

// byteaArrayLen is the length of the binary form of bytea[] holding vs.
func byteaArrayLen(vs [][]byte) int {
	n := arrayHeaderLen
	for _, v := range vs {
		n += 4 + len(v)
	}
	return n
}

// appendByteaArray appends the binary form of bytea[] holding vs, NULL
// where an element is nil (as pgx encodes a nil []byte).
func appendByteaArray(buf []byte, vs [][]byte) []byte {
	hasNull := false
	for _, v := range vs {
		hasNull = hasNull || v == nil
	}
	buf = appendArrayHeader(buf, pgtype.ByteaOID, len(vs), hasNull)
	for _, v := range vs {
		if v == nil {
			buf = binary.BigEndian.AppendUint32(buf, math.MaxUint32)
			continue
		}
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(v)))
		buf = append(buf, v...)
	}
	return buf
}

// compare orders updates a and b by archive row (bundle, segment, slot),
// then position, slot time and their order in r.
func (r *slotRows) compare(a, b int32) int {
	if c := cmp.Compare(r.bundle[a], r.bundle[b]); c != 0 {
		return c
	}
	if c := cmp.Compare(r.seg[a], r.seg[b]); c != 0 {
		return c
	}
	if c := cmp.Compare(r.slot[a], r.slot[b]); c != 0 {
		return c
	}
	if c := cmp.Compare(r.pos[a], r.pos[b]); c != 0 {
		return c
	}
	if c := cmp.Compare(r.time[a], r.time[b]); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

// maxOrderBundles bounds the distinct bundles order groups by before
// sorting; beyond it, it sorts all the updates at once.
const maxOrderBundles = 16

// order returns the indices of r's updates sorted by compare. The flush
// adds them series by series in the order of their ids (segment, then
// position), each series' updates archive by archive: grouped by bundle,
// keeping that order (a counting pass), they are most often sorted
// already, and a group is sorted only when it is not.
func (r *slotRows) order() []int32 {
	n := r.len()
	keep := make([]int32, n)
	var bundles [maxOrderBundles]int32
	var counts [maxOrderBundles + 1]int
	nb := 0
	group := make([]uint8, n)
	for i, b := range r.bundle {
		k := 0
		for k < nb && bundles[k] != b {
			k++
		}
		if k == nb {
			if nb == maxOrderBundles {
				for i := range keep {
					keep[i] = int32(i)
				}
				slices.SortFunc(keep, r.compare)
				return keep
			}
			bundles[nb] = b
			nb++
		}
		group[i] = uint8(k)
		counts[k+1]++
	}
	// The groups in bundle order, each keeping the order of r.
	rank := make([]int, nb)
	for k := range rank {
		rank[k] = k
	}
	slices.SortFunc(rank, func(a, b int) int { return cmp.Compare(bundles[a], bundles[b]) })
	var start [maxOrderBundles]int
	at := 0
	for _, k := range rank {
		start[k] = at
		at += counts[k+1]
	}
	next := start
	for i, k := range group {
		keep[next[k]] = int32(i)
		next[k]++
	}
	for _, k := range rank {
		r.sortGroup(keep[start[k]:next[k]])
	}
	return keep
}

// sortGroup sorts g, the updates of one bundle, by compare: segment by
// segment when they come in the order of their segments, as the flush
// adds them (a series' updates of several slots of an archive then
// reorder only the segment's), all at once otherwise.
func (r *slotRows) sortGroup(g []int32) {
	if slices.IsSortedFunc(g, r.compare) {
		return
	}
	if !slices.IsSortedFunc(g, func(a, b int32) int { return cmp.Compare(r.seg[a], r.seg[b]) }) {
		slices.SortFunc(g, r.compare)
		return
	}
	for lo := 0; lo < len(g); {
		hi := lo + 1
		for hi < len(g) && r.seg[g[hi]] == r.seg[g[lo]] {
			hi++
		}
		if run := g[lo:hi]; !slices.IsSortedFunc(run, r.compare) {
			slices.SortFunc(run, r.compare)
		}
		lo = hi
	}
}

// packedRun is the updates of one archive row among a statement's slot
// updates: keep[lo:hi], in order of position, in runs of consecutive
// positions.
type packedRun struct{ lo, hi, runs int }

// encode returns the parameters of sqlWriteSlots for r's updates, in one
// allocation: one element per archive row (bundle, segment, slot), with
// its runs of positions, 2-byte big-endian (first, count) pairs, and the
// packed values and times of those positions. Of several updates of one
// position the row keeps the one of the latest slot time, and of those
// the last in r, as the statement did when it took the updates one by one.
func (r *slotRows) encode() [][]byte {
	n := r.len()
	keep := r.order()
	sameRow := func(a, b int32) bool {
		return r.bundle[a] == r.bundle[b] && r.seg[a] == r.seg[b] && r.slot[a] == r.slot[b]
	}
	// the last update of each position
	k := 0
	for i, e := range keep {
		if i+1 < n && sameRow(e, keep[i+1]) && r.pos[e] == r.pos[keep[i+1]] {
			continue
		}
		keep[k] = e
		k++
	}
	keep = keep[:k]
	var rows []packedRun
	runs := 0
	for i := 0; i < len(keep); {
		j, nr := i+1, 1
		for ; j < len(keep) && sameRow(keep[i], keep[j]); j++ {
			if r.pos[keep[j]] != r.pos[keep[j-1]]+1 {
				nr++
			}
		}
		rows = append(rows, packedRun{i, j, nr})
		runs += nr
		i = j
	}
	m := len(rows)
	size := int4ArrayLen(m) + int8ArrayLen(m) + int4ArrayLen(m) + 3*(arrayHeaderLen+4*m) + 4*runs + 16*len(keep)
	buf := make([]byte, 0, size)
	params := make([][]byte, 0, 6)
	add := func(b []byte) {
		params = append(params, b[len(buf):len(b):len(b)])
		buf = b
	}
	b := appendArrayHeader(buf, pgtype.Int4OID, m, false)
	for _, row := range rows {
		b = binary.BigEndian.AppendUint32(b, 4)
		b = binary.BigEndian.AppendUint32(b, uint32(r.bundle[keep[row.lo]]))
	}
	add(b)
	b = appendArrayHeader(buf, pgtype.Int8OID, m, false)
	for _, row := range rows {
		b = binary.BigEndian.AppendUint32(b, 8)
		b = binary.BigEndian.AppendUint64(b, uint64(r.seg[keep[row.lo]]))
	}
	add(b)
	b = appendArrayHeader(buf, pgtype.Int4OID, m, false)
	for _, row := range rows {
		b = binary.BigEndian.AppendUint32(b, 4)
		b = binary.BigEndian.AppendUint32(b, uint32(r.slot[keep[row.lo]]))
	}
	add(b)
	b = appendArrayHeader(buf, pgtype.ByteaOID, m, false)
	for _, row := range rows {
		b = binary.BigEndian.AppendUint32(b, uint32(4*row.runs))
		first := row.lo
		for i := row.lo + 1; i <= row.hi; i++ {
			if i == row.hi || r.pos[keep[i]] != r.pos[keep[i-1]]+1 {
				b = binary.BigEndian.AppendUint16(b, uint16(r.pos[keep[first]]))
				b = binary.BigEndian.AppendUint16(b, uint16(i-first))
				first = i
			}
		}
	}
	add(b)
	b = appendArrayHeader(buf, pgtype.ByteaOID, m, false)
	for _, row := range rows {
		b = binary.BigEndian.AppendUint32(b, uint32(8*(row.hi-row.lo)))
		for _, e := range keep[row.lo:row.hi] {
			b = binary.BigEndian.AppendUint64(b, math.Float64bits(r.val[e]))
		}
	}
	add(b)
	b = appendArrayHeader(buf, pgtype.ByteaOID, m, false)
	for _, row := range rows {
		b = binary.BigEndian.AppendUint32(b, uint32(8*(row.hi-row.lo)))
		for _, e := range keep[row.lo:row.hi] {
			b = binary.BigEndian.AppendUint64(b, uint64(r.time[e]))
		}
	}
	add(b)
	return params
}

// encode returns the binary forms of r's columns, the parameters of
// sqlWriteStates, in one allocation.
func (r *stateRows) encode() [][]byte {
	n := len(r.seg)
	buf := make([]byte, 0, int8ArrayLen(n)+int4ArrayLen(n)+byteaArrayLen(r.state))
	params := make([][]byte, 0, 3)
	add := func(b []byte) {
		params = append(params, b[len(buf):len(b):len(b)])
		buf = b
	}
	add(appendInt8Array(buf, r.seg))
	add(appendInt4Array(buf, r.pos))
	add(appendByteaArray(buf, r.state))
	return params
}

// encodeSeries returns the parameters of sqlInsertSeries for a batch of
// series, the ith to get id first+i, in one allocation: per series its
// id, key, tags as JSON (NULL without tags: the server parses no JSON)
// and the ordinal of its schema (0: raw points only); per schema of the
// batch its rule, step, heartbeat, archives and bundles (the last two
// space-separated), which the server parses once per schema.
func encodeSeries(batch []*series, first int64) [][]byte {
	n := len(batch)
	var schemas []*schemaInfo
	ord := make([]int32, n)
	tags := make([]string, n)
	size := int8ArrayLen(n) + int4ArrayLen(n) + 2*(arrayHeaderLen+4*n)
	for i, x := range batch {
		size += len(x.key)
		if t := x.tags(); len(t) > 0 {
			tags[i] = tagsJSON(t)
			size += len(tags[i])
		}
		if x.sch == nil {
			continue
		}
		j := slices.Index(schemas, x.sch)
		if j < 0 {
			j = len(schemas)
			schemas = append(schemas, x.sch)
		}
		ord[i] = int32(j + 1)
	}
	m := len(schemas)
	rules, rras, bundles := make([]string, m), make([]string, m), make([]string, m)
	steps, hbs := make([]int32, m), make([]int32, m)
	for j, si := range schemas {
		rules[j], rras[j] = si.rule, strings.Join(si.rras, " ")
		steps[j], hbs[j] = int32(si.schema.Step()/time.Second), int32(si.schema.Heartbeat()/time.Second)
		bs := make([]string, len(si.bundles))
		for k, b := range si.bundles {
			bs[k] = strconv.Itoa(int(b))
		}
		bundles[j] = strings.Join(bs, " ")
		size += len(rules[j]) + len(rras[j]) + len(bundles[j])
	}
	size += 2*int4ArrayLen(m) + 3*(arrayHeaderLen+4*m)
	buf := make([]byte, 0, size)
	params := make([][]byte, 0, 9)
	add := func(b []byte) {
		params = append(params, b[len(buf):len(b):len(b)])
		buf = b
	}
	b := appendArrayHeader(buf, pgtype.Int8OID, n, false)
	for i := range batch {
		b = binary.BigEndian.AppendUint32(b, 8)
		b = binary.BigEndian.AppendUint64(b, uint64(first+int64(i)))
	}
	add(b)
	b = appendArrayHeader(buf, pgtype.TextOID, n, false)
	for _, x := range batch {
		b = binary.BigEndian.AppendUint32(b, uint32(len(x.key)))
		b = append(b, x.key...)
	}
	add(b)
	add(appendTextArray(buf, tags, true))
	add(appendInt4Array(buf, ord))
	add(appendTextArray(buf, rules, false))
	add(appendInt4Array(buf, steps))
	add(appendInt4Array(buf, hbs))
	add(appendTextArray(buf, rras, false))
	add(appendTextArray(buf, bundles, false))
	return params
}

// appendTextArray appends the binary form of text[] holding vs, NULL
// where an element is empty if emptyNull is set.
func appendTextArray(buf []byte, vs []string, emptyNull bool) []byte {
	hasNull := false
	for _, v := range vs {
		hasNull = hasNull || emptyNull && v == ""
	}
	buf = appendArrayHeader(buf, pgtype.TextOID, len(vs), hasNull)
	for _, v := range vs {
		if emptyNull && v == "" {
			buf = binary.BigEndian.AppendUint32(buf, math.MaxUint32)
			continue
		}
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(v)))
		buf = append(buf, v...)
	}
	return buf
}
