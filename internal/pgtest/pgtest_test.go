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
