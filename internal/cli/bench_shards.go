package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/pgts/pgts/internal/bench"
	"github.com/pgts/pgts/internal/embedded"
)

// benchShardFlags are bench load's scale-out flags.
type benchShardFlags struct {
	counts  string
	cores   float64
	rows    int64
	devices int
	parts   int
	workers int
}

func (f *benchShardFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.counts, "shards", "", "scale-out study instead: load into a table sharded over each number of private shard servers, e.g. 1,2,3 (docs/scale-out.md)")
	fl.Float64Var(&f.cores, "shard-cpu", 0.5, "with --shards: CPU cores of each shard server (cgroup quota)")
	fl.Int64Var(&f.rows, "shard-rows", 1_000_000, "with --shards: conditions rows per run")
	fl.IntVar(&f.devices, "shard-devices", 1000, "with --shards: conditions devices (shard keys)")
	fl.IntVar(&f.parts, "shard-partitions", 4, "with --shards: hash partitions per shard server")
	fl.IntVar(&f.workers, "shard-workers", 1, "with --shards: loader connections per partition")
}

// runBenchShards runs bench.RunShards and prints rows/s per shard count.
func runBenchShards(ctx context.Context, a *app, f benchShardFlags, width int) error {
	counts, err := parseInts("shards", f.counts)
	if err != nil {
		return err
	}
	bins, err := embedded.DefaultFinder(a.binDir).Find()
	if err != nil {
		return err
	}
	s := bench.ShardScenario{Counts: counts, Cores: f.cores, Rows: f.rows, Devices: f.devices, Width: width,
		PartsPerSrv: f.parts, Workers: f.workers, Binaries: bins, Logger: a.log}
	if err := s.Validate(); err != nil {
		return usagef("%v", err)
	}
	runs, runErr := bench.RunShards(ctx, s, func(r bench.ShardRun) {
		a.log.Info("run done", "shards", r.Shards, "rows_per_s", int64(r.RowsPerSec), "err", r.Error)
	})
	tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "shards\trows\tseconds\trows/s\tvs 1st\tloader CPU s\tcoordinator CPU s\tshards throttled s\t\n")
	for _, r := range runs {
		ratio := "-"
		if len(runs) > 0 && runs[0].RowsPerSec > 0 {
			ratio = fmt.Sprintf("%.2fx", r.RowsPerSec/runs[0].RowsPerSec)
		}
		fmt.Fprintf(tw, "%d\t%s\t%.1f\t%s\t%s\t%.1f\t%.1f\t%.1f\t\n", r.Shards, commas(r.Rows), r.Seconds, commas(int64(r.RowsPerSec)), ratio, r.LoaderCPU, r.CoordCPU, r.ThrottledSec)
		if r.Error != "" {
			fmt.Fprintf(tw, "\terror: %s\t\t\t\t\t\t\t\n", r.Error)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(a.env.Stdout, "each shard server limited to %g cores (cgroup); %d hash partitions per server, %d loader connection(s) each; command: %s\n",
		f.cores, f.parts, f.workers, strings.Join(os.Args, " "))
	return runErr
}
