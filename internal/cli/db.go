package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgts/pgts/internal/embedded"
)

func newDBCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "db",
		Short: "Manage pgts' embedded PostgreSQL cluster",
		Long: `Manage the private PostgreSQL cluster pgts runs when no database is configured.

The cluster lives in --data-dir (env PGTS_DATA_DIR; default one per user:
$XDG_DATA_HOME/pgts or ~/.local/share/pgts, and /var/lib/pgts as root),
listens on 127.0.0.1 and on a Unix socket in a short private directory under
/tmp, and is tuned for this machine (the settings are in pgts.conf inside the
data dir; 'pgts db tune' explains them). As root, the server runs as the
'postgres' user. Other commands start it on demand.`,
		Example: `  pgts db start
  pgts db psql -c 'select version()'
  pgts db status
  pgts db stop`,
	}
	cmd.AddCommand(newDBStartCmd(a), newDBStopCmd(a), newDBStatusCmd(a), newDBURLCmd(a),
		newDBPsqlCmd(a), newDBDestroyCmd(a), newDBTuneCmd(a))
	return cmd
}

func newDBStartCmd(a *app) *cobra.Command {
	var asJSON, walMinimal bool
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Start the embedded cluster (or reuse it when it is running)",
		Long: `Start the embedded cluster, creating and tuning it first when the data
directory is new. A cluster already running on the data directory is reused;
one whose server was killed is recovered (PostgreSQL replays its WAL). A busy
port is replaced by a free one.`,
		Example: `  pgts db start
  pgts db start --data-dir /var/lib/pgts --json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			a.walMinimal = walMinimal
			c, err := a.cluster()
			if err != nil {
				return err
			}
			if _, err := os.Stat(filepath.Join(c.DataDir(), "PG_VERSION")); walMinimal && err == nil && c.WALLevel() != "minimal" {
				a.log.Warn("--wal-minimal applies when a cluster is created; this one exists: set wal_level = minimal, max_wal_senders = 0 and archive_mode = off in its pgts.conf and restart it",
					"conf", filepath.Join(c.DataDir(), "pgts.conf"))
			}
			info, err := c.Start(cmd.Context())
			if err != nil {
				return err
			}
			if info.Reused {
				a.log.Info("already running; reusing it", "data_dir", info.DataDir, "port", info.Port, "pid", info.PID)
			} else {
				a.log.Info("started", "data_dir", info.DataDir, "port", info.Port, "pid", info.PID)
			}
			if asJSON {
				return writeJSON(a, infoJSON(info, nil))
			}
			fmt.Fprintln(a.env.Stdout, info.ConnString("postgres"))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the cluster's details as JSON")
	cmd.Flags().BoolVar(&walMinimal, "wal-minimal", false, "create the cluster with the bulk-load profile (wal_level = minimal: pgts load --bulk writes no WAL for partitions loaded in one transaction; no replication, no point-in-time recovery, no pg_basebackup)")
	return cmd
}

func newDBStopCmd(a *app) *cobra.Command {
	var immediate bool
	cmd := &cobra.Command{
		Use:   "stop",
		Short: "Stop the embedded cluster (not an error when it is stopped)",
		Long: `Stop the embedded cluster. Open transactions are rolled back and a
checkpoint is written (pg_ctl's fast mode); --immediate skips the checkpoint,
like a crash, and recovery runs at the next start.`,
		Example: "  pgts db stop",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.cluster()
			if err != nil {
				return err
			}
			mode := embedded.Fast
			if immediate {
				mode = embedded.Immediate
			}
			was, err := c.Stop(cmd.Context(), mode)
			if err != nil {
				return err
			}
			if was {
				a.log.Info("stopped", "data_dir", c.DataDir())
			} else {
				a.log.Info("not running", "data_dir", c.DataDir())
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&immediate, "immediate", false, "stop without a shutdown checkpoint")
	return cmd
}

type clusterJSON struct {
	Running     bool    `json:"running"`
	Initialised bool    `json:"initialised"`
	Stale       bool    `json:"stale_pid_file,omitempty"`
	Version     string  `json:"version"`
	DataDir     string  `json:"data_dir"`
	Port        int     `json:"port,omitempty"`
	SocketDir   string  `json:"socket_dir,omitempty"`
	PID         int     `json:"pid,omitempty"`
	SizeBytes   int64   `json:"size_bytes,omitempty"`
	WALBytes    int64   `json:"wal_bytes,omitempty"`
	DiskFree    int64   `json:"disk_free_bytes,omitempty"`
	UptimeSec   float64 `json:"uptime_seconds,omitempty"`
	WALLevel    string  `json:"wal_level,omitempty"`
	URL         string  `json:"url,omitempty"`
}

func infoJSON(info embedded.Info, st *embedded.State) clusterJSON {
	j := clusterJSON{Running: true, Initialised: true, Version: info.Version, DataDir: info.DataDir, Port: info.Port,
		SocketDir: info.SocketDir, PID: info.PID, URL: info.ConnString("postgres")}
	if st != nil {
		j.Running, j.Initialised, j.Stale, j.SizeBytes, j.UptimeSec = st.Running, st.Initialised, st.Stale, st.SizeBytes, st.Uptime.Seconds()
		j.WALBytes, j.DiskFree, j.WALLevel = st.WALBytes, st.DiskFreeBytes, st.WALLevel
		if !st.Running {
			j.PID, j.URL = 0, ""
		}
	}
	return j
}

func newDBStatusCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "status",
		Short:   "Show the embedded cluster's version, data dir, port, socket, size, WAL and its level, free disk and uptime",
		Example: "  pgts db status\n  pgts db status --json",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.cluster()
			if err != nil {
				return err
			}
			st, err := c.Status()
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a, infoJSON(st.Info, &st))
			}
			w := a.env.Stdout
			state := "running"
			switch {
			case !st.Initialised:
				state = "not created (pgts db start creates it)"
			case st.Stale:
				state = "not running: the server was killed (stale postmaster.pid); pgts db start recovers it"
			case !st.Running:
				state = "stopped"
			}
			fmt.Fprintf(w, "state:     %s\n", state)
			fmt.Fprintf(w, "version:   PostgreSQL %s\n", st.Info.Version)
			fmt.Fprintf(w, "data dir:  %s\n", c.DataDir())
			if st.Initialised {
				fmt.Fprintf(w, "size:      %s (WAL %s)\n", humanBytes(st.SizeBytes), humanBytes(st.WALBytes))
				profile := "(replication and point-in-time recovery possible)"
				if st.WALLevel == "minimal" {
					profile = "(bulk-load profile: no WAL for partitions pgts load --bulk fills in one transaction; no replication, no point-in-time recovery)"
				}
				fmt.Fprintf(w, "wal level: %s %s\n", st.WALLevel, profile)
			}
			if st.DiskFreeBytes > 0 {
				fmt.Fprintf(w, "disk free: %s\n", humanBytes(st.DiskFreeBytes))
			}
			if st.Running {
				fmt.Fprintf(w, "port:      %d (127.0.0.1)\n", st.Info.Port)
				fmt.Fprintf(w, "socket:    %s\n", st.Info.SocketDir)
				fmt.Fprintf(w, "pid:       %d\n", st.Info.PID)
				fmt.Fprintf(w, "uptime:    %s\n", st.Uptime)
				fmt.Fprintf(w, "url:       %s\n", st.Info.ConnString("postgres"))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

func newDBURLCmd(a *app) *cobra.Command {
	var tcp bool
	var dbname string
	cmd := &cobra.Command{
		Use:   "url",
		Short: "Print a connection URL of the embedded cluster (psql accepts it)",
		Long: `Print a connection URL of the running embedded cluster. The default URL
uses the Unix socket and needs no password. --tcp prints a URL over
127.0.0.1 that includes the cluster's generated password: treat it as a secret.`,
		Example: `  psql "$(pgts db url)"
  export DATABASE_URL=$(pgts db url)`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.cluster()
			if err != nil {
				return err
			}
			st, err := c.Status()
			if err != nil {
				return err
			}
			if !st.Running {
				return fmt.Errorf("the embedded cluster in %q is not running: start it with pgts db start", c.DataDir())
			}
			u := st.Info.ConnString(dbname)
			if tcp {
				if u, err = c.TCPConnString(st.Info, dbname); err != nil {
					return err
				}
			}
			fmt.Fprintln(a.env.Stdout, u)
			return nil
		},
	}
	cmd.Flags().BoolVar(&tcp, "tcp", false, "a TCP URL with the password instead of the socket URL")
	cmd.Flags().StringVar(&dbname, "dbname", "postgres", "database name in the URL")
	return cmd
}

func newDBPsqlCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "psql [psql arguments]",
		Short: "Run psql on the embedded cluster, starting it if needed",
		Long: `Run psql connected to the embedded cluster (started if needed); every
argument is passed to psql. pgts' own --data-dir and --pg-bindir flags may come
first.`,
		Example: `  pgts db psql -c 'select 1'
  pgts db psql --data-dir /srv/pgts -f schema.sql`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			rest, err := a.takeClusterFlags(args)
			if err != nil {
				return err
			}
			c, err := a.cluster()
			if err != nil {
				return err
			}
			info, err := c.Start(cmd.Context())
			if err != nil {
				return err
			}
			bins, err := embedded.DefaultFinder(a.binDir).Find()
			if err != nil {
				return err
			}
			p := exec.CommandContext(cmd.Context(), bins.Psql(), append([]string{info.ConnString("postgres")}, rest...)...)
			p.Stdin, p.Stdout, p.Stderr = a.env.Stdin, a.env.Stdout, a.env.Stderr
			if err := p.Run(); err != nil {
				if ee, ok := err.(*exec.ExitError); ok {
					return &exitError{code: ee.ExitCode(), err: fmt.Errorf("psql exited with status %d", ee.ExitCode())}
				}
				return fmt.Errorf("running psql: %w", err)
			}
			return nil
		},
	}
}

