package gen

import (
	"bytes"
	"encoding/hex"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/copyenc"
)

// recorder is a FieldWriter that spells every call as "name:value" with
// exact values (floats as bits), one row a line, and checks that each
// row has as many fields as BeginRow announced.
type recorder struct {
	t     testing.TB
	buf   []byte
	left  int
	vals  []any // the current row's values, typed
	lines int
}

func newRecorder(t testing.TB) *recorder { return &recorder{t: t} }

func (r *recorder) field(name string, v any, s []byte) {
	if r.left <= 0 {
		r.t.Fatalf("field %s(%v) beyond the row's announced count", name, v)
	}
	r.left--
	r.buf = append(r.buf, ' ')
	r.buf = append(r.buf, name...)
	r.buf = append(r.buf, ':')
	r.buf = append(r.buf, s...)
	r.vals = append(r.vals, v)
	if r.left == 0 {
		r.buf = append(r.buf, '\n')
		r.lines++
	}
}

func (r *recorder) BeginRow(n int) {
	if r.left != 0 {
		r.t.Fatalf("row started with %d fields of the previous one missing", r.left)
	}
	r.left = n
	r.vals = r.vals[:0]
	r.buf = append(r.buf, 'R')
}
func (r *recorder) Null()        { r.field("null", nil, nil) }
func (r *recorder) Bool(v bool)  { r.field("bool", v, strconv.AppendBool(nil, v)) }
func (r *recorder) Int2(v int16) { r.field("int2", v, strconv.AppendInt(nil, int64(v), 10)) }
func (r *recorder) Int4(v int32) { r.field("int4", v, strconv.AppendInt(nil, int64(v), 10)) }
func (r *recorder) Int8(v int64) { r.field("int8", v, strconv.AppendInt(nil, v, 10)) }
func (r *recorder) Float4(v float32) {
	r.field("float4", v, strconv.AppendUint(nil, uint64(math.Float32bits(v)), 16))
}
func (r *recorder) Float8(v float64) {
	r.field("float8", v, strconv.AppendUint(nil, math.Float64bits(v), 16))
}
func (r *recorder) Timestamp(m int64) { r.field("ts", m, strconv.AppendInt(nil, m, 10)) }
func (r *recorder) Date(d int32)      { r.field("date", d, strconv.AppendInt(nil, int64(d), 10)) }
func (r *recorder) Text(v []byte)     { r.field("text", string(v), strconv.AppendQuote(nil, string(v))) }
func (r *recorder) String(v string)   { r.field("text", v, strconv.AppendQuote(nil, v)) }
func (r *recorder) UUID(v [16]byte)   { r.field("uuid", v, hex.AppendEncode(nil, v[:])) }
func (r *recorder) JSON(v []byte)     { r.field("json", string(v), strconv.AppendQuote(nil, string(v))) }
func (r *recorder) JSONB(v []byte)    { r.field("jsonb", string(v), strconv.AppendQuote(nil, string(v))) }

var _ copyenc.FieldWriter = (*recorder)(nil)

// discard is a FieldWriter that keeps nothing, for measuring generators
// alone.
type discard struct{ n int }

func (d *discard) BeginRow(n int)  { d.n += n }
func (d *discard) Null()           {}
func (d *discard) Bool(bool)       {}
func (d *discard) Int2(int16)      {}
func (d *discard) Int4(int32)      {}
func (d *discard) Int8(int64)      {}
func (d *discard) Float4(float32)  {}
func (d *discard) Float8(float64)  {}
func (d *discard) Timestamp(int64) {}
func (d *discard) Date(int32)      {}
func (d *discard) Text([]byte)     {}
func (d *discard) String(string)   {}
func (d *discard) UUID([16]byte)   {}
func (d *discard) JSON([]byte)     {}
func (d *discard) JSONB(v []byte)  { d.n += len(v) }

var _ copyenc.FieldWriter = (*discard)(nil)

// mustNew is New for tests.
func mustNew(t testing.TB, kind string, o Options) Generator {
	t.Helper()
	g, err := New(kind, o)
	if err != nil {
		t.Fatalf("New(%q, %+v): %v", kind, o, err)
	}
	return g
}

// record returns the recorder spelling of all remaining rows of g.
func record(t testing.TB, g Generator) []byte {
	t.Helper()
	r := newRecorder(t)
	for g.Next() {
		g.Encode(r)
	}
	return r.buf
}

// conditionsRange returns a conditions generator of the rows [lo, hi) of
// a series of `batches` batches with opts' other fields.
func conditionsRange(t testing.TB, o Options, lo, hi int64) *conditions {
	t.Helper()
	o, err := o.withDefaults(kindConditions)
	if err != nil {
		t.Fatal(err)
	}
	c, err := newConditionsConfig(o)
	if err != nil {
		t.Fatal(err)
	}
	return newConditions(c, lo, hi)
}

// textRows returns the text rows of g, one string each, newline removed.
func textRows(g *conditions) []string {
	var out []string
	var buf []byte
	for g.Next() {
		buf = g.AppendTextRow(buf[:0])
		out = append(out, string(bytes.TrimSuffix(buf, []byte{'\n'})))
	}
	return out
}

func mustTime(t testing.TB, layout, s string) time.Time {
	t.Helper()
	v, err := time.Parse(layout, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
