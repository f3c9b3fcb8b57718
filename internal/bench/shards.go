package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/embedded"
	"github.com/pgts/pgts/internal/gen"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/shard"
)

// ShardScenario is `pgts bench load --shards`: the conditions rows loaded
// into a table sharded over 1, 2, ... private shard servers on this
// machine, each server's CPU limited by a cgroup, so that the servers, not
// the machine's cores, bound the load.
type ShardScenario struct {
	Counts      []int   // shard counts to run, e.g. 1,2,3
	Cores       float64 // CPU of each shard server (cgroup quota), e.g. 0.5
	Rows        int64   // conditions rows per run
	Devices     int
	Width       int
	PartsPerSrv int // hash partitions per shard server
	Workers     int // loader connections per partition
	Binaries    embedded.Binaries
	Logger      *slog.Logger `json:"-"`
}

// Validate checks the scenario.
func (s *ShardScenario) Validate() error {
	if len(s.Counts) == 0 {
		return errors.New("--shards: give shard counts, e.g. 1,2,3")
	}
	for _, n := range s.Counts {
		if n < 1 || n > 8 {
			return fmt.Errorf("--shards %d: between 1 and 8 servers on one machine", n)
		}
	}
	if s.Rows < 1000 || s.Rows > 1e9 {
		return fmt.Errorf("--rows %d: between 1,000 and 1,000,000,000", s.Rows)
	}
	if s.PartsPerSrv < 1 || s.PartsPerSrv > 64 {
		return fmt.Errorf("partitions per shard %d: between 1 and 64", s.PartsPerSrv)
	}
	if s.Workers < 1 || s.Workers > 16 {
		return fmt.Errorf("workers per partition %d: between 1 and 16", s.Workers)
	}
	return nil
}

// ShardRun is one run of a ShardScenario.
type ShardRun struct {
	Shards       int     `json:"shards"`
	Rows         int64   `json:"rows"`
	Seconds      float64 `json:"seconds"`
	RowsPerSec   float64 `json:"rows_per_second"`
	LoaderCPU    float64 `json:"loader_cpu_seconds"`      // this process: parsing, encoding, routing
	CoordCPU     float64 `json:"coordinator_cpu_seconds"` // the coordinator server (key → partition lookups)
	ThrottledSec float64 `json:"shards_throttled_seconds"`
	Error        string  `json:"error,omitempty"`
}

