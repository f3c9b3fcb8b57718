// Package cli holds pgts' subcommands, one file each. Commands are thin:
// they parse flags, build the components of the packages below, run them
// and print results (stdout) and logs and progress (stderr).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgts/pgts/internal/embedded"
	"github.com/pgts/pgts/internal/pg"
)

// Version is set at build time (-ldflags "-X .../cli.Version=v1.2.3");
// otherwise it comes from the module's build info.
var Version = ""

// Env is what the commands may touch of the outside world, injected so
// tests run commands in-process.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// IsTerminal reports whether stderr is a terminal with a size
	// (progress bars).
	IsTerminal func() bool
}

// OSEnv is the real process environment.
func OSEnv() Env {
	return Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, IsTerminal: stderrIsTerminal}
}

// app carries the global flags and shared services of one invocation.
type app struct {
	env      Env
	log      *slog.Logger
	db       string
	dataDir  string
	binDir   string
	verbose  bool
	quiet    bool
	logLevel slog.LevelVar
	// walMinimal adds embedded.MinimalWAL to the settings of a cluster
	// created by this process (db start --wal-minimal).
	walMinimal bool
	// embedded is the embedded cluster when the command uses it, and
	// embeddedLog its server log's size when the command connected.
	embedded    *embedded.Cluster
	embeddedLog int64
}

// NewRoot builds the command tree.
func NewRoot(env Env) *cobra.Command {
	a := &app{env: env}
	a.log = slog.New(newLogHandler(env.Stderr, &a.logLevel))
	root := &cobra.Command{
		Use:   "pgts",
		Short: "Time series on stock PostgreSQL: self-partitioning tables, fast loading, rollups, metrics, benchmarks",
		Long: `pgts makes stock PostgreSQL (13 or newer, no extension) a time-series store:
tables partitioned by time that manage themselves and accept rows from any SQL
client, bulk loading over parallel binary COPY, rollups kept fresh (continuous
aggregates), query helpers in SQL (pgts.time_bucket, gap filling, first/last),
a metrics daemon with a Graphite render API, sharding over postgres_fdw, and a
benchmark harness.

Every command connects to, in this order: --db, DATABASE_URL, the libpq
variables (PGHOST, PGPORT, PGDATABASE, PGUSER, PGSERVICE, with PGPASSWORD,
PGSSLMODE and ~/.pgpass), or else pgts' own embedded cluster in --data-dir,
started on demand.`,
		Example: `  pgts db start
  pgts table create conditions --columns "time timestamptz not null, device int not null, temp float8" --interval "1 week"
  pgts load conditions --generate conditions --batches 100`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case a.verbose:
				a.logLevel.Set(slog.LevelDebug)
			case a.quiet:
				a.logLevel.Set(slog.LevelWarn)
			}
			return nil
		},
	}
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &pg.UsageError{Err: err} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.db, "db", "", "PostgreSQL connection URL or key=value string (default: DATABASE_URL, PG* variables, else the embedded cluster)")
	pf.StringVar(&a.dataDir, "data-dir", "", "embedded cluster data directory (env PGTS_DATA_DIR; default $XDG_DATA_HOME/pgts or ~/.local/share/pgts, /var/lib/pgts as root)")
	pf.StringVar(&a.binDir, "pg-bindir", "", "directory of the PostgreSQL server binaries for the embedded cluster (default: pg_config, /usr/lib/postgresql/*/bin, PATH)")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "log debugging detail")
	pf.BoolVarP(&a.quiet, "quiet", "q", false, "log only warnings and errors; no progress bar")

	root.AddCommand(newDBCmd(a), newTableCmd(a), newMaintainCmd(a), newRetentionCmd(a), newLoadCmd(a), newGenCmd(a), newBenchCmd(a), newReportCmd(a), newServeCmd(a), newBlastCmd(a), newShardCmd(a), newLoadsCmd(a), newRollupCmd(a))
	for _, c := range root.Commands() {
		c.SetFlagErrorFunc(root.FlagErrorFunc())
	}
	return root
}

func version() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " (" + s.Value[:12] + ")"
		}
	}
	return v + " " + runtime.Version()
}

// dataDirPath resolves the embedded data dir: --data-dir, PGTS_DATA_DIR,
// else one per user (see dataDirPathFor), never one per working directory.
func (a *app) dataDirPath() (string, error) { return a.dataDirPathFor(os.Geteuid() == 0) }

