package graphite

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/ingest"
)

// benchLines are 1,000 plaintext lines over 100 series.
func benchLines(tagged bool) [][]byte {
	lines := make([][]byte, 1000)
	for i := range lines {
		name := fmt.Sprintf("servers.web%02d.cpu.user", i%100)
		if tagged {
			name = fmt.Sprintf("cpu.user;host=web%02d;dc=eu-west-1;env=prod", i%100)
		}
		lines[i] = fmt.Appendf(nil, "%s %d.%d %d", name, i, i%10, 1700000000+i)
	}
	return lines
}

func benchmarkAppendLine(b *testing.B, tagged bool) {
	lines := benchLines(tagged)
	var size int64
	for _, l := range lines {
		size += int64(len(l) + 1)
	}
	p := newParser(b, ingest.DefaultLimits())
	var dst []ingest.Point
	run := func() {
		dst = dst[:0]
		for _, l := range lines {
			var err error
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
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lines)), "ns/point")
}

func BenchmarkAppendLine(b *testing.B)       { benchmarkAppendLine(b, false) }
func BenchmarkAppendLineTagged(b *testing.B) { benchmarkAppendLine(b, true) }

// BenchmarkPickleDecode decodes a protocol 2 frame of 1,000 points, as
// a Python carbon client pickles them.
func BenchmarkPickleDecode(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("](")
	for i := range 1000 {
		sb.WriteString(elem(fmt.Sprintf("servers.web%02d.cpu.user", i%100), ts1, v15))
		sb.WriteByte('q')
		sb.WriteByte(byte(i))
	}
	sb.WriteString("e.")
	frame := p2(sb.String())
	d := newPickleDecoder(b, ingest.DefaultLimits())
	dst, _, err := d.Decode(nil, frame) // warm the caches and dst
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(frame) + FrameHeaderBytes))
	b.ReportAllocs()
	for b.Loop() {
		if dst, _, err = d.Decode(dst[:0], frame); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/point")
}
