package cli

import (
	"bufio"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgts/pgts/internal/gen"
)

// genFlags are the generator options shared by `pgts gen` and
// `pgts load --generate`.
type genFlags struct {
	seed    uint64
	rows    int64
	batches int64
	width   int
	devices int
	start   string
}

// genFlagNames are the flags register defines.
var genFlagNames = []string{"seed", "rows", "batches", "width", "devices", "start"}

func (g *genFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.Uint64Var(&g.seed, "seed", 1, "generator seed (same seed, same rows)")
	f.Int64Var(&g.rows, "rows", 0, "rows to generate (default: the generator's; for conditions, --batches × 10,000)")
	f.Int64Var(&g.batches, "batches", 0, "conditions: batches of 10,000 rows, 60 s of simulated time each (default 100)")
	f.IntVar(&g.width, "width", 0, "conditions: number of data columns (default 5)")
	f.IntVar(&g.devices, "devices", 0, "conditions: number of devices (default 1000)")
	f.StringVar(&g.start, "start", "", "time of the first row, e.g. 2024-01-01 or 2024-01-01T00:00:00Z (default: the generator's own)")
}

func genKinds() []string { return gen.Kinds() }

func (g *genFlags) build(kind string) (gen.Generator, error) {
	opts, err := gen.DefaultOptions(kind)
	if err != nil {
		return nil, usagef("%v (choose one of %v)", err, gen.Kinds())
	}
	opts.Seed = g.seed
	if g.rows != 0 {
		opts.Rows = g.rows
	}
	if g.batches != 0 {
		opts.Batches = g.batches
	}
	if g.width != 0 {
		opts.Width = g.width
	}
	if g.devices != 0 {
		opts.Devices = g.devices
	}
	if g.start != "" {
		t, err := parseStart(g.start)
		if err != nil {
			return nil, err
		}
		opts.Start = t
	}
	if err := opts.Validate(); err != nil {
		return nil, usagef("%v", err)
	}
	return gen.New(kind, opts)
}

func parseStart(s string) (time.Time, error) {
	if s == "now" {
		return time.Now().UTC().Truncate(time.Second), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, usagef("--start %q: use a date (2024-01-01), an RFC 3339 time, or now", s)
}

func newGenCmd(a *app) *cobra.Command {
	var g genFlags
	cmd := &cobra.Command{
		Use:   "gen KIND",
		Short: "Write generated rows to stdout (PostgreSQL COPY text format)",
		Long: `Write deterministic generated rows to stdout, for piping into psql's COPY or
other tools. The same rows are available in-process, without the text round
trip, with pgts load --generate.

Kinds:
  conditions  the table of the Postgres-vs-TimescaleDB loading study: time,
              device, data1..dataW; batches of 10,000 rows, 60 s of simulated
              time per batch, exactly as the study's C generator made them
  iibench     the insert benchmark's purchases table
  events      audit events with a ~2 kB jsonb document`,
		Example: `  pgts gen conditions --batches 10 | psql -c "COPY conditions FROM STDIN"
  pgts gen events --rows 1000 --seed 7 > events.tsv`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			gg, err := g.build(args[0])
			if err != nil {
				return err
			}
			w := bufio.NewWriterSize(a.env.Stdout, 1<<20)
			if err := gen.WriteText(cmd.Context(), w, gg); err != nil {
				return fmt.Errorf("writing rows: %w", err)
			}
			return w.Flush()
		},
	}
	g.register(cmd)
	return cmd
}
