package shard

import (
	"context"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func testLog(t *testing.T) *slog.Logger { return slog.New(slog.NewTextHandler(testWriter{t}, nil)) }

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func password(t *testing.T, u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := pu.User.Password()
	if pw == "" {
		t.Fatalf("test server URL has no password")
	}
	return pw
}

// TestAddListRemove: a shard is recorded with its foreign server (async,
// fetch size) and user mapping, its catalog is installed, list shows no
// password, and a shard holding nothing is removed.
func TestAddListRemove(t *testing.T) {
	ctx := context.Background()
	coord := pgtest.Pool(t)
	urls := pgtest.Servers(t, 2)
	c := New(coord, testLog(t))
	for i, name := range []string{"a", "b"} {
		if _, err := c.Add(ctx, name, urls[i]); err != nil {
			t.Fatal(err)
		}
	}
	// again: an update, not an error
	if _, err := c.Add(ctx, "a", urls[0]); err != nil {
		t.Fatalf("adding a shard again: %v", err)
	}
	shards, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(shards) != 2 || shards[0].Name != "a" || shards[1].Name != "b" {
		t.Fatalf("shards = %+v", shards)
	}
	for i, s := range shards {
		if strings.Contains(s.Address(), password(t, urls[i])) {
			t.Errorf("address %q shows the password", s.Address())
		}
		if !strings.Contains(s.ConnString(), password(t, urls[i])) {
			t.Errorf("shard %s: its connection string has no password", s.Name)
		}
	}
	var opts []string
	if err := coord.QueryRow(ctx, `SELECT srvoptions FROM pg_foreign_server WHERE srvname = 'pgts_shard_a'`).Scan(&opts); err != nil {
		t.Fatal(err)
	}
	if j := strings.Join(opts, ","); !strings.Contains(j, "async_capable=true") || !strings.Contains(j, "fetch_size=10000") {
		t.Errorf("server options %v", opts)
	}
	shardPool := pgtest.PoolFor(t, urls[0])
	var v int
	if err := shardPool.QueryRow(ctx, `SELECT max(version) FROM pgts.schema_version`).Scan(&v); err != nil || v < 4 {
		t.Fatalf("the shard's catalog: version %d, %v", v, err)
	}
	if err := c.Remove(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if err := c.Remove(ctx, "b"); err == nil {
		t.Fatal("removing a removed shard succeeded")
	}
	if shards, _ := c.List(ctx); len(shards) != 1 {
		t.Fatalf("after remove: %+v", shards)
	}
}

// TestAddUnreachable: a shard that does not answer is refused, and the
// error does not show the password.
func TestAddUnreachable(t *testing.T) {
	ctx := context.Background()
	c := New(pgtest.Pool(t), testLog(t))
	_, err := c.Add(ctx, "gone", "postgresql://u:s3cretpw@127.0.0.1:1/db?connect_timeout=2")
	if err == nil {
		t.Fatal("an unreachable shard was added")
	}
	if strings.Contains(err.Error(), "s3cretpw") {
		t.Fatalf("error shows the password: %v", err)
	}
	if err := CheckName("Bad-Name"); err == nil {
		t.Fatal("a bad name was accepted")
	}
}
