package serve

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/rra"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testNow is the clock of the servers under test.
var testNow = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

var errFull = errors.New("sink full")

// memSink is a Sink that records the points it is given, in memory.
type memSink struct {
	mu      sync.Mutex
	pts     []ingest.Point
	full    bool          // TryAdd refuses everything
	block   chan struct{} // when not nil, Add waits until it is closed
	entered chan struct{} // receives when an Add starts waiting on block
	rules   [][]rra.Rule
	closed  bool
	health  error // what Health reports
}

func (s *memSink) Health() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.health
}

func (s *memSink) keep(pts []ingest.Point) {
	for _, p := range pts {
		p.Tags = slices.Clone(p.Tags)
		s.pts = append(s.pts, p)
	}
}

func (s *memSink) Add(ctx context.Context, pts []ingest.Point) error {
	s.mu.Lock()
	block, closed := s.block, s.closed
	s.mu.Unlock()
	if closed {
		return errors.New("sink closed")
	}
	if block != nil {
		select {
		case s.entered <- struct{}{}:
		default:
		}
		select {
		case <-block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keep(pts)
	return nil
}

func (s *memSink) TryAdd(pts []ingest.Point) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.full {
		return 0, errFull
	}
	s.keep(pts)
	return len(pts), nil
}

func (s *memSink) SetRules(rules []rra.Rule) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, rules)
	return nil
}

func (s *memSink) Close(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

func (s *memSink) points() []ingest.Point {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.pts)
}

func (s *memSink) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pts)
}

// byName returns the points named name.
func (s *memSink) byName(name string) []ingest.Point {
	var out []ingest.Point
	for _, p := range s.points() {
		if p.Name == name {
			out = append(out, p)
		}
	}
	return out
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// testServer is a started Server listening on ephemeral ports.
type testServer struct {
	*Server
	sink  *memSink
	reg   *prometheus.Registry
	logs  *syncBuffer
	addrs Addrs
	t     *testing.T
	once  sync.Once
}

// testConfig is DefaultConfig with every listener on an ephemeral port
// of 127.0.0.1.
func testConfig() Config {
	c := DefaultConfig()
	c.Graphite = GraphiteConfig{TCP: "127.0.0.1:0", UDP: "127.0.0.1:0"}
	c.Pickle.TCP = "127.0.0.1:0"
	c.StatsD.TCP, c.StatsD.UDP = "127.0.0.1:0", "127.0.0.1:0"
	c.HTTP.Addr = "127.0.0.1:0"
	return c
}

func startServer(t *testing.T, sink *memSink, edit func(*Config)) *testServer {
	t.Helper()
	if sink == nil {
		sink = &memSink{}
	}
	cfg := testConfig()
	if edit != nil {
		edit(&cfg)
	}
	reg := prometheus.NewRegistry()
	logs := &syncBuffer{}
	srv, err := New(cfg, sink, Options{Logger: slog.New(slog.NewTextHandler(logs, nil)), Registerer: reg, Gatherer: reg,
		Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	ts := &testServer{Server: srv, sink: sink, reg: reg, logs: logs, addrs: srv.Addrs(), t: t}
	t.Cleanup(ts.stop)
	return ts
}

// stop shuts the server down once, failing the test on error.
func (ts *testServer) stop() {
	ts.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := ts.Shutdown(ctx); err != nil {
			ts.t.Errorf("shutdown: %v", err)
		}
	})
}

// metric returns the sum of the values of the series of the metric name
// (without the pgts_serve_ prefix) whose labels include want.
func (ts *testServer) metric(name string, want map[string]string) float64 {
	ts.t.Helper()
	mfs, err := ts.reg.Gather()
	if err != nil {
		ts.t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != "pgts_serve_"+name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range m.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			for k, v := range want {
				if got[k] != v {
					continue series
				}
			}
			switch {
			case m.Counter != nil:
				sum += m.Counter.GetValue()
			case m.Gauge != nil:
				sum += m.Gauge.GetValue()
			}
		}
	}
	return sum
}

// eventually waits until cond holds, polling, failing after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func dial(t *testing.T, network, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// sendTCP writes data to addr and closes the connection.
func sendTCP(t *testing.T, addr string, data []byte) {
	t.Helper()
	c := dial(t, "tcp", addr)
	if _, err := c.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func sec(s int64) int64 { return s * 1_000_000 }

func pointString(p ingest.Point) string {
	var b strings.Builder
	b.WriteString(p.Name)
	for _, tg := range p.Tags {
		b.WriteString(";" + tg.Key + "=" + tg.Value)
	}
	return b.String()
}

func newTestLogger(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

func dialB(b *testing.B, addr string) net.Conn {
	b.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	return c
}
