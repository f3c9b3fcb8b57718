// Package pgtest gives tests a real PostgreSQL: one private cluster per
// test binary (started on first use, stopped and deleted by Main), and a
// fresh database per test, dropped when the test ends.
//
// When PGTS_TEST_DATABASE_URL is set, that server is used instead of a
// private cluster; the role must be allowed to create databases.
//
// Tests never skip because PostgreSQL is missing: they fail, saying how to
// install it (`make test` installs it).
//
// Use:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestX(t *testing.T) {
//		conn := pgtest.Conn(t) // a fresh, empty database
//		...
//	}
package pgtest

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/embedded"
	"github.com/pgts/pgts/internal/pg"
)

// EnvURL names the variable holding an external server's URL.
const EnvURL = "PGTS_TEST_DATABASE_URL"

var (
	once     sync.Once
	adminURL string // a database on the server to run CREATE/DROP DATABASE from
	startErr error
	cluster  *embedded.Cluster
	tempDir  string
	dbSeq    atomic.Int64
)

// Main runs the tests and then stops and deletes the private cluster.
func Main(m *testing.M) {
	code := m.Run()
	stopServers()
	if cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, _ = cluster.Stop(ctx, embedded.Immediate)
		cancel()
		_ = os.RemoveAll(tempDir)
		_ = os.RemoveAll(cluster.SocketDir())
		_ = os.Remove(cluster.SocketDir() + ".lock")
	}
	os.Exit(code)
}

// Settings are the test cluster's: durability off for speed, small memory.
func Settings() []embedded.Setting {
	return []embedded.Setting{
		{Name: "fsync", Value: "off", Why: "tests"},
		{Name: "synchronous_commit", Value: "off", Why: "tests"},
		{Name: "full_page_writes", Value: "off", Why: "tests"},
		{Name: "shared_buffers", Value: "128MB", Why: "tests"},
		{Name: "max_connections", Value: "200", Why: "parallel tests"},
		{Name: "max_wal_size", Value: "1GB", Why: "tests"},
		{Name: "max_locks_per_transaction", Value: "256", Why: "many partitions"},
	}
}

func start() {
	if u := os.Getenv(EnvURL); u != "" {
		adminURL = u
		return
	}
	bins, err := embedded.DefaultFinder(os.Getenv("PGTS_PG_BINDIR")).Find()
	if err != nil {
		startErr = fmt.Errorf("pgtest needs PostgreSQL: %w (or set %s)", err, EnvURL)
		return
	}
	reapOnce.Do(func() { reapStale(testRootGlob, bins) })
	// /tmp rather than TMPDIR: the server's user must reach it.
	tempDir, err = os.MkdirTemp("/tmp", "pgts-test-")
	if err == nil {
		err = os.Chmod(tempDir, 0o755) // pgts changes only directories it creates
	}
	if err == nil {
		err = markOwner(tempDir)
	}
	if err != nil {
		startErr = err
		return
	}
	cluster, err = embedded.New(embedded.Config{
		DataDir:  tempDir + "/data",
		Binaries: bins,
		AnyPort:  true,
		Settings: Settings(),
		Logger:   slog.New(slog.DiscardHandler),
	})
	if err != nil {
		startErr = err
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	info, err := cluster.Start(ctx)
	if err != nil {
		startErr = fmt.Errorf("starting the test cluster: %w", err)
		return
	}
	adminURL = info.ConnString("postgres")
}

// AdminURL returns the URL of the server's maintenance database, starting
// the private cluster if needed.
func AdminURL(t testing.TB) string {
	t.Helper()
	once.Do(start)
	if startErr != nil {
		t.Fatal(startErr)
	}
	return adminURL
}

// Cluster returns the private cluster, or nil with an external server.
func Cluster(t testing.TB) *embedded.Cluster {
	AdminURL(t)
	return cluster
}

// DB creates a fresh database for the test and returns its URL. The
// database is dropped when the test ends.
func DB(t testing.TB) string {
	t.Helper()
	return freshDB(t, AdminURL(t))
}

// freshDB creates a database on the server of admin, dropped when the
// test ends, and returns its URL.
func freshDB(t testing.TB, admin string) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d_%s", os.Getpid(), dbSeq.Add(1), sanitize(t.Name()))
	if len(name) > 63 {
		name = name[:63]
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pg.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connecting to the test server: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pg.QuoteIdent(name)+" TEMPLATE template0"); err != nil {
		t.Fatalf("creating test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		conn, err := pg.Connect(ctx, admin)
		if err != nil {
			t.Errorf("connecting to drop test database: %v", err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pg.QuoteIdent(name)+" WITH (FORCE)"); err != nil {
			t.Errorf("dropping test database: %v", err)
		}
	})
	return withDatabase(t, admin, name)
}

// withDatabase replaces the database of a URL or key=value string.
func withDatabase(t testing.TB, conn, db string) string {
	if strings.Contains(conn, "://") {
		u, err := url.Parse(conn)
		if err != nil {
			t.Fatalf("parsing test server URL: %v", err)
		}
		u.Path = "/" + db
		return u.String()
	}
	return conn + " dbname=" + db
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Conn returns a connection to a fresh database, closed when the test ends.
func Conn(t testing.TB) *pgx.Conn {
	t.Helper()
	u := DB(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pg.Connect(ctx, u)
	if err != nil {
		t.Fatalf("connecting to test database: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// Pool returns a pool on a fresh database, closed when the test ends.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	return PoolFor(t, DB(t))
}

// PoolFor returns a pool on the database at u, closed when the test ends.
func PoolFor(t testing.TB, u string) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := pg.NewPool(ctx, u, 16)
	if err != nil {
		t.Fatalf("connecting to test database: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// Rows runs sql on pool and returns each row's values printed with
// fmt.Sprint, in the order the server returns them: a compact way for a
// test to compare query results.
func Rows(t testing.TB, pool *pgxpool.Pool, sql string, args ...any) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(v...))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
