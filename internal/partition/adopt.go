package partition

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/pg"
)

// Adopting: `table create NAME --like NAME` on a table that is already
// partitioned by range (restored from a table-only dump, or made by hand)
// registers it as it is, rows and partitions included, when each partition
// covers exactly one interval as pgts aligns it; pgts then premakes the
// partitions after them and applies retention as for its own. A DEFAULT
// partition is adopted when it is named as pgts names its own
// (NAME_default); its rows wait to be moved like any writer's.

// partitionedBy returns the partitioning strategy of qname ('r', 'l', 'h')
// and its single key column ("" for an expression or a multi-column key),
// or strategy 0 when qname is not partitioned.
func partitionedBy(ctx context.Context, tx pgx.Tx, qname string) (strategy byte, key string, err error) {
	var strat, col *string
	err = tx.QueryRow(ctx, `SELECT p.partstrat::text, a.attname::text FROM pg_class c
		LEFT JOIN pg_partitioned_table p ON p.partrelid = c.oid
		LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = p.partattrs[0] AND p.partnatts = 1
		WHERE c.oid = to_regclass($1)`, qname).Scan(&strat, &col)
	if err != nil {
		return 0, "", fmt.Errorf("reading how %s is partitioned: %w", qname, err)
	}
	if strat == nil || *strat == "" {
		return 0, "", nil
	}
	if col != nil {
		key = *col
	}
	return (*strat)[0], key, nil
}

// checkAdoptable says whether a partitioned table can be adopted as it is.
func checkAdoptable(s CreateSpec, qname string, strategy byte, key string) error {
	if strategy != 'r' {
		return fmt.Errorf("table %s is partitioned, but not by range; pgts adopts only tables partitioned by range on their time column", qname)
	}
	if key != s.TimeColumn {
		return fmt.Errorf("table %s is partitioned by range, but not on the time column %q (--time-column names it)", qname, s.TimeColumn)
	}
	return nil
}

// checkAdoptedPartitions checks each existing partition of qname against
// the interval (and the hash split), naming the first that does not fit.
func checkAdoptedPartitions(ctx context.Context, tx pgx.Tx, s CreateSpec, tt TimeType, qname string) error {
	rows, err := tx.Query(ctx, `SELECT c.relname::text, pg_get_expr(c.relpartbound, c.oid), c.relkind::text,
			coalesce(p.partstrat::text, ''), coalesce(a.attname::text, ''),
			(SELECT count(*) FROM pg_inherits h WHERE h.inhparent = c.oid)
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		LEFT JOIN pg_partitioned_table p ON p.partrelid = c.oid
		LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = p.partattrs[0] AND p.partnatts = 1
		WHERE i.inhparent = to_regclass($1) ORDER BY 1`, qname)
	if err != nil {
		return fmt.Errorf("reading the partitions of %s: %w", qname, err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, bound, kind, strat, key string
		var children int64
		if err := rows.Scan(&name, &bound, &kind, &strat, &key, &children); err != nil {
			return err
		}
		if bound == "DEFAULT" {
			if name == DefaultName(s.Name) && kind == "r" {
				continue // pgts' own: its rows wait to be moved into their partitions
			}
			return fmt.Errorf("adopting %s: partition %q is a DEFAULT partition; pgts keeps its own, %q, whose rows it moves into their partitions: rename it to that (ALTER TABLE ... RENAME TO), or move its rows into range partitions and drop it first",
				qname, name, DefaultName(s.Name))
		}
		lo, hi, err := ParseBound(tt, bound)
		if err != nil {
			return fmt.Errorf("adopting %s: partition %q: %w", qname, name, err)
		}
		if blo, bhi, err := Bounds(s.Interval, lo); err != nil || blo != lo || bhi != hi {
			return fmt.Errorf("adopting %s: partition %q covers %s to %s, which is not one --interval %q as pgts aligns it; "+
				"give the interval the partitions were made with", qname, name, FormatMicros(lo), FormatMicros(hi), s.Interval.String())
		}
		switch {
		case s.HashColumn == "" && kind != "r":
			return fmt.Errorf("adopting %s: partition %q is itself partitioned; give its --hash-column and --hash-partitions, or repartition it", qname, name)
		case s.HashColumn != "" && (strat != "h" || key != s.HashColumn || children != int64(s.HashPartitions)):
			return fmt.Errorf("adopting %s: partition %q is not split by hash of %s into %d partitions", qname, name, pg.QuoteIdent(s.HashColumn), s.HashPartitions)
		}
	}
	return rows.Err()
}
