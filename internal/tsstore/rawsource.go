package tsstore

import (
	"github.com/pgts/pgts/internal/copyenc"
	"github.com/pgts/pgts/internal/gen"
)

// rawRows presents buffered raw points as rows to the loader (through
// copyload.GenSource), so that they are written by the same binary COPY
// path as every other load. Not safe for concurrent use.
type rawRows struct {
	ids []int64
	ts  []int64 // micros
	vs  []float64
	i   int // the current row plus one
}

var rawColumns = []gen.Column{
	{Name: "time", Type: "timestamptz", NotNull: true},
	{Name: "series_id", Type: "bigint", NotNull: true},
	{Name: "value", Type: "double precision"},
}

func (r *rawRows) Columns() []gen.Column { return rawColumns }
func (r *rawRows) TimeColumn() int       { return 0 }
func (r *rawRows) Rows() int64           { return int64(len(r.ids)) }
func (r *rawRows) Time() int64           { return r.ts[r.i-1] }

// reset rewinds to the first row, for a rerun of the same rows.
func (r *rawRows) reset() { r.i = 0 }

func (r *rawRows) Next() bool {
	if r.i >= len(r.ids) {
		return false
	}
	r.i++
	return true
}

func (r *rawRows) Encode(w copyenc.FieldWriter) {
	i := r.i - 1
	w.BeginRow(3)
	w.Timestamp(r.ts[i])
	w.Int8(r.ids[i])
	w.Float8(r.vs[i])
}
