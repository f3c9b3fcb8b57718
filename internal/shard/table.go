package shard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// MaxPartitions bounds the hash partitions of a sharded table.
const MaxPartitions = 1024

// TableSpec describes a sharded series table.
type TableSpec struct {
	// Series is the spec of the table; each partition on its shard is a
	// series table made from it, named PartitionName(Name, p). Columns is
	// required (not Like), HashColumn must be empty.
	Series      partition.CreateSpec
	ShardColumn string // the hash partitioning key on the coordinator
	Partitions  int    // hash partitions (modulus); 0: 4 per shard
}

// PartitionName is the name of partition p of table name, on the
// coordinator (the foreign table) and on its shard (the series table).
func PartitionName(name string, p int) string { return fmt.Sprintf("%s_p%d", name, p) }

// BucketsFunction names the two-phase bucket aggregate of table name.
func BucketsFunction(name string) string { return name + "_buckets" }

// Table is a sharded table as recorded on the coordinator.
type Table struct {
	Schema, Name string
	ShardColumn  string
	Partitions   int
	Spec         partition.CreateSpec // the series table spec (Name is the parent's)
	Ready        bool                 // the coordinator's parent exists
	Dropping     bool                 // a drop began; the placement left is what remains on the shards
	Placement    []string             // shard name per partition
}

// Qualified returns the quoted schema.name.
func (t *Table) Qualified() string { return pg.QuoteQualified(t.Schema, t.Name) }

func (t *Table) String() string { return t.Schema + "." + t.Name }

func (s *TableSpec) validate(shards int) error {
	if s.Series.Columns == "" || s.Series.Like != "" {
		return &pg.UsageError{Err: errors.New("a sharded table needs --columns (not --like)")}
	}
	if s.Series.HashColumn != "" {
		return &pg.UsageError{Err: errors.New("--hash-column does not go with --shard-by: the shard key already hash-partitions the table")}
	}
	if err := pg.CheckIdent("shard column", s.ShardColumn); err != nil {
		return &pg.UsageError{Err: err}
	}
	if s.Partitions == 0 {
		s.Partitions = 4 * shards
	}
	if s.Partitions < 1 || s.Partitions > MaxPartitions {
		return &pg.UsageError{Err: fmt.Errorf("--shards %d: must be between 1 and %d", s.Partitions, MaxPartitions)}
	}
	probe := s.Series
	probe.Name = PartitionName(s.Series.Name, s.Partitions-1)
	if err := probe.Validate(); err != nil {
		return &pg.UsageError{Err: err}
	}
	if len(BucketsFunction(s.Series.Name)) > 63 {
		return &pg.UsageError{Err: fmt.Errorf("table name %q is too long for its functions' names", s.Series.Name)}
	}
	return nil
}

// CreateTable makes a sharded series table, in three steps that a retry
// resumes:
//
//  1. the coordinator records the table and the placement of its
//     partitions (committed first, so every retry places them the same);
//  2. each partition is created on its shard as a series table (skipped
//     when it exists), and recorded in the shard's pgts.shard_member;
//  3. in one transaction on the coordinator: the parent, hash-partitioned
//     by the shard column, its foreign-table partitions, the two-phase
//     bucket function, and the ready mark.
//
// Until step 3 commits, the coordinator shows no table: a shard that is
// down fails step 2, and running the same create again completes it.
// Creating a table that is ready with the same spec again does nothing.
func (c *Coordinator) CreateTable(ctx context.Context, s TableSpec, now func() time.Time) (*Table, error) {
	if err := catalog.Migrate(ctx, c.pool); err != nil {
		return nil, err
	}
	shards, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	if len(shards) == 0 {
		return nil, &pg.UsageError{Err: errors.New("no shards: add them first with pgts shard add NAME URL")}
	}
	if err := s.validate(len(shards)); err != nil {
		return nil, err
	}
	if s.Series.Schema == "" {
		if err := c.pool.QueryRow(ctx, `SELECT current_schema()::text`).Scan(&s.Series.Schema); err != nil {
			return nil, fmt.Errorf("finding the current schema: %w", err)
		}
	}
	t, err := c.record(ctx, s, shards)
	if err != nil {
		return nil, err
	}
	if t.Ready {
		return t, nil
	}
	byName := map[string]Shard{}
	for _, sh := range shards {
		byName[sh.Name] = sh
	}
	for _, sh := range shards {
		var parts []int
		for p, name := range t.Placement {
			if name == sh.Name {
				parts = append(parts, p)
			}
		}
		if len(parts) == 0 {
			continue
		}
		if err := c.createOnShard(ctx, t, sh, parts, now); err != nil {
			return nil, fmt.Errorf("creating %s on shard %q (nothing is visible on the coordinator yet; run the same command again once the shard answers): %w", t, sh.Name, err)
		}
	}
	for p, name := range t.Placement {
		if _, ok := byName[name]; !ok {
			return nil, fmt.Errorf("partition %d of %s is placed on shard %q, which is no longer recorded", p, t, name)
		}
	}
	if err := c.attach(ctx, t); err != nil {
		return nil, err
	}
	t.Ready = true
	c.setDatabaseDefaults(ctx)
	return t, nil
}

