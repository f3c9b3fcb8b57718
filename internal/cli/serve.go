package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"regexp"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/render"
	"github.com/pgts/pgts/internal/rra"
	"github.com/pgts/pgts/internal/serve"
	"github.com/pgts/pgts/internal/tsstore"
)

// The daemon's storage is the sink of its receivers.
var _ serve.Sink = (*tsstore.Store)(nil)

type serveFlags struct {
	config  string
	check   bool
	blaster bool
	// pprof serves net/http/pprof's /debug/pprof/ on the HTTP listener.
	pprof bool
	// Listen addresses overriding the file's, by flag name.
	addrs map[string]*string
}

// serveAddrFlags maps the listen flags to the Config fields they override.
var serveAddrFlags = []struct {
	name, usage string
	field       func(*serve.Config) *string
}{
	{"graphite", "Graphite plaintext TCP address", func(c *serve.Config) *string { return &c.Graphite.TCP }},
	{"graphite-udp", "Graphite plaintext UDP address", func(c *serve.Config) *string { return &c.Graphite.UDP }},
	{"pickle", "Graphite pickle TCP address", func(c *serve.Config) *string { return &c.Pickle.TCP }},
	{"statsd", "StatsD UDP address", func(c *serve.Config) *string { return &c.StatsD.UDP }},
	{"statsd-tcp", "StatsD TCP address", func(c *serve.Config) *string { return &c.StatsD.TCP }},
	{"http", "HTTP address (Influx, remote write, /metrics, /healthz)", func(c *serve.Config) *string { return &c.HTTP.Addr }},
}

func newServeCmd(a *app) *cobra.Command {
	f := serveFlags{addrs: map[string]*string{}}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the metrics daemon: Graphite, StatsD, Influx and remote-write ingestion",
		Long: `Receive metrics over Graphite plaintext (TCP and UDP) and pickle, StatsD
(UDP and TCP), Influx line protocol and Prometheus remote write (HTTP), and
store them in round-robin archives (the [[ds]] sections) and, optionally, a
raw series table (local, or sharded by series_id over shard servers: see
docs/scale-out.md). Every listener binds to 127.0.0.1 unless configured
otherwise; an empty address disables it. The HTTP port also serves the
Graphite query API (/render, /metrics/find, ...) for Grafana's Graphite
data source, and, with --blaster, /blaster/set?rate=R&n=N, which makes the
daemon send itself Graphite load (rate=0 stops it).

SIGHUP rereads the [[ds]] sections of --config. SIGTERM and SIGINT stop
accepting, store what was received, flush StatsD and the cache, and exit 0.
See docs/serve.md for the configuration file.`,
		Example: `  pgts serve
  pgts serve --config pgts.toml
  pgts serve --config pgts.toml --check-config
  pgts serve --http 0.0.0.0:8080 --pickle ""`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), a, cmd, f, nil)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.config, "config", "", "configuration file (TOML; default: built-in defaults)")
	fl.BoolVar(&f.check, "check-config", false, "validate the configuration and exit")
	fl.BoolVar(&f.blaster, "blaster", false, "enable GET /blaster/set?rate=R&n=N: the daemon sends itself Graphite load (tests and benchmarks)")
	fl.BoolVar(&f.pprof, "pprof", false, "serve Go's profiles (/debug/pprof/) on the HTTP listener, for go tool pprof (see docs/serve.md)")
	for _, af := range serveAddrFlags {
		f.addrs[af.name] = fl.String(af.name, "", af.usage+" (overrides the file; \"\" disables)")
	}
	return cmd
}

