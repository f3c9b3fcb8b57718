package pgtest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/embedded"
)

// MaxServers bounds the extra clusters one test binary may start.
const MaxServers = 4

// extra holds the extra private clusters of this test binary, started on
// first use by Servers and stopped by Main. Guarded by extraMu.
var (
	extraMu   sync.Mutex
	extras    []*extraServer
	extraRoot string
)

type extraServer struct {
	cluster *embedded.Cluster
	admin   string // loopback TCP URL of the maintenance database, password included
}

// Servers returns the URLs of fresh databases on n extra private clusters
// (1 <= n <= MaxServers), one database per cluster, dropped when the test
// ends. The clusters are started once per test binary, on first use, and
// stopped by Main; they listen on 127.0.0.1 only. The URLs are loopback
// TCP with the cluster's password, so that a server (postgres_fdw) can
// connect with them as well as a client.
//
// Servers start even when PGTS_TEST_DATABASE_URL names an external
// server: tests of several servers need servers they own.
func Servers(t testing.TB, n int) []string {
	t.Helper()
	if n < 1 || n > MaxServers {
		t.Fatalf("pgtest.Servers(%d): between 1 and %d", n, MaxServers)
	}
	urls := make([]string, n)
	for i := range n {
		s := extraServerN(t, i)
		urls[i] = freshDB(t, s.admin)
	}
	return urls
}

// ServerCluster returns the i-th extra cluster of Servers, started if
// needed: tests kill and restart it. A restart keeps its port, so URLs
// stay valid.
func ServerCluster(t testing.TB, i int) *embedded.Cluster {
	t.Helper()
	if i < 0 || i >= MaxServers {
		t.Fatalf("pgtest.ServerCluster(%d): between 0 and %d", i, MaxServers-1)
	}
	return extraServerN(t, i).cluster
}

// extraServerN starts the extra clusters up to index i.
func extraServerN(t testing.TB, i int) *extraServer {
	t.Helper()
	extraMu.Lock()
	defer extraMu.Unlock()
	for len(extras) <= i {
		s, err := startExtra(len(extras))
		if err != nil {
			t.Fatalf("starting extra test server %d: %v", len(extras), err)
		}
		extras = append(extras, s)
	}
	return extras[i]
}

func startExtra(i int) (*extraServer, error) {
	bins, err := embedded.DefaultFinder(os.Getenv("PGTS_PG_BINDIR")).Find()
	if err != nil {
		return nil, fmt.Errorf("pgtest needs PostgreSQL: %w", err)
	}
	if extraRoot == "" {
		reapOnce.Do(func() { reapStale(testRootGlob, bins) })
		// /tmp rather than TMPDIR: the server's user must reach it.
		dir, err := os.MkdirTemp("/tmp", "pgts-test-servers-")
		if err != nil {
			return nil, err
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			return nil, err
		}
		if err := markOwner(dir); err != nil {
			return nil, err
		}
		extraRoot = dir
	}
	c, err := embedded.New(embedded.Config{
		DataDir:  fmt.Sprintf("%s/s%d", extraRoot, i),
		Binaries: bins,
		AnyPort:  true,
		Settings: Settings(),
		Logger:   slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	info, err := c.Start(ctx)
	if err != nil {
		return nil, err
	}
	admin, err := c.TCPConnString(info, "postgres")
	if err != nil {
		return nil, err
	}
	return &extraServer{cluster: c, admin: admin}, nil
}

// stopServers stops and deletes the extra clusters; called by Main.
func stopServers() {
	extraMu.Lock()
	defer extraMu.Unlock()
	for _, s := range extras {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, _ = s.cluster.Stop(ctx, embedded.Immediate)
		cancel()
		_ = os.RemoveAll(s.cluster.SocketDir())
		_ = os.Remove(s.cluster.SocketDir() + ".lock")
	}
	if extraRoot != "" {
		_ = os.RemoveAll(extraRoot)
	}
	extras, extraRoot = nil, ""
}
