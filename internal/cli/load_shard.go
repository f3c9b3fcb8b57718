package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/shard"
)

// runShardedLoad loads into a sharded table: rows go straight to the
// shards' partitions (shard.Coordinator.Load), with load's flags,
// rejects, summary and exit statuses.
func runShardedLoad(ctx context.Context, a *app, f loadFlags, cfg copyload.Config, pool *pgxpool.Pool, st *shard.Table, files []string) error {
	c := shard.New(pool, a.log)
	lcfg := shard.LoadConfig{Logger: a.log, Now: time.Now}
	var inputs []shard.Input
	var closers []io.Closer
	defer func() {
		for _, cl := range closers {
			cl.Close()
		}
	}()
	if f.generate != "" {
		g, err := f.gen.build(f.generate)
		if err != nil {
			return err
		}
		in, stop, err := shard.GeneratorInput(ctx, f.generate, g)
		if err != nil {
			return err
		}
		defer stop()
		inputs = append(inputs, in)
		for _, col := range g.Columns() {
			lcfg.Columns = append(lcfg.Columns, col.Name)
		}
		cfg.Fingerprint = "generator " + f.generate
	} else {
		ropts, err := readerOptions(f)
		if err != nil {
			return err
		}
		zones, err := copyload.SessionZones(ctx, pool, f.timezone)
		if err != nil {
			return err
		}
		lcfg.Zones = zones
		var fsInputs []copyload.Input
		for _, name := range files {
			rc, info, rd, err := openInput(a, name, ropts)
			if rc != nil {
				closers = append(closers, rc)
			}
			if err != nil {
				return err
			}
			inputs = append(inputs, shard.Input{Name: info.Name, Reader: rd, Raw: info.ReaderAt()})
			fsInputs = append(fsInputs, copyload.Input{Name: info.Name, Reader: rd})
		}
		// the coordinator's parent has the columns of every partition
		parent, err := copyload.LookupTarget(ctx, pool, partition.NewManager(pool, a.log, time.Now), st.Qualified())
		if err != nil {
			return err
		}
		idx, err := mapColumns(parent, f, fsInputs)
		if err != nil {
			return err
		}
		for _, i := range idx {
			lcfg.Columns = append(lcfg.Columns, parent.Columns[i].Name)
		}
		cfg.Fingerprint = fmt.Sprintf("format=%v delimiter=%q quote=%q escape=%q null=%q header=%v strict=%v timezone=%q",
			ropts.Format, ropts.Delimiter, ropts.Quote, ropts.Escape, ropts.Null, ropts.Header, ropts.Strict, zones.SessionZone())
	}
	rejects, err := newRejectSinks(a, f, files)
	if err != nil {
		return err
	}
	defer rejects.Close()
	cfg.Rejects = rejects
	cfg.Logger = a.log
	lcfg.Load = cfg
	a.log.Info("loading into the shards", "table", st.String(), "partitions", st.Partitions, "workers_per_partition", cfg.Workers)
	sum, runErr := c.Load(ctx, st.Qualified(), inputs, lcfg)
	if runErr == nil || sum.Read > 0 || sum.Skipped > 0 || errors.Is(runErr, context.Canceled) {
		printShardedSummary(a, st, cfg, sum)
	}
	return loadOutcome(a, f, sum, sum.Rejected, runErr)
}

func printShardedSummary(a *app, st *shard.Table, cfg copyload.Config, s shard.LoadSummary) {
	state := "loaded"
	if s.Interrupted {
		state = "interrupted; committed"
	} else if !s.Complete {
		state = "failed; committed"
	}
	fmt.Fprintf(a.env.Stderr, "%s %s %s into %s in %s (%s rows/s)\n", state, commas(s.Loaded), plural(s.Loaded, "row", "rows"), st, s.Elapsed.Round(time.Millisecond), commas(int64(s.RowsPerSec)))
	fmt.Fprintf(a.env.Stderr, "  read %s = loaded %s + rejected %s + already loaded %s + not loaded %s\n",
		commas(s.Read), commas(s.Loaded), commas(s.Rejected), commas(s.Skipped), commas(s.NotLoaded))
	if cfg.OnConflict != copyload.ConflictReject {
		fmt.Fprintf(a.env.Stderr, "  on conflict %s: loaded %s = inserted %s + updated %s + stored rows kept %s\n",
			cfg.OnConflict, commas(s.Loaded), commas(s.Inserted), commas(s.Updated), commas(s.Kept))
	}
	names := make([]string, 0, len(s.RowsByShard))
	for n := range s.RowsByShard {
		names = append(names, n)
	}
	sort.Strings(names)
	per := make([]string, len(names))
	for i, n := range names {
		per[i] = n + " " + commas(s.RowsByShard[n])
	}
	fmt.Fprintf(a.env.Stderr, "  %s COPY straight into %s on %s (%s), %s each, %s (%s skipped), %s written (%d created), %s sent, %s\n",
		s.Format, count(st.Partitions, "partition", "partitions"), count(len(names), "shard", "shards"), strings.Join(per, ", "),
		count(cfg.Workers, "worker", "workers"), count(s.Batches, "batch", "batches"), commas(s.SkippedB),
		count(s.Partitions, "time partition", "time partitions"), s.Created, humanBytes(s.Bytes), count(s.Retries, "retry", "retries"))
}
