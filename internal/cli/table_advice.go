package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/pflag"

	"github.com/pgts/pgts/internal/embedded"
)

// Partition-length advice: a series table loads at a flat rate while the
// indexes of the partition being written fit in the server's cache; an
// index led by another column than time (e.g. (device, time)) has one
// insertion point per device, so once devices × one 8 kB leaf page
// outgrow the cache, every row may read and later write back a page (the
// loading study's collapse: docs/benchmarks.md, "Loading under a memory
// limit").
const (
	// adviceEntryBytes is the size of one entry of a (device, time)
	// btree filled in random order: 367 MiB for 10 M rows measured.
	adviceEntryBytes = 40
	// advicePageBytes is one leaf page: the hot set of one device.
	advicePageBytes = 8192
)

// adviceLength is a partition length advice may name.
type adviceLength struct {
	d    time.Duration
	text string
}

// adviceLengths are the partition lengths advice chooses from, longest
// first.
var adviceLengths = []adviceLength{{7 * 24 * time.Hour, "1 week"}, {24 * time.Hour, "1 day"}, {12 * time.Hour, "12 hours"}, {6 * time.Hour, "6 hours"},
	{3 * time.Hour, "3 hours"}, {2 * time.Hour, "2 hours"}, {time.Hour, "1 hour"}}

// shortLengths are proposed, never chosen, when even 1 hour outgrows the
// cache: they make many partitions a day, a choice for the user.
var shortLengths = []adviceLength{{30 * time.Minute, "30 minutes"}, {15 * time.Minute, "15 minutes"},
	{10 * time.Minute, "10 minutes"}, {5 * time.Minute, "5 minutes"}, {time.Minute, "1 minute"}}

// partitionAdvice returns the longest partition length (as a PostgreSQL
// interval, "" when memory sets no limit) whose indexes led by another
// column than time stay within the cache budget, and why; warn when even
// 1 hour outgrows the budget (the reason then proposes a shorter length
// that fits, when one does). rowsPerSec is
// the expected rows per second of data time, devices the distinct values
// of those indexes' leading column (0: unknown, every row its own),
// budget the cache in bytes (the server's shared_buffers), nonTime the
// number of such indexes. The rule: with devices × 8 kB × nonTime within
// the budget any length fits (each device's newest leaf page stays
// cached); else the partition's entries of those indexes, rows/s × length
// × 40 B × nonTime, must fit the budget.
func partitionAdvice(rowsPerSec float64, devices int64, budget int64, nonTime int) (interval, why string, warn bool) {
	if nonTime == 0 || rowsPerSec <= 0 {
		return "", "no index led by another column than time: any partition length loads at a flat rate", false
	}
	hot := float64(devices) * advicePageBytes * float64(nonTime)
	if devices > 0 && hot <= float64(budget) {
		return "", fmt.Sprintf("%d devices × 8 kB × %d index(es) = %s fit the %s cache: any partition length loads at a flat rate",
			devices, nonTime, mib(hot), mib(float64(budget))), false
	}
	maxLen := time.Duration(float64(budget) / (rowsPerSec * adviceEntryBytes * float64(nonTime)) * float64(time.Second))
	for _, l := range adviceLengths {
		if l.d <= maxLen {
			return l.text, fmt.Sprintf("one partition's %d index(es) led by another column than time take %.0f rows/s × %s × %d B = %s, within the %s cache",
				nonTime, rowsPerSec, l.text, adviceEntryBytes*nonTime, mib(rowsPerSec*l.d.Seconds()*adviceEntryBytes*float64(nonTime)), mib(float64(budget))), false
		}
	}
	last := adviceLengths[len(adviceLengths)-1]
	why = fmt.Sprintf("even 1 hour's %s of index entries outgrow the %s cache (%.0f rows/s): expect loading to slow down",
		mib(rowsPerSec*last.d.Seconds()*adviceEntryBytes*float64(nonTime)), mib(float64(budget)), rowsPerSec)
	for _, l := range shortLengths {
		if l.d <= maxLen {
			return last.text, why + fmt.Sprintf("; --interval '%s' fits (%s of index entries, %d partitions a day), or give the server more memory or drop an index",
				l.text, mib(rowsPerSec*l.d.Seconds()*adviceEntryBytes*float64(nonTime)), int(24*time.Hour/l.d)), true
		}
	}
	return last.text, why + "; even 1 minute outgrows it: give the server more memory or drop an index", true
}