// serveConfig reads --config (or the defaults) and applies the listen
// flags given.
func serveConfig(cmd *cobra.Command, f serveFlags) (serve.Config, error) {
	cfg := serve.DefaultConfig()
	if f.config != "" {
		c, err := serve.LoadConfig(f.config)
		if err != nil {
			return cfg, usagef("%v", err)
		}
		cfg = c
	}
	for _, af := range serveAddrFlags {
		if cmd != nil && cmd.Flags().Changed(af.name) {
			*af.field(&cfg) = *f.addrs[af.name]
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usagef("%v", err)
	}
	return cfg, nil
}

// runServe runs the daemon until ctx ends. started, when not nil, is told
// the listen addresses once the daemon accepts points (tests).
func runServe(ctx context.Context, a *app, cmd *cobra.Command, f serveFlags, started func(serve.Addrs)) error {
	cfg, err := serveConfig(cmd, f)
	if err != nil {
		return err
	}
	rules, err := cfg.Rules()
	if err != nil {
		return usagef("%v", err)
	}
	if f.check {
		name := f.config
		if name == "" {
			name = "default configuration"
		}
		fmt.Fprintf(a.env.Stdout, "%s: ok (%d [[ds]] sections)\n", name, len(rules))
		return nil
	}

	if f.blaster && cfg.Graphite.TCP == "" {
		return usagef("--blaster needs the Graphite TCP listener")
	}
	updateLimit, restoreLimit := setMemoryLimit(a, cfg)
	defer restoreLimit()
	pool, err := a.openDB(ctx, cfg.PoolSize())
	if err != nil {
		return err
	}
	defer pool.Close()
	reg := prometheus.NewRegistry()
	// go_gc_heap_live_bytes: the heap the last collection marked live,
	// to compare with what the store accounts (pgts_store_cache_bytes).
	reg.MustRegister(collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
		collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/gc/heap/live:bytes$`)})),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	scfg, err := storeConfig(ctx, pool, cfg, rules)
	if err != nil {
		return err
	}
	scfg.Logger, scfg.Registerer = a.log, reg
	store, err := tsstore.Open(ctx, pool, scfg)
	if err != nil {
		return fmt.Errorf("opening storage: %w", err)
	}
	quiet := serve.NewQuietRelease(time.Duration(cfg.ReleaseMemoryAfter), func() { releaseMemory(a) })
	defer followSeriesState(ctx, store, updateLimit, quiet)()
	ropts := render.DefaultOptions()
	ropts.Logger = a.log
	ropts.MaxSeries, ropts.MaxPoints = cfg.Render.MaxSeries, cfg.Render.MaxPoints
	api, err := render.New(renderSource{store}, ropts)
	if err != nil {
		store.Close(context.WithoutCancel(ctx))
		return err
	}
	mux := http.NewServeMux()
	api.Register(mux)
	var srv *serve.Server
	bc := &blasterControl{log: a.log, addr: func() string { return srv.Addrs().GraphiteTCP }}
	if f.blaster {
		mux.Handle("/blaster/set", bc)
	}
	if f.pprof {
		registerPprof(mux)
	}
	srv, err = serve.New(cfg, store, serve.Options{Logger: a.log, Registerer: reg, Gatherer: reg, Extra: mux})
	if err != nil {
		store.Close(context.WithoutCancel(ctx))
		return err
	}
	if err := srv.Start(); err != nil {
		srv.Shutdown(context.WithoutCancel(ctx))
		return err
	}
	a.log.Info("serving", "config", f.config, "rules", len(rules), "raw_table", cfg.Raw.Table)
	if started != nil {
		started(srv.Addrs())
	}

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for ctx.Err() == nil {
		select {
		case <-hup:
			reloadRules(a, srv, f.config)
		case <-ctx.Done():
		}
	}
	bc.stop()
	a.log.Info("shutting down: draining receivers and flushing storage")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(cfg.ShutdownTimeout))
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	a.log.Info("stopped")
	return nil
}

// reloadRules applies the [[ds]] sections of the configuration file again;
// an invalid file is logged and ignored.
func reloadRules(a *app, srv *serve.Server, file string) {
	if file == "" {
		a.log.Warn("SIGHUP: no --config file to reload")
		return
	}
	cfg, err := serve.LoadConfig(file)
	if err != nil {
		a.log.Error("SIGHUP: configuration not reloaded", "err", err)
		return
	}
	rules, err := cfg.Rules()
	if err == nil {
		err = srv.SetRules(rules)
	}
	if err != nil {
		a.log.Error("SIGHUP: rules not reloaded", "err", err)
	}
}

// storeConfig maps the daemon's configuration to the storage's, asking
// PostgreSQL to parse the [raw] intervals.
func storeConfig(ctx context.Context, pool *pgxpool.Pool, cfg serve.Config, rules []rra.Rule) (tsstore.Config, error) {
	sc := tsstore.DefaultConfig()
	sc.Rules = rules
	sc.MaxMemory = int64(cfg.MaxMemory)
	sc.MaxSeries = cfg.MaxSeries
	sc.FlushInterval = time.Duration(cfg.FlushInterval)
	sc.FlushWorkers = cfg.FlushWorkers
	sc.FutureTolerance = time.Duration(cfg.FutureTolerance)
	if cfg.Raw.Table != "" {
		iv, err := partition.ParseInterval(ctx, pool, cfg.Raw.Interval)
		if err != nil {
			return sc, usagef("raw.interval: %v", err)
		}
		raw := &tsstore.RawConfig{Table: cfg.Raw.Table, Interval: iv}
		if cfg.Raw.Retention != "" {
			r, err := partition.ParseInterval(ctx, pool, cfg.Raw.Retention)
			if err != nil {
				return sc, usagef("raw.retention: %v", err)
			}
			raw.Retention = &r
		}
		if cfg.Raw.AcceptPast != "" {
			r, err := partition.ParseInterval(ctx, pool, cfg.Raw.AcceptPast)
			if err != nil {
				return sc, usagef("raw.accept-past: %v", err)
			}
			raw.AcceptPast = &r
		}
		sc.Raw = raw
	}
	if err := sc.Validate(); err != nil {
		return sc, usagef("%v", err)
	}
	return sc, nil
}

// setMemoryLimit sets the Go memory limit the daemon runs under
// (serve.Config.MemoryLimit) unless its environment sets GOMEMLIMIT, which
// the runtime applied at start and which wins; GOGC stays as it is, the
// limit governing the collector once the heap nears it. update sets it
// again for the series state the storage holds (MemoryLimitFor), logging
// a change of more than an eighth; restore sets the previous limit back.
func setMemoryLimit(a *app, cfg serve.Config) (update func(seriesBytes int64), restore func()) {
	if v := a.env.Getenv("GOMEMLIMIT"); v != "" {
		a.log.Info("memory limit from GOMEMLIMIT", "GOMEMLIMIT", v)
		return func(int64) {}, func() {}
	}
	lim := cfg.MemoryLimit()
	prev := debug.SetMemoryLimit(lim)
	a.log.Info("memory limit", "bytes", lim, "max_memory", int64(cfg.MaxMemory))
	logged := lim
	update = func(seriesBytes int64) {
		l := cfg.MemoryLimitFor(seriesBytes)
		debug.SetMemoryLimit(l)
		if d := l - logged; d > logged/8 || -d > logged/8 {
			a.log.Info("memory limit", "bytes", l, "max_memory", int64(cfg.MaxMemory), "series_bytes", seriesBytes)
			logged = l
		}
	}
	return update, func() { debug.SetMemoryLimit(prev) }
}

// followSeriesState calls update with the storage's series state, and
// tells quiet whether points arrive or wait, every second until ctx ends;
// the returned function stops it and waits.
func followSeriesState(ctx context.Context, store *tsstore.Store, update func(int64), quiet *serve.QuietRelease) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				st := store.Stats()
				update(st.SeriesBytes)
				quiet.Observe(now, st.Added, st.Bytes > 0 || st.Unflushed > 0 || st.Buffered > 0)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// registerPprof serves Go's runtime profiles under /debug/pprof/ (CPU,
// heap, goroutines...), for `go tool pprof http://ADDR/debug/pprof/profile`.
// Only with --pprof: the HTTP listener binds to 127.0.0.1 unless
// configured otherwise, and a profile costs the daemon CPU while it runs.
func registerPprof(mux *http.ServeMux) {
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
}

// releaseMemory collects and gives the heap's free memory back to the
// system (serve.QuietRelease), logging the heap before and after.
func releaseMemory(a *app) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	debug.FreeOSMemory()
	runtime.ReadMemStats(&after)
	a.log.Info("memory released to the system", "heap_alloc", after.HeapAlloc,
		"held_before", before.HeapSys-before.HeapReleased, "held_after", after.HeapSys-after.HeapReleased)
}
