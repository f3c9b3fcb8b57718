package blast

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/ingest/graphite"
	"github.com/pgts/pgts/internal/ingest/influx"
	"github.com/pgts/pgts/internal/ingest/remotewrite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestValidate(t *testing.T) {
	for _, c := range []Config{
		{Protocol: "carrier-pigeon", Addr: "x:1", Rate: 1, Series: 1, BatchSize: 1, Prefix: "p"},
		{Protocol: "graphite", Addr: "", Rate: 1, Series: 1, BatchSize: 1, Prefix: "p"},
		{Protocol: "graphite", Addr: "x:1", Rate: 0, Series: 1, BatchSize: 1, Prefix: "p"},
		{Protocol: "graphite", Addr: "x:1", Rate: 1, Series: 0, BatchSize: 1, Prefix: "p"},
		{Protocol: "graphite", Addr: "x:1", Rate: 1, Series: 1, BatchSize: 1, Prefix: "bad name"},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
	if _, err := New(DefaultConfig()); err != nil {
		t.Fatalf("default config: %v", err)
	}
}

// collect counts the points a receiver parsed, by series name.
type collect struct {
	mu      sync.Mutex
	points  map[string]int
	last    map[string]int64
	n       int
	unorder int  // points not after their series' previous point
	seconds bool // timestamps are whole seconds (Graphite): only going back counts
}

func (c *collect) add(pts []ingest.Point) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[string]int64{}
	}
	for _, p := range pts {
		k := p.Name + tagString(p.Tags)
		if t, ok := c.last[k]; ok && (p.Time < t || p.Time == t && !c.seconds) {
			c.unorder++
		}
		c.last[k] = p.Time
		c.points[k]++
		c.n++
	}
}

func tagString(tags []ingest.Tag) string {
	var b strings.Builder
	for _, t := range tags {
		b.WriteString(";" + t.Key + "=" + t.Value)
	}
	return b.String()
}

func blastConfig(proto, addr string) Config {
	c := DefaultConfig()
	c.Protocol, c.Addr, c.Rate, c.Series, c.BatchSize, c.Duration = proto, addr, 20000, 50, 100, 150*time.Millisecond
	return c
}

func TestGraphiteTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := &collect{points: map[string]int{}, seconds: true}
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		p, _ := graphite.NewParser(ingest.DefaultLimits(), time.Now)
		sc := bufio.NewScanner(c)
		var pts []ingest.Point
		for sc.Scan() {
			pts, err = p.AppendLine(pts[:0], sc.Bytes())
			if err != nil {
				done <- err
				return
			}
			got.add(pts)
		}
		done <- sc.Err()
	}()
	b, err := New(blastConfig("graphite", ln.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	st, err := b.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ln.Close()
	got.mu.Lock()
	defer got.mu.Unlock()
	if st.Acked == 0 || st.Acked != st.Sent || int64(got.n) != st.Acked {
		t.Fatalf("stats %+v, received %d", st, got.n)
	}
	if len(got.points) != 50 {
		t.Fatalf("%d distinct series, want 50", len(got.points))
	}
	if got.unorder != 0 {
		t.Fatalf("%d points not after their series' previous one", got.unorder)
	}
	if got.points["blast.0000007"] == 0 {
		t.Fatalf("series names: %v", got.points)
	}
}

func TestStatsdUDP(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	cfg := blastConfig("statsd", pc.LocalAddr().String())
	cfg.Rate, cfg.Duration = 5000, 100*time.Millisecond
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := b.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Read what arrived; loopback UDP on an idle receiver buffer does not
	// drop at this volume.
	lines := 0
	buf := make([]byte, 65536)
	for int64(lines) < st.Acked {
		pc.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatalf("after %d of %d lines: %v", lines, st.Acked, err)
		}
		if n > maxDatagram {
			t.Fatalf("datagram of %d bytes", n)
		}
		for _, l := range strings.Split(string(buf[:n]), "\n") {
			if !strings.HasSuffix(l, ":1|c") {
				t.Fatalf("line %q", l)
			}
			lines++
		}
	}
	if int64(lines) != st.Acked || st.Acked == 0 {
		t.Fatalf("stats %+v, received %d lines", st, lines)
	}
}

func TestHTTPProtocols(t *testing.T) {
	for _, proto := range []string{"influx", "remote-write"} {
		t.Run(proto, func(t *testing.T) {
			got := &collect{points: map[string]int{}}
			var mu sync.Mutex
			idec, _ := influx.NewDecoder(ingest.DefaultLimits(), time.Now)
			rdec, _ := remotewrite.NewDecoder(ingest.DefaultLimits())
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer s3cret" {
					http.Error(w, "no token", http.StatusUnauthorized)
					return
				}
				body, _ := io.ReadAll(r.Body)
				mu.Lock()
				defer mu.Unlock()
				var pts []ingest.Point
				var err error
				switch r.URL.Path {
				case "/write":
					pts, _, err = idec.Decode(nil, body, influx.Microsecond)
				case "/api/v1/write":
					pts, _, err = rdec.Decode(nil, body)
				default:
					http.NotFound(w, r)
					return
				}
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				got.add(pts)
				w.WriteHeader(http.StatusNoContent)
			}))
			defer srv.Close()
			cfg := blastConfig(proto, strings.TrimPrefix(srv.URL, "http://"))
			cfg.Token = "s3cret"
			b, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			st, err := b.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			got.mu.Lock()
			defer got.mu.Unlock()
			if st.Acked == 0 || st.Acked != st.Sent || st.Errors != 0 || int64(got.n) != st.Acked || len(got.points) != 50 || got.unorder != 0 {
				t.Fatalf("stats %+v, received %d points in %d series", st, got.n, len(got.points))
			}
		})
	}
}

func TestRefusedRequestsCounted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	cfg := blastConfig("influx", strings.TrimPrefix(srv.URL, "http://"))
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := b.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("err = %v", err)
	}
	if st.Acked != 0 || st.Errors != 10 {
		t.Fatalf("stats %+v", st)
	}
}
