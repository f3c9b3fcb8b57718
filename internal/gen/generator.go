package gen

import (
	"fmt"

	"github.com/pgts/pgts/internal/copyenc"
)

// Kinds of generator.
const (
	kindConditions = "conditions"
	kindIIBench    = "iibench"
	kindEvents     = "events"
)

// Kinds returns the names New accepts, in a fixed order.
func Kinds() []string { return []string{kindConditions, kindIIBench, kindEvents} }

// Column is a column a generator writes.
type Column struct {
	Name    string
	Type    string // SQL type for CREATE TABLE, e.g. "timestamptz", "integer", "double precision"
	NotNull bool   // declared NOT NULL (a generator writes NULL in no column)
}

// Generator produces rows one at a time: Next moves to the next row, then
// Time and Encode describe it. A generator is deterministic: the same
// kind and Options give the same rows in the same order.
//
// A Generator is not safe for concurrent use; Split gives one per
// goroutine.
type Generator interface {
	// Columns lists the columns Encode writes, in order. The slice is
	// the generator's; do not modify it.
	Columns() []Column
	// TimeColumn is the index in Columns of the row's time.
	TimeColumn() int
	// Next advances to the next row; it returns false when there is none.
	Next() bool
	// Time is the current row's time, in micros (UTC).
	Time() int64
	// Encode writes the current row: BeginRow, then one call per column.
	// It may be called more than once per row and writes the same each
	// time. It allocates nothing (the writer may, to grow its buffer).
	Encode(w copyenc.FieldWriter)
	// Rows is the number of rows the generator produces in all, counting
	// those already returned, or -1 if it is unbounded (none of this
	// package's generators is).
	Rows() int64
}

// TextAppender is implemented by generators whose text rows have a
// spelling of their own (conditions: the published C generator's).
// WriteText uses it in place of copyenc.TextWriter.
type TextAppender interface {
	// AppendTextRow appends the current row as one line of COPY text
	// format, newline included, and returns the extended buffer.
	AppendTextRow(dst []byte) []byte
}

// New returns the generator of kind with opts (zero fields take the
// kind's defaults).
func New(kind string, opts Options) (Generator, error) {
	parts, err := Split(kind, opts, 1)
	if err != nil {
		return nil, err
	}
	return parts[0], nil
}

// Split returns n generators (1 <= n <= MaxSplit) that together produce
// exactly the rows of New(kind, opts): part k produces the row indexes
// [⌊total·k/n⌋, ⌊total·(k+1)/n⌋), so concatenating the parts' output in
// order gives the unsplit output byte for byte. Parts may be empty when n
// exceeds the number of rows. Each part is deterministic and independent
// of the others, for generation in parallel.
func Split(kind string, opts Options, n int) ([]Generator, error) {
	if n < 1 || n > MaxSplit {
		return nil, fmt.Errorf("split into %d parts: must be between 1 and %d", n, MaxSplit)
	}
	mk, total, err := factory(kind, opts)
	if err != nil {
		return nil, err
	}
	parts := make([]Generator, n)
	for k := range parts {
		// total ≤ MaxRows and n ≤ MaxSplit, so the products fit an int64.
		parts[k] = mk(total*int64(k)/int64(n), total*int64(k+1)/int64(n))
	}
	return parts, nil
}

// factory checks opts for kind and returns the total number of rows and
// a function making the generator of the row indexes [lo, hi), for any
// 0 <= lo <= hi <= total.
func factory(kind string, opts Options) (mk func(lo, hi int64) Generator, total int64, err error) {
	o, err := opts.withDefaults(kind)
	if err != nil {
		return nil, 0, err
	}
	switch kind {
	case kindConditions:
		c, err := newConditionsConfig(o)
		if err != nil {
			return nil, 0, err
		}
		return func(lo, hi int64) Generator { return newConditions(c, lo, hi) }, c.total, nil
	case kindIIBench:
		c, err := newIIBenchConfig(o)
		if err != nil {
			return nil, 0, err
		}
		return func(lo, hi int64) Generator { return newIIBench(c, lo, hi) }, c.total, nil
	case kindEvents:
		c, err := newEventsConfig(o)
		if err != nil {
			return nil, 0, err
		}
		return func(lo, hi int64) Generator { return newEvents(c, lo, hi) }, c.total, nil
	}
	return nil, 0, unknownKind(kind)
}

// span is the range of row indexes a generator produces and its position
// in it.
type span struct {
	first int64 // the first row index
	next  int64 // the row index Next moves to
	end   int64 // one past the last row index
	row   int64 // the current row index (valid after Next returned true)
}

func newSpan(lo, hi int64) span { return span{first: lo, next: lo, end: hi, row: lo - 1} }

// advance moves to the next row index; false at the end.
func (s *span) advance() bool {
	if s.next >= s.end {
		return false
	}
	s.row = s.next
	s.next++
	return true
}

// Rows implements Generator.
func (s *span) Rows() int64 { return s.end - s.first }
