package shard

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pgtest"
)

const conditionsColumns = "time timestamptz not null, device_id text not null, temperature double precision, humidity double precision"

// cluster is a coordinator and its shards for a test.
type cluster struct {
	coord  *pgxpool.Pool
	c      *Coordinator
	shards []*pgxpool.Pool
	urls   []string
}

func newCluster(t *testing.T, n int) *cluster {
	t.Helper()
	ctx := context.Background()
	cl := &cluster{coord: pgtest.Pool(t), urls: pgtest.Servers(t, n)}
	cl.c = New(cl.coord, testLog(t))
	for i, u := range cl.urls {
		if _, err := cl.c.Add(ctx, string(rune('a'+i)), u); err != nil {
			t.Fatal(err)
		}
		cl.shards = append(cl.shards, pgtest.PoolFor(t, u))
	}
	return cl
}

func conditionsSpec(name string, parts int) TableSpec {
	return TableSpec{
		Series: partition.CreateSpec{Name: name, Columns: conditionsColumns, TimeColumn: "time",
			Interval: partition.Interval{Days: 1}, Premake: 2},
		ShardColumn: "device_id", Partitions: parts,
	}
}

func scalar(t *testing.T, p *pgxpool.Pool, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := p.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// TestCreateTable: the coordinator's parent is hash-partitioned into
// foreign tables, each a series table on its shard; a row inserted
// through the coordinator lands on the shard its hash says; creating
// again is a no-op.
func TestCreateTable(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t, 2)
	tb, err := cl.c.CreateTable(ctx, conditionsSpec("conditions", 4), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if !tb.Ready || len(tb.Placement) != 4 || tb.Placement[0] != "a" || tb.Placement[1] != "b" {
		t.Fatalf("table = %+v", tb)
	}
	if n := scalar(t, cl.coord, `SELECT count(*) FROM pg_inherits i JOIN pg_foreign_table f ON f.ftrelid = i.inhrelid WHERE i.inhparent = 'conditions'::regclass`); n != 4 {
		t.Fatalf("%d foreign partitions", n)
	}
	for i, sp := range cl.shards {
		if n := scalar(t, sp, `SELECT count(*) FROM pgts.series_table WHERE table_name LIKE 'conditions_p%'`); n != 2 {
			t.Errorf("shard %d holds %d series tables", i, n)
		}
		if n := scalar(t, sp, `SELECT count(*) FROM pgts.shard_member WHERE parent_name = 'conditions' AND modulus = 4`); n != 2 {
			t.Errorf("shard %d records %d members", i, n)
		}
	}
	if _, err := cl.coord.Exec(ctx, `INSERT INTO conditions VALUES (now(), 'dev-1', 20, 50)`); err != nil {
		t.Fatal(err)
	}
	var part int64
	if err := cl.coord.QueryRow(ctx, `SELECT p FROM generate_series(0, 3) p WHERE satisfies_hash_partition('conditions'::regclass, 4, p::int, 'dev-1'::text)`).Scan(&part); err != nil {
		t.Fatal(err)
	}
	if n := scalar(t, cl.shards[part%2], `SELECT count(*) FROM conditions_p`+string(rune('0'+part))); n != 1 {
		t.Fatalf("the row is not in partition %d on its shard", part)
	}
	if _, err := cl.c.CreateTable(ctx, conditionsSpec("conditions", 4), time.Now); err != nil {
		t.Fatalf("creating again: %v", err)
	}
	if _, err := cl.c.CreateTable(ctx, conditionsSpec("conditions", 8), time.Now); err == nil {
		t.Fatal("creating again with other options succeeded")
	}
	dbset := scalar(t, cl.coord, `SELECT count(*) FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
		WHERE d.datname = current_database() AND 'enable_partitionwise_aggregate=on' = ANY (s.setconfig)`)
	if dbset != 1 {
		t.Fatal("enable_partitionwise_aggregate is not set on the coordinator's database")
	}
}

// TestCreateTableShardDown: with a shard unreachable, creation fails and
// the coordinator shows no table; the same create completes once the
// shard answers.
func TestCreateTableShardDown(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t, 2)
	var port string
	if err := cl.coord.QueryRow(ctx, `SELECT split_part(o, '=', 2) FROM pg_foreign_server, unnest(srvoptions) o WHERE srvname = 'pgts_shard_b' AND o LIKE 'port=%'`).Scan(&port); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.coord.Exec(ctx, `ALTER SERVER pgts_shard_b OPTIONS (SET port '1')`); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.c.CreateTable(ctx, conditionsSpec("m", 4), time.Now); err == nil {
		t.Fatal("created with a shard down")
	}
	if n := scalar(t, cl.coord, `SELECT count(*) FROM pg_class WHERE relname = 'm'`); n != 0 {
		t.Fatal("a half-made table is visible on the coordinator")
	}
	if _, err := cl.coord.Exec(ctx, `ALTER SERVER pgts_shard_b OPTIONS (SET port '`+port+`')`); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.c.CreateTable(ctx, conditionsSpec("m", 4), time.Now); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if n := scalar(t, cl.coord, `SELECT count(*) FROM m`); n != 0 {
		t.Fatalf("count %d", n)
	}
}
