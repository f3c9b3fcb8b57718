package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The timescaledb store of the loading benchmark: conditions made a
// TimescaleDB hypertable. Its chunk interval decides whether loading slows
// down as the index outgrows memory (a 7-day chunk holds a whole run, as a
// plain table does), so a scenario may run it with several intervals, each
// a store of its own named for it:
//
//	timescaledb       TimescaleDB's default chunk interval (7 days)
//	timescaledb-1h    chunk_time_interval => '3600 seconds'
//	timescaledb-1d    chunk_time_interval => '86400 seconds'

// TimescaleHint says how to get TimescaleDB when the server lacks it.
const TimescaleHint = "to get it, install TimescaleDB 2.x for this PostgreSQL major version " +
	"(packages: https://docs.timescale.com/self-hosted/latest/install/; or build github.com/timescale/timescaledb), " +
	"add timescaledb to shared_preload_libraries and restart the server"

// isTimescaleStore reports whether a store name is a timescaledb store.
func isTimescaleStore(store string) bool {
	_, ok := TimescaleChunkOf(store)
	return ok
}

// TimescaleChunkOf returns the chunk interval a timescaledb store name
// stands for (0: TimescaleDB's default) and whether the name is one.
func TimescaleChunkOf(store string) (time.Duration, bool) {
	if store == "timescaledb" {
		return 0, true
	}
	rest, ok := strings.CutPrefix(store, "timescaledb-")
	if !ok || len(rest) < 2 {
		return 0, false
	}
	unit := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}[rest[len(rest)-1]]
	n, err := strconv.Atoi(rest[:len(rest)-1])
	if unit == 0 || err != nil || n < 1 {
		return 0, false
	}
	return time.Duration(n) * unit, true
}

// TimescaleStoreName names the timescaledb store with chunk interval d:
// "timescaledb" for 0, else the interval in its largest whole unit
// ("timescaledb-1h", "timescaledb-7d", "timescaledb-90m").
func TimescaleStoreName(d time.Duration) string {
	switch {
	case d == 0:
		return "timescaledb"
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("timescaledb-%dd", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("timescaledb-%dh", d/time.Hour)
	}
	return fmt.Sprintf("timescaledb-%dm", d/time.Minute)
}

// TimescaleStores replaces "timescaledb" in stores by one store per chunk
// interval; without intervals the stores are returned as they are.
func TimescaleStores(stores []string, chunks []time.Duration) []string {
	if len(chunks) == 0 {
		return stores
	}
	var out []string
	for _, st := range stores {
		if st != "timescaledb" {
			out = append(out, st)
			continue
		}
		for _, c := range chunks {
			out = append(out, TimescaleStoreName(c))
		}
	}
	return out
}

// validateTimescaleChunks checks the chunk intervals: whole minutes, at
// least one (0 is the default), none twice, and only with the
// timescaledb store.
func validateTimescaleChunks(stores []string, chunks []time.Duration) error {
	if len(chunks) > 0 && !contains(stores, "timescaledb") {
		return fmt.Errorf("timescaledb chunk intervals given without the timescaledb store")
	}
	seen := map[time.Duration]bool{}
	for _, c := range chunks {
		if c < 0 || (c > 0 && (c < time.Minute || c%time.Minute != 0)) {
			return fmt.Errorf("timescaledb chunk %s: must be a whole number of minutes, at least one", c)
		}
		if seen[c] {
			return fmt.Errorf("timescaledb chunk %s given twice", c)
		}
		seen[c] = true
	}
	return nil
}

// hypertableSQL is the create_hypertable call that makes table a
// hypertable on time with chunk interval chunk (0: TimescaleDB's
// default), without TimescaleDB's default indexes (the scenario makes its
// own, as for every store), and its arguments.
func hypertableSQL(table string, chunk time.Duration) (string, []any) {
	if chunk == 0 {
		return "SELECT create_hypertable($1::regclass, 'time', create_default_indexes => false)", []any{table}
	}
	return "SELECT create_hypertable($1::regclass, 'time', chunk_time_interval => $2::interval, create_default_indexes => false)",
		[]any{table, fmt.Sprintf("%d seconds", int64(chunk/time.Second))}
}

// setupHypertable makes conditions a TimescaleDB hypertable with chunk
// interval chunk (0: the default), through TimescaleDB 2.x's
// create_hypertable; the indexes are the scenario's, as for the other
// stores.
func setupHypertable(ctx context.Context, pool *pgxpool.Pool, cols []string, chunk time.Duration) error {
	if _, err := pool.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS timescaledb"); err != nil {
		return fmt.Errorf("creating extension timescaledb: %w", err)
	}
	if _, err := pool.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (%s)", benchTable, strings.Join(cols, ", "))); err != nil {
		return err
	}
	sql, args := hypertableSQL(benchTable, chunk)
	if _, err := pool.Exec(ctx, sql, args...); err != nil {
		return fmt.Errorf("create_hypertable: %w", err)
	}
	return nil
}
