package serve

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/rra"
)

// countSink counts points and keeps nothing.
type countSink struct{ n atomic.Int64 }

func (s *countSink) Add(_ context.Context, pts []ingest.Point) error {
	s.n.Add(int64(len(pts)))
	return nil
}
func (s *countSink) TryAdd(pts []ingest.Point) (int, error) {
	s.n.Add(int64(len(pts)))
	return len(pts), nil
}
func (s *countSink) SetRules([]rra.Rule) error   { return nil }
func (s *countSink) Close(context.Context) error { return nil }

// BenchmarkGraphiteTCP measures Graphite plaintext through a loopback TCP
// connection, the stream layer and the parser, into a sink that only
// counts: the receiving side's own cost per point.
func BenchmarkGraphiteTCP(b *testing.B) {
	sink := &countSink{}
	cfg := testConfig()
	cfg.Graphite.UDP, cfg.Pickle.TCP, cfg.StatsD.UDP, cfg.StatsD.TCP, cfg.HTTP.Addr = "", "", "", "", ""
	srv, err := New(cfg, sink, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	var chunk strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&chunk, "servers.web%d.cpu.user %d.5 %d\n", i%100, i, 1700000000+i)
	}
	data := []byte(chunk.String())
	c := dialB(b, srv.Addrs().GraphiteTCP)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Write(data); err != nil {
			b.Fatal(err)
		}
	}
	c.Close()
	for sink.n.Load() < int64(b.N)*1000 {
		runtime.Gosched()
	}
	b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "points/s")
}