// takeClusterFlags removes leading --data-dir/--pg-bindir flags (and -h)
// from a raw argument list for commands that pass the rest through.
func (a *app) takeClusterFlags(args []string) ([]string, error) {
	for len(args) > 0 {
		arg := args[0]
		var target *string
		name, value, hasValue := strings.Cut(arg, "=")
		switch name {
		case "--data-dir":
			target = &a.dataDir
		case "--pg-bindir":
			target = &a.binDir
		default:
			return args, nil
		}
		if !hasValue {
			if len(args) < 2 {
				return nil, usagef("%s needs a value", name)
			}
			value, args = args[1], args[1:]
		}
		*target = value
		args = args[1:]
	}
	return args, nil
}

// exitError carries a child process's exit status.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// ExitStatus returns the status a child process asked for, if any.
func ExitStatus(err error) (int, bool) {
	if e, ok := err.(*exitError); ok {
		return e.code, true
	}
	return 0, false
}

func newDBDestroyCmd(a *app) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:     "destroy",
		Short:   "Stop the embedded cluster and delete its data directory (needs --yes)",
		Example: "  pgts db destroy --yes",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.cluster()
			if err != nil {
				return err
			}
			if !yes {
				return usagef("this deletes %q and every database in it; run again with --yes", c.DataDir())
			}
			if err := c.Destroy(cmd.Context()); err != nil {
				return err
			}
			a.log.Info("destroyed", "data_dir", c.DataDir())
			return nil
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm deleting the data directory")
	return cmd
}

func newDBTuneCmd(a *app) *cobra.Command {
	var memory, diskFree string
	var cpus int
	var asJSON, walMinimal bool
	cmd := &cobra.Command{
		Use:   "tune",
		Short: "Print recommended PostgreSQL settings for a machine (applies nothing)",
		Long: `Print postgresql.conf settings recommended for time-series loading on a
server with the given memory, cores and free disk (default: this machine,
and the free space where the embedded cluster's data dir is); WAL is kept to
an eighth of the free disk. Nothing is
applied: paste the output into postgresql.conf or an included file, or use
ALTER SYSTEM. The embedded cluster is created with these settings in pgts.conf.`,
		Example: `  pgts db tune
  pgts db tune --memory 64GB --cpus 16 >> /etc/postgresql/16/main/conf.d/pgts.conf`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := embedded.ThisMachine(runtime.NumCPU())
			if err != nil {
				return err
			}
			if memory != "" {
				if m.MemoryBytes, err = embedded.ParseSize(memory); err != nil {
					return usagef("--memory: %v", err)
				}
				if m.MemoryBytes < 256<<20 {
					return usagef("--memory %s: at least 256MB", memory)
				}
			}
			if cmd.Flags().Changed("cpus") {
				if cpus < 1 || cpus > 4096 {
					return usagef("--cpus %d: must be between 1 and 4096", cpus)
				}
				m.CPUs = cpus
			}
			if diskFree != "" {
				if m.DiskFreeBytes, err = embedded.ParseSize(diskFree); err != nil {
					return usagef("--disk-free: %v", err)
				}
			} else if dir, err := a.dataDirPath(); err == nil {
				m.DiskFreeBytes, _ = embedded.DiskFree(dir)
			}
			settings := embedded.Tune(m)
			if walMinimal {
				settings = append(settings, embedded.MinimalWAL()...)
			}
			if asJSON {
				out := map[string]string{}
				for _, s := range settings {
					out[s.Name] = s.Value
				}
				return writeJSON(a, out)
			}
			disk := "unknown free disk"
			if m.DiskFreeBytes > 0 {
				disk = humanBytes(m.DiskFreeBytes) + " of free disk"
			}
			header := fmt.Sprintf("pgts db tune for %s of memory, %d cores and %s (%s)", humanBytes(m.MemoryBytes), m.CPUs, disk, time.Now().UTC().Format("2006-01-02"))
			return embedded.WriteConf(a.env.Stdout, header, settings)
		},
	}
	cmd.Flags().StringVar(&memory, "memory", "", "memory of the server, e.g. 16GB (default: this machine's)")
	cmd.Flags().IntVar(&cpus, "cpus", runtime.NumCPU(), "cores of the server")
	cmd.Flags().StringVar(&diskFree, "disk-free", "", "free disk space for the data, e.g. 100GB (default: free space at the data dir)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the settings as a JSON object")
	cmd.Flags().BoolVar(&walMinimal, "wal-minimal", false, "add the bulk-load profile: wal_level = minimal (no WAL for tables loaded in the transaction that made them; no replication, no point-in-time recovery)")
	return cmd
}

func writeJSON(a *app, v any) error {
	enc := json.NewEncoder(a.env.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func humanBytes(b int64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%d B", b)
	}
	div, exp := int64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(b)/float64(div), "KMGTPE"[exp])
}
