package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/pgtest"
)

// A max-memory far below what 4,000 series take keeps every point sent
// over one Graphite TCP connection: the connection is slowed down while a
// flush frees memory, never closed, and the series' idle states are
// evicted rather than refused.
func TestServeTinyMemoryKeepsEveryPoint(t *testing.T) {
	db := pgtest.DB(t)
	cfgFile := filepath.Join(t.TempDir(), "pgts.toml")
	err := os.WriteFile(cfgFile, []byte(`
max-memory = "256KiB"
flush-interval = "100ms"
[graphite]
tcp = "127.0.0.1:0"
udp = "127.0.0.1:0"
[pickle]
tcp = "127.0.0.1:0"
[statsd]
udp = "127.0.0.1:0"
tcp = "127.0.0.1:0"
[http]
addr = "127.0.0.1:0"
[raw]
table = "metrics_raw"
interval = "1 day"
[[ds]]
regexp = "."
step = "10s"
archives = ["10s:6h", "1m:7d", "1h:1y"]
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	ad, logs, cancel, done := startServe(t, db, serveFlags{config: cfgFile})
	defer cancel()

	const series, rounds = 4000, 3
	base := time.Now().Add(-10*time.Minute).Unix() / 60 * 60
	var lines strings.Builder
	for r := range rounds {
		for i := range series {
			fmt.Fprintf(&lines, "tiny.s%04d.cpu %d %d\n", i, i+r, base+int64(10*r))
		}
	}
	c, err := net.Dial("tcp", ad.GraphiteTCP)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte(lines.String())); err != nil {
		t.Fatalf("sending %d points: %v\n%s", series*rounds, err, logs.String())
	}
	c.Close()
	deadline := time.Now().Add(time.Minute)
	for !receivedAll(t, ad.HTTP, map[string]int{"graphite_tcp": series * rounds}) {
		if time.Now().After(deadline) {
			t.Fatalf("points not received; logs:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel() // SIGTERM: the final flush
	if err := <-done; err != nil {
		t.Fatalf("serve: %v\n%s", err, logs.String())
	}
	pool := pgtest.PoolFor(t, db)
	var metrics, raw int
	if err := pool.QueryRow(context.Background(),
		`SELECT (SELECT count(*) FROM pgts.metric), (SELECT count(*) FROM metrics_raw)`).Scan(&metrics, &raw); err != nil {
		t.Fatal(err)
	}
	if metrics != series || raw != series*rounds {
		t.Fatalf("stored %d series and %d points, want %d and %d\n%s", metrics, raw, series, series*rounds, logs.String())
	}
}
