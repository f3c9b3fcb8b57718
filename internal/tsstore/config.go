package tsstore

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/rra"
)

// Config tunes a Store. Build one with DefaultConfig and change what you
// need; Open validates it.
type Config struct {
	// Rules give series their round-robin archives: the first rule whose
	// pattern matches a series name wins. A series matching no rule is kept
	// raw only when Raw is set, and otherwise counted as unmatched and
	// dropped.
	Rules []rra.Rule
	// Raw keeps every accepted point in a series table as well; nil keeps
	// no raw points.
	Raw *RawConfig
	// MaxMemory is the budget, in bytes, of the pending data: the
	// write-back cache (buffered raw points, closed slots, pending
	// updates). Add blocks and TryAdd refuses while accepting a point
	// could exceed it. The series (keys, index, consolidation state) are
	// accounted apart and never refused for memory; when they and the
	// pending data together exceed MaxMemory after a flush, the states of
	// idle series are evicted (evict.go).
	MaxMemory int64
	// FlushInterval is the time between two flushes of the write-back
	// cache; a flush also starts as soon as the pending data uses 80% of
	// MaxMemory.
	FlushInterval time.Duration
	// FlushWorkers is the number of connections a flush writes on at once.
	FlushWorkers int
	// FutureTolerance is how far past the clock a point's time may be:
	// later points are refused whole (neither archived nor kept raw),
	// counted and logged at most once per flush interval, so that a bogus
	// timestamp can never damage a series.
	FutureTolerance time.Duration
	// MaxSeries limits the number of series (0: no limit); points of new
	// series beyond it are refused and counted.
	MaxSeries int
	// Now is the clock: archive selection in Fetch and the raw table's
	// accepted time window depend on it.
	Now func() time.Time
	// Logger receives flush failures (warnings) and the duration of each
	// flush's phases (debug); nil discards them.
	Logger *slog.Logger
	// Registerer receives the store's metrics; nil registers none.
	Registerer prometheus.Registerer
}

// RawConfig says where raw points go: a pgts series table with the columns
// time timestamptz, series_id bigint and value float8, created when missing;
// or a sharded table (package shard) with those columns sharded by
// series_id, made beforehand with pgts table create --shard-by series_id,
// whose partitions the points are written into on the shards.
type RawConfig struct {
	// Table is the series table's name, optionally schema-qualified.
	Table string
	// Interval is the partition interval of a table created by Open.
	Interval partition.Interval
	// Retention of a table created by Open; nil keeps everything.
	Retention *partition.Interval
	// AcceptPast bounds how old a raw point may be: one dated before now
	// minus it is not kept raw (counted as RawRefused, logged once per
	// flush), so that a timestamp of 0 or Influx seconds sent without a
	// precision never make a 1970 partition. A table created by Open gets
	// it as its accepted window (pgts table create --accept-past). nil:
	// the retention, or DefaultRawAcceptPast without one.
	AcceptPast *partition.Interval
	// Retry bounds the retries of each batch of a raw write (zero: the
	// loader's default, about a minute); a write that still fails is kept
	// and rerun at the next flush.
	Retry copyload.RetryPolicy
	// Step is the resolution at which Fetch returns the raw points of a
	// series that has no archives (those matching no rule); 0 means
	// DefaultRawStep. Series with archives use their rule's step.
	Step time.Duration
}

// DefaultRawAcceptPast is how old a raw point may be when RawConfig has
// neither AcceptPast nor Retention: a year, the longest archive of the
// usual Graphite schemas.
var DefaultRawAcceptPast = partition.Interval{Months: 12}

// acceptPast is the raw points' accepted past.
func (r *RawConfig) acceptPast() partition.Interval {
	switch {
	case r.AcceptPast != nil:
		return *r.AcceptPast
	case r.Retention != nil:
		return *r.Retention
	}
	return DefaultRawAcceptPast
}

// DefaultRawStep is the resolution Fetch gives the raw points of series
// without archives when RawConfig.Step is 0.
const DefaultRawStep = 10 * time.Second

// DefaultConfig returns a config with no rules, no raw points, a 512 MiB
// budget, a flush every 10 s on 2 connections, a future tolerance of 10
// minutes, no cardinality limit, the system clock and no logger or metrics.
func DefaultConfig() Config {
	return Config{
		MaxMemory:       512 << 20,
		FlushInterval:   10 * time.Second,
		FlushWorkers:    2,
		FutureTolerance: DefaultFutureTolerance,
		Now:             time.Now,
	}
}

// DefaultFutureTolerance is how far in the future a point may be by
// default.
const DefaultFutureTolerance = 10 * time.Minute

// minMemory is the smallest budget accepted: below it a handful of series
// would fill the cache.
const minMemory = 64 << 10

// Validate reports what is wrong with c, or nil.
func (c *Config) Validate() error {
	var errs []error
	if c.MaxMemory < minMemory {
		errs = append(errs, fmt.Errorf("max memory %d bytes is below the minimum of %d", c.MaxMemory, minMemory))
	}
	if c.FlushInterval <= 0 {
		errs = append(errs, fmt.Errorf("flush interval %v is not positive", c.FlushInterval))
	}
	if c.FlushWorkers < 1 {
		errs = append(errs, fmt.Errorf("flush workers %d: at least 1 is needed", c.FlushWorkers))
	}
	if c.FutureTolerance < 0 {
		errs = append(errs, fmt.Errorf("future tolerance %v is negative", c.FutureTolerance))
	}
	if c.MaxSeries < 0 {
		errs = append(errs, fmt.Errorf("max series %d is negative", c.MaxSeries))
	}
	if c.Now == nil {
		errs = append(errs, errors.New("no clock (Now is nil)"))
	}
	if err := checkRules(c.Rules); err != nil {
		errs = append(errs, err)
	}
	if r := c.Raw; r != nil {
		if _, name, err := pg.SplitQualified(r.Table); err != nil {
			errs = append(errs, fmt.Errorf("raw table: %w", err))
		} else if err := pg.CheckIdent("raw table", name); err != nil {
			errs = append(errs, err)
		}
		if err := r.Interval.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("raw table interval: %w", err))
		}
		if r.Retention != nil {
			if err := r.Retention.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("raw table retention: %w", err))
			}
		}
		if r.Step < 0 || r.Step%time.Second != 0 {
			errs = append(errs, fmt.Errorf("raw step %v is not a whole number of seconds", r.Step))
		}
	}
	return errors.Join(errs...)
}

// checkRules makes sure every rule has a pattern and a valid schema.
func checkRules(rules []rra.Rule) error {
	for i := range rules {
		r := &rules[i]
		if r.Pattern == nil {
			return fmt.Errorf("rule %d has no pattern", i+1)
		}
		if _, err := r.Schema(); err != nil {
			return fmt.Errorf("rule %d (%q): %w", i+1, r.Pattern, err)
		}
	}
	return nil
}

func (r *RawConfig) step() time.Duration {
	if r.Step > 0 {
		return r.Step
	}
	return DefaultRawStep
}
