package statsd

import (
	"fmt"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/ingest"
)

var fixedFlush = time.Unix(1700000000, 0)

// benchLines are 1,000 lines of mixed types over 100 series, a tenth
// of them tagged.
func benchLines() [][]byte {
	lines := make([][]byte, 1000)
	for i := range lines {
		switch i % 4 {
		case 0:
			lines[i] = fmt.Appendf(nil, "api.web%02d.hits:%d|c|@0.5", i%100, i)
		case 1:
			lines[i] = fmt.Appendf(nil, "api.web%02d.latency:%d.%d|ms", i%100, i, i%10)
		case 2:
			lines[i] = fmt.Appendf(nil, "api.web%02d.load:+%d|g", i%100, i%7)
		default:
			lines[i] = fmt.Appendf(nil, "api.requests:%d|c|#host:web%02d,env:prod", i, i%100)
		}
	}
	return lines
}

func BenchmarkAppendLine(b *testing.B) {
	lines := benchLines()
	var size int64
	for _, l := range lines {
		size += int64(len(l) + 1)
	}
	p, err := NewParser(ingest.DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	var dst []Metric
	run := func() {
		dst = dst[:0]
		for _, l := range lines {
			if dst, err = p.AppendLine(dst, l); err != nil {
				b.Fatal(err)
			}
		}
	}
	run() // warm the caches and dst
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		run()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lines)), "ns/metric")
}

// BenchmarkAggregate adds 1,000 parsed metrics and flushes, as one
// short interval.
func BenchmarkAggregate(b *testing.B) {
	lines := benchLines()
	p, err := NewParser(ingest.DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	var ms []Metric
	for _, l := range lines {
		if ms, err = p.AppendLine(ms, l); err != nil {
			b.Fatal(err)
		}
	}
	a, err := NewAggregator(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range ms {
			if err := a.Add(m); err != nil {
				b.Fatal(err)
			}
		}
		a.Flush(fixedFlush)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ms)), "ns/metric")
}