// record inserts the table and its placement, or reads them when a
// previous run recorded them with the same spec.
func (c *Coordinator) record(ctx context.Context, s TableSpec, shards []Shard) (*Table, error) {
	spec, err := json.Marshal(s.Series)
	if err != nil {
		return nil, err
	}
	key := s.Series.Schema + "." + s.Series.Name
	err = pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, catalog.LockKey, key); err != nil {
			return err
		}
		var old []byte
		var oldCol string
		var oldN int
		var dropping bool
		err := tx.QueryRow(ctx, `SELECT spec, shard_column, partitions, dropping FROM pgts.sharded_table WHERE table_schema = $1 AND table_name = $2`,
			s.Series.Schema, s.Series.Name).Scan(&old, &oldCol, &oldN, &dropping)
		if err == nil && dropping {
			return &pg.UsageError{Err: fmt.Errorf("sharded table %s is being dropped; finish with pgts table drop %s --yes, then create it", key, key)}
		}
		if err == nil {
			var was partition.CreateSpec
			if err := json.Unmarshal(old, &was); err != nil {
				return err
			}
			again, _ := json.Marshal(was)
			if string(again) != string(spec) || oldCol != s.ShardColumn || oldN != s.Partitions {
				return &pg.UsageError{Err: fmt.Errorf("sharded table %s was first created with other options (shard column %s, %d partitions); drop it or repeat those options", key, oldCol, oldN)}
			}
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, pg.QuoteQualified(s.Series.Schema, s.Series.Name)).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return &pg.UsageError{Err: fmt.Errorf("table %s already exists on the coordinator", key)}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO pgts.sharded_table (table_schema, table_name, shard_column, partitions, spec)
			VALUES ($1, $2, $3, $4, $5)`, s.Series.Schema, s.Series.Name, s.ShardColumn, s.Partitions, spec); err != nil {
			return err
		}
		for p := 0; p < s.Partitions; p++ {
			if _, err := tx.Exec(ctx, `INSERT INTO pgts.shard_placement (table_schema, table_name, partition, shard, remote_name)
				VALUES ($1, $2, $3, $4, $5)`, s.Series.Schema, s.Series.Name, p, shards[p%len(shards)].Name, PartitionName(s.Series.Name, p)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c.Table(ctx, key)
}

// ErrNotSharded is returned by Table for a table that is not sharded.
var ErrNotSharded = errors.New("not a sharded table")

// Table reads a sharded table's record and placement; name may be
// schema-qualified. A table that is not sharded gives ErrNotSharded.
func (c *Coordinator) Table(ctx context.Context, name string) (*Table, error) {
	schema, rel, err := pg.SplitQualified(name)
	if err != nil {
		return nil, err
	}
	var present bool
	if err := c.pool.QueryRow(ctx, `SELECT to_regclass('pgts.sharded_table') IS NOT NULL`).Scan(&present); err != nil {
		return nil, err
	}
	if !present {
		return nil, fmt.Errorf("%q: %w", name, ErrNotSharded)
	}
	t := &Table{Name: rel}
	var spec []byte
	// dropping through to_jsonb: readable before migration 5
	err = c.pool.QueryRow(ctx, `SELECT table_schema, shard_column, partitions, spec, ready, coalesce((to_jsonb(st) ->> 'dropping')::boolean, false)
		FROM pgts.sharded_table st
		WHERE table_name = $1 AND table_schema = coalesce(nullif($2, ''), (SELECT n FROM unnest(current_schemas(false)) n
			WHERE EXISTS (SELECT 1 FROM pgts.sharded_table WHERE table_schema = n AND table_name = $1) LIMIT 1))`,
		rel, schema).Scan(&t.Schema, &t.ShardColumn, &t.Partitions, &spec, &t.Ready, &t.Dropping)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%q: %w", name, ErrNotSharded)
	}
	if err != nil {
		return nil, fmt.Errorf("reading sharded table %q: %w", name, err)
	}
	if err := json.Unmarshal(spec, &t.Spec); err != nil {
		return nil, fmt.Errorf("sharded table %q: %w", name, err)
	}
	placed, err := c.placements(ctx, `SELECT partition, shard FROM pgts.shard_placement
		WHERE table_schema = $1 AND table_name = $2 ORDER BY partition`, t.Schema, t.Name)
	if err != nil {
		return nil, err
	}
	t.Placement = make([]string, t.Partitions)
	for _, p := range placed {
		if p.part >= 0 && p.part < t.Partitions {
			t.Placement[p.part] = p.shard
		}
	}
	if t.Dropping {
		return t, nil // partitions already dropped have no placement ("")
	}
	if len(placed) != t.Partitions {
		return nil, fmt.Errorf("sharded table %s: %d partitions placed of %d", t, len(t.Placement), t.Partitions)
	}
	return t, nil
}

type placement struct {
	part  int
	shard string
}

// placements runs sql, which selects a partition number and a shard name,
// on the coordinator.
func (c *Coordinator) placements(ctx context.Context, sql string, args ...any) ([]placement, error) {
	rows, err := c.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (placement, error) {
		var p placement
		err := r.Scan(&p.part, &p.shard)
		return p, err
	})
}

// Tables lists the sharded tables, ready or not.
func (c *Coordinator) Tables(ctx context.Context) ([]*Table, error) {
	var present bool
	if err := c.pool.QueryRow(ctx, `SELECT to_regclass('pgts.sharded_table') IS NOT NULL`).Scan(&present); err != nil || !present {
		return nil, err
	}
	rows, err := c.pool.Query(ctx, `SELECT table_schema || '.' || table_name FROM pgts.sharded_table ORDER BY 1`)
	if err != nil {
		return nil, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	var out []*Table
	for _, n := range names {
		t, err := c.Table(ctx, pg.QuoteQualified(splitDot(n)))
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func splitDot(s string) (string, string) {
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			return s[:i], s[i+1:]
		}
	}
	return "", s
}

// openShard connects to a shard with a small pool.
func openShard(ctx context.Context, sh Shard, conns int32) (*pgxpool.Pool, error) {
	pool, err := pg.NewPool(ctx, sh.ConnString(), conns)
	if err != nil {
		return nil, fmt.Errorf("connecting to shard %q (%s): %w", sh.Name, sh.Address(), err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connecting to shard %q (%s): %w", sh.Name, sh.Address(), err)
	}
	return pool, nil
}

// createOnShard makes partitions parts of t on shard sh as series tables
// and records them in the shard's catalog; those that exist are kept.
func (c *Coordinator) createOnShard(ctx context.Context, t *Table, sh Shard, parts []int, now func() time.Time) error {
	pool, err := openShard(ctx, sh, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := catalog.Migrate(ctx, pool); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pg.QuoteIdent(t.Schema)); err != nil {
		return err
	}
	m := partition.NewManager(pool, c.log, now)
	for _, p := range parts {
		spec := t.Spec
		spec.Schema, spec.Name = t.Schema, PartitionName(t.Name, p)
		var member bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pgts.shard_member WHERE table_schema = $1 AND table_name = $2)`,
			spec.Schema, spec.Name).Scan(&member); err != nil {
			return err
		}
		if _, err := m.Table(ctx, pg.QuoteQualified(spec.Schema, spec.Name)); err == nil {
			if !member {
				// made by a run that stopped before recording it
				c.log.Info("partition already on its shard", "shard", sh.Name, "table", spec.Schema+"."+spec.Name)
			}
		} else {
			var nst *partition.NotSeriesTableError
			if !errors.As(err, &nst) {
				return err
			}
			if _, err := m.Create(ctx, spec); err != nil {
				return err
			}
		}
		if _, err := pool.Exec(ctx, `INSERT INTO pgts.shard_member (table_schema, table_name, parent_name, shard_column, modulus, remainder)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`, spec.Schema, spec.Name, t.Name, t.ShardColumn, t.Partitions, p); err != nil {
			return err
		}
	}
	return nil
}