func mib(b float64) string { return fmt.Sprintf("%.0f MiB", b/(1<<20)) }

// nonTimeIndexes counts the --index-on column lists not led by the time
// column.
func nonTimeIndexes(indexOn []string, timeCol string) int {
	n := 0
	for _, cols := range indexOn {
		first, _, _ := strings.Cut(cols, ",")
		fields := strings.Fields(first)
		if len(fields) == 0 {
			continue
		}
		col := fields[0]
		if unq, ok := strings.CutPrefix(col, `"`); ok {
			col = strings.TrimSuffix(unq, `"`) // quoted: exact
		} else {
			col = strings.ToLower(col)
		}
		if col != timeCol {
			n++
		}
	}
	return n
}

// adviceFlags are table create's inputs to partitionAdvice.
type adviceFlags struct {
	rowsPerSec float64
	devices    int64
	memory     string
}

func (e *adviceFlags) register(f *pflag.FlagSet) {
	f.Float64Var(&e.rowsPerSec, "expect-rows-per-second", 0, "expected rows per second of data time: choose (or check) --interval so the indexes of the partition being loaded fit the server's cache")
	f.Int64Var(&e.devices, "expect-devices", 0, "with --expect-rows-per-second: distinct values of the --index-on indexes' first column (0: unknown)")
	f.StringVar(&e.memory, "server-memory", "", "with --expect-rows-per-second: the server's memory, a quarter of it the cache budget (default: the server's shared_buffers as the budget)")
}

// apply returns the partition length to use: interval when no rate is
// expected or when the user gave --interval (with a warning when it is
// longer than advised), else the advice (the default when memory sets no
// limit). The reason is logged.
func (e *adviceFlags) apply(ctx context.Context, a *app, pool *pgxpool.Pool, interval string, given bool, indexOn []string, timeCol string) (string, error) {
	if e.rowsPerSec == 0 {
		if e.devices != 0 || e.memory != "" {
			return "", usagef("--expect-devices and --server-memory go with --expect-rows-per-second")
		}
		return interval, nil
	}
	if e.rowsPerSec < 0 || e.devices < 0 {
		return "", usagef("--expect-rows-per-second and --expect-devices must be positive")
	}
	var budget int64
	if e.memory != "" {
		n, err := embedded.ParseSize(e.memory)
		if err != nil {
			return "", usagef("--server-memory %q: %v", e.memory, err)
		}
		budget = n / 4
	} else if err := pool.QueryRow(ctx, "SELECT pg_size_bytes(current_setting('shared_buffers'))").Scan(&budget); err != nil {
		return "", fmt.Errorf("reading shared_buffers: %w", err)
	}
	advice, why, warn := partitionAdvice(e.rowsPerSec, e.devices, budget, nonTimeIndexes(indexOn, timeCol))
	switch {
	case warn && !given:
		a.log.Warn("partition length: "+why, "interval", advice)
		return advice, nil
	case warn:
		a.log.Warn("partition length: "+why, "interval", interval)
		return interval, nil
	case advice == "":
		a.log.Info("partition length: "+why, "interval", interval)
		return interval, nil
	case !given:
		a.log.Info("partition length chosen: "+why, "interval", advice)
		return advice, nil
	}
	var longer bool
	if err := pool.QueryRow(ctx, "SELECT $1::text::interval > $2::text::interval", interval, advice).Scan(&longer); err != nil {
		return "", usagef("--interval %q: %v", interval, err)
	}
	if longer {
		a.log.Warn("partition length longer than advised: "+why, "interval", interval, "advised", advice)
	}
	return interval, nil
}