// dataDirPathFor is dataDirPath for root or another user. The per-user
// default is the XDG data directory: $XDG_DATA_HOME/pgts (when absolute),
// else ~/.local/share/pgts. As root without XDG_DATA_HOME it is
// /var/lib/pgts, because the server then runs as postgres, which cannot
// enter /root.
func (a *app) dataDirPathFor(root bool) (string, error) {
	d := a.dataDir
	if d == "" {
		d = a.env.Getenv("PGTS_DATA_DIR")
	}
	if d == "" {
		xdg := a.env.Getenv("XDG_DATA_HOME")
		home := a.env.Getenv("HOME")
		switch {
		case filepath.IsAbs(xdg):
			d = filepath.Join(xdg, "pgts")
		case root:
			d = "/var/lib/pgts"
		case filepath.IsAbs(home):
			d = filepath.Join(home, ".local", "share", "pgts")
		default:
			return "", usagef("no data directory for the embedded cluster: HOME is not set; give one with --data-dir or PGTS_DATA_DIR")
		}
	}
	abs, err := filepath.Abs(d)
	if err != nil {
		return "", fmt.Errorf("data directory %q: %w", d, err)
	}
	return abs, nil
}

// cluster builds the embedded cluster controller.
func (a *app) cluster() (*embedded.Cluster, error) {
	dir, err := a.dataDirPath()
	if err != nil {
		return nil, err
	}
	bins, err := embedded.DefaultFinder(a.binDir).Find()
	if err != nil {
		return nil, err
	}
	m, err := embedded.ThisMachine(runtime.NumCPU())
	if err != nil {
		return nil, err
	}
	m.DiskFreeBytes, _ = embedded.DiskFree(dir) // unknown: WAL sized by memory
	settings := embedded.Tune(m)
	if a.walMinimal {
		settings = append(settings, embedded.MinimalWAL()...)
	}
	return embedded.New(embedded.Config{DataDir: dir, Binaries: bins, Settings: settings, Logger: a.log})
}

// connString chooses the database every command talks to, starting the
// embedded cluster when nothing else is configured. The log says which.
func (a *app) connString(ctx context.Context) (string, error) {
	choice, err := pg.Resolve(a.db, a.env.Getenv)
	if err != nil {
		return "", err
	}
	switch choice.Source {
	case pg.SourceNone:
		c, err := a.cluster()
		if err != nil {
			return "", err
		}
		info, err := c.Start(ctx)
		if err != nil {
			return "", err
		}
		a.embedded, a.embeddedLog = c, c.LogOffset()
		verb := "started"
		if info.Reused {
			verb = "reusing"
		}
		a.log.Info("database: embedded cluster ("+verb+")", "data_dir", info.DataDir, "port", info.Port)
		return info.ConnString("postgres"), nil
	case pg.SourceLibpqEnv:
		a.log.Info("database: " + choice.Source.String())
		return "", nil
	default:
		a.log.Info("database: "+choice.Source.String(), "url", pg.Redact(choice.ConnString))
		return choice.ConnString, nil
	}
}

// exactArgs is cobra.ExactArgs with a usage error (exit status 2).
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return &pg.UsageError{Err: fmt.Errorf("%s takes %d argument(s), got %d; see %s --help", cmd.CommandPath(), n, len(args), cmd.CommandPath())}
		}
		return nil
	}
}

// rangeArgs is cobra.RangeArgs with a usage error.
func rangeArgs(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || len(args) > hi {
			return &pg.UsageError{Err: fmt.Errorf("%s takes %d to %d arguments, got %d; see %s --help", cmd.CommandPath(), lo, hi, len(args), cmd.CommandPath())}
		}
		return nil
	}
}

// usagef returns a usage error (exit status 2).
func usagef(format string, args ...any) error {
	return &pg.UsageError{Err: fmt.Errorf(format, args...)}
}

// ExitCode maps an error to pgts' exit statuses: 0 ok, 1 runtime error,
// 2 usage error, 3 load completed with rejected rows, 130 interrupted.
func ExitCode(ctx context.Context, err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrRejected):
		return 3
	case errors.Is(err, context.Canceled) && ctx.Err() != nil, errors.Is(err, ErrInterrupted):
		return 130
	case pg.IsUsage(err), strings.HasPrefix(err.Error(), "unknown command"), strings.HasPrefix(err.Error(), "unknown flag"):
		return 2
	default:
		return 1
	}
}

// ErrInterrupted reports that a command stopped on SIGINT or SIGTERM after
// cleaning up.
var ErrInterrupted = errors.New("interrupted")