// attach makes the coordinator's parent, its foreign partitions and the
// bucket function, and marks the table ready, in one transaction.
func (c *Coordinator) attach(ctx context.Context, t *Table) error {
	cols, err := partition.ColumnList(t.Spec.Columns)
	if err != nil {
		return err
	}
	key := t.Schema + "." + t.Name
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, catalog.LockKey, key); err != nil {
			return err
		}
		var ready bool
		if err := tx.QueryRow(ctx, `SELECT ready FROM pgts.sharded_table WHERE table_schema = $1 AND table_name = $2`, t.Schema, t.Name).Scan(&ready); err != nil {
			return err
		}
		if ready {
			return nil
		}
		if _, err := tx.Exec(ctx, "CREATE TABLE "+t.Qualified()+" ("+cols+") PARTITION BY HASH ("+pg.QuoteIdent(t.ShardColumn)+")"); err != nil {
			return fmt.Errorf("creating %s on the coordinator: %w", t, err)
		}
		for p, shardName := range t.Placement {
			name := PartitionName(t.Name, p)
			stmt := fmt.Sprintf("CREATE FOREIGN TABLE %s PARTITION OF %s FOR VALUES WITH (MODULUS %d, REMAINDER %d) SERVER %s OPTIONS (schema_name %s, table_name %s)",
				pg.QuoteQualified(t.Schema, name), t.Qualified(), t.Partitions, p, pg.QuoteIdent(ServerName(shardName)),
				pg.QuoteLiteral(t.Schema), pg.QuoteLiteral(name))
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("attaching partition %d of %s (shard %q): %w", p, t, shardName, err)
			}
		}
		if err := createBucketsFunction(ctx, tx, t); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE pgts.sharded_table SET ready = true WHERE table_schema = $1 AND table_name = $2`, t.Schema, t.Name)
		return err
	})
}

// setDatabaseDefaults turns on, for new sessions of the coordinator's
// database, the planner settings that push aggregates down to the shards
// and scan the shards concurrently. Without the right to ALTER DATABASE
// it logs what to run.
func (c *Coordinator) setDatabaseDefaults(ctx context.Context) {
	for _, set := range []string{"enable_partitionwise_aggregate = on", "enable_partitionwise_join = on", "enable_async_append = on"} {
		var db string
		if err := c.pool.QueryRow(ctx, `SELECT current_database()`).Scan(&db); err != nil {
			c.log.Warn("reading the database name", "err", err)
			return
		}
		if _, err := c.pool.Exec(ctx, "ALTER DATABASE "+pg.QuoteIdent(db)+" SET "+set); err != nil {
			c.log.Warn("could not set a planner default for the coordinator's database; set it yourself", "setting", set, "err", err)
		}
	}
}
