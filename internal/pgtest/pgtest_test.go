package pgtest

import (
	"context"
	"testing"
)

func TestMain(m *testing.M) { Main(m) }

func TestFreshDatabasePerTest(t *testing.T) {
	ctx := context.Background()
	a, b := Conn(t), Conn(t)
	if _, err := a.Exec(ctx, "create table only_in_a (x int)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := b.QueryRow(ctx, "select count(*) from pg_class where relname = 'only_in_a'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("second database sees the first one's table: n=%d err=%v", n, err)
	}
	var tz string
	if err := a.QueryRow(ctx, "show timezone").Scan(&tz); err != nil || tz != "UTC" {
		t.Fatalf("TimeZone = %q, %v", tz, err)
	}
	var fsync string
	if Cluster(t) != nil {
		if err := a.QueryRow(ctx, "show fsync").Scan(&fsync); err != nil || fsync != "off" {
			t.Fatalf("fsync = %q, %v", fsync, err)
		}
	}
}

// TestServers: extra clusters are distinct servers, reachable over
// loopback TCP with the URL given, each database fresh.
func TestServers(t *testing.T) {
	ctx := context.Background()
	urls := Servers(t, 2)
	ports := map[int]bool{}
	for _, u := range urls {
		p := PoolFor(t, u)
		var port int
		var addr string
		if err := p.QueryRow(ctx, "select current_setting('port')::int, coalesce(inet_server_addr()::text, '')").Scan(&port, &addr); err != nil {
			t.Fatal(err)
		}
		if addr != "127.0.0.1/32" && addr != "127.0.0.1" {
			t.Errorf("server address %q, want loopback TCP", addr)
		}
		ports[port] = true
		if _, err := p.Exec(ctx, "create table only_here (x int)"); err != nil {
			t.Fatal(err)
		}
	}
	if len(ports) != 2 {
		t.Fatalf("two extra servers share a port: %v", ports)
	}
	again := Servers(t, 1)
	if again[0] == urls[0] {
		t.Fatal("a second call gave the same database")
	}
	if ServerCluster(t, 0) == nil || ServerCluster(t, 0) == Cluster(t) {
		t.Fatal("ServerCluster(0) is not an extra cluster")
	}
}