// RunShards starts a coordinator and max(Counts) shard servers (private
// clusters under a temporary directory, removed at the end), limits each
// shard server's CPU, and for each count loads Rows conditions rows into
// a fresh sharded table over that many shards.
func RunShards(ctx context.Context, s ShardScenario, done func(ShardRun)) ([]ShardRun, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	root, err := os.MkdirTemp("/tmp", "pgts-bench-shards-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	if err := os.Chmod(root, 0o755); err != nil {
		return nil, err
	}
	maxN := 0
	for _, n := range s.Counts {
		maxN = max(maxN, n)
	}
	settings := []embedded.Setting{
		{Name: "shared_buffers", Value: "256MB", Why: "bench"},
		{Name: "max_wal_size", Value: "4GB", Why: "bench"},
		{Name: "max_connections", Value: "200", Why: "bench"},
		{Name: "max_locks_per_transaction", Value: "256", Why: "bench"},
	}
	type server struct {
		c    *embedded.Cluster
		info embedded.Info
		lim  *CPULimit
	}
	var servers []*server
	defer func() {
		for _, sv := range servers {
			if sv.lim != nil {
				_ = sv.lim.Close()
			}
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			_, _ = sv.c.Stop(sctx, embedded.Immediate)
			cancel()
			_ = os.RemoveAll(sv.c.SocketDir())
			_ = os.Remove(sv.c.SocketDir() + ".lock")
		}
	}()
	for i := 0; i <= maxN; i++ {
		c, err := embedded.New(embedded.Config{DataDir: fmt.Sprintf("%s/n%d", root, i), Binaries: s.Binaries, AnyPort: true,
			Settings: settings, Logger: log})
		if err != nil {
			return nil, err
		}
		info, err := c.Start(ctx)
		if err != nil {
			return nil, err
		}
		sv := &server{c: c, info: info}
		servers = append(servers, sv)
		if i > 0 { // shards are limited; the coordinator (0) is not
			if sv.lim, err = NewCPULimit(fmt.Sprintf("s%d", i), s.Cores, info.PID); err != nil {
				return nil, err
			}
		}
	}
	var runs []ShardRun
	for _, n := range s.Counts {
		db := fmt.Sprintf("bench_shards_%d", n)
		r := ShardRun{Shards: n}
		err := func() error {
			urls := make([]string, n+1)
			for i := 0; i <= n; i++ {
				admin, err := servers[i].c.TCPConnString(servers[i].info, "postgres")
				if err != nil {
					return err
				}
				conn, err := pg.Connect(ctx, admin)
				if err != nil {
					return err
				}
				_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pg.QuoteIdent(db)+" WITH (FORCE)")
				_, err = conn.Exec(ctx, "CREATE DATABASE "+pg.QuoteIdent(db))
				conn.Close(ctx)
				if err != nil {
					return err
				}
				if urls[i], err = servers[i].c.TCPConnString(servers[i].info, db); err != nil {
					return err
				}
			}
			pool, err := pg.NewPool(ctx, urls[0], 4)
			if err != nil {
				return err
			}
			defer pool.Close()
			c := shard.New(pool, log)
			for i := 1; i <= n; i++ {
				if _, err := c.Add(ctx, fmt.Sprintf("s%d", i), urls[i]); err != nil {
					return err
				}
			}
			g, err := gen.New("conditions", gen.Options{Rows: s.Rows, Devices: s.Devices, Width: s.Width, Start: time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Hour)})
			if err != nil {
				return err
			}
			cols := "time timestamptz not null, device integer not null"
			var names []string
			for _, gc := range g.Columns() {
				names = append(names, gc.Name)
				if gc.Name != "time" && gc.Name != "device" {
					cols += ", " + pg.QuoteIdent(gc.Name) + " " + gc.Type
				}
			}
			spec := shard.TableSpec{Series: partition.CreateSpec{Name: "conditions", Columns: cols, TimeColumn: "time",
				Interval: partition.Interval{Days: 1}, Premake: 2}, ShardColumn: "device", Partitions: n * s.PartsPerSrv}
			if _, err := c.CreateTable(ctx, spec, time.Now); err != nil {
				return err
			}
			in, stop, err := shard.GeneratorInput(ctx, "conditions", g)
			if err != nil {
				return err
			}
			defer stop()
			lcfg := copyload.DefaultConfig()
			lcfg.Workers = s.Workers
			coordBefore := processTreeCPU(servers[0].info.PID)
			var throttledBefore int64
			for i := 1; i <= n; i++ {
				_, t := servers[i].lim.Throttled()
				throttledBefore += t
			}
			cpuBefore := selfCPU()
			sum, err := c.Load(ctx, "conditions", []shard.Input{in}, shard.LoadConfig{Load: lcfg, Columns: names, Logger: log})
			r.LoaderCPU = selfCPU() - cpuBefore
			r.CoordCPU = processTreeCPU(servers[0].info.PID) - coordBefore
			for i := 1; i <= n; i++ {
				_, t := servers[i].lim.Throttled()
				r.ThrottledSec += float64(t) / 1e6
			}
			r.ThrottledSec -= float64(throttledBefore) / 1e6
			r.Rows, r.Seconds, r.RowsPerSec = sum.Loaded, sum.Seconds, sum.RowsPerSec
			return err
		}()
		if err != nil {
			r.Error = err.Error()
		}
		runs = append(runs, r)
		if done != nil {
			done(r)
		}
		for i := 0; i <= n; i++ { // free the disk for the next run
			if admin, aerr := servers[i].c.TCPConnString(servers[i].info, "postgres"); aerr == nil {
				if conn, cerr := pg.Connect(context.WithoutCancel(ctx), admin); cerr == nil {
					_, _ = conn.Exec(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+pg.QuoteIdent(db)+" WITH (FORCE)")
					conn.Close(context.WithoutCancel(ctx))
				}
			}
		}
		if ctx.Err() != nil {
			return runs, ctx.Err()
		}
	}
	return runs, nil
}

// selfCPU is this process's user + system CPU, in seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// processTreeCPU is the CPU of pid and its live children, in seconds
// (a server's postmaster and backends; backends that exited are not
// counted).
func processTreeCPU(pid int) float64 {
	var total float64
	for _, p := range append([]int{pid}, childrenOf(pid)...) {
		if u, s, _, err := statTimes(p); err == nil {
			total += u + s
		}
	}
	return total
}
