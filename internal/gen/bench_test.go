package gen

import (
	"context"
	"io"
	"testing"

	"github.com/pgts/pgts/internal/copyenc"
)

// Figures: go test -run '^$' -bench . -benchtime 2s ./internal/gen/
// on the development machine (2-core AMD EPYC VM shared with other
// work), with Go 1.26. See the report that came with this package for
// the numbers; they are not kept here because they drift with hardware.

// TestNoAllocations checks that Next and Encode allocate nothing per row,
// for every kind.
func TestNoAllocations(t *testing.T) {
	for _, kind := range Kinds() {
		g := mustNew(t, kind, Options{Rows: 1 << 30, Batches: 1 << 20})
		w := &discard{}
		g.Next()
		g.Encode(w) // the first row may size buffers
		allocs := testing.AllocsPerRun(10_000, func() {
			if !g.Next() {
				t.Fatal("out of rows")
			}
			g.Encode(w)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations a row", kind, allocs)
		}
	}
	g := mustNew(t, "conditions", Options{})
	buf := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(10_000, func() {
		g.Next()
		buf = g.(TextAppender).AppendTextRow(buf[:0])
	})
	if allocs != 0 {
		t.Errorf("conditions text: %v allocations a row", allocs)
	}
}

// benchRows runs b.N rows of kind through w; reset is called whenever the
// writer's buffer would grow past 1 MB.
func benchRows(b *testing.B, kind string, o Options, w copyenc.FieldWriter, size func() int, reset func()) {
	o.Rows = 1 << 40
	if kind == "conditions" {
		o.Rows = MaxBatches * 10000
	}
	g := mustNew(b, kind, o)
	b.ReportAllocs()
	b.ResetTimer()
	var bytes int
	for range b.N {
		g.Next()
		g.Encode(w)
		if size != nil && size() > 1<<20 {
			bytes += size()
			reset()
		}
	}
	b.StopTimer()
	if size != nil {
		bytes += size()
		b.ReportMetric(float64(bytes)/float64(b.N), "B/row")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkGenerate measures generation alone: Next and Encode into a
// writer that keeps nothing.
func BenchmarkGenerate(b *testing.B) {
	for _, kind := range Kinds() {
		b.Run(kind, func(b *testing.B) { benchRows(b, kind, Options{}, &discard{}, nil, nil) })
	}
}

// BenchmarkBinary measures generation and binary COPY encoding, what the
// loader does per row.
func BenchmarkBinary(b *testing.B) {
	for _, kind := range Kinds() {
		b.Run(kind, func(b *testing.B) {
			w := copyenc.NewBinaryWriter(2 << 20)
			benchRows(b, kind, Options{}, w, w.Len, w.Reset)
		})
	}
}

// BenchmarkText measures `pgts gen`: text rows into a discarding writer.
func BenchmarkText(b *testing.B) {
	for _, kind := range Kinds() {
		b.Run(kind, func(b *testing.B) {
			g := mustNew(b, kind, Options{Rows: int64(b.N)})
			cw := &countWriter{}
			b.ReportAllocs()
			b.ResetTimer()
			if err := WriteText(context.Background(), cw, g); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(cw.n / int64(b.N))
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

var _ io.Writer = (*countWriter)(nil)
