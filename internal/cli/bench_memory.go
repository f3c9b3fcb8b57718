package cli

import (
	"context"
	"fmt"
	"net/url"

	"github.com/pgts/pgts/internal/bench"
	"github.com/pgts/pgts/internal/embedded"
	"github.com/pgts/pgts/internal/pg"
)

// memorySettings are the server settings a memory limit changes for the
// benchmark: shared_buffers is charged to the cgroup as the server touches
// it, so the tuned size (a quarter of the machine's RAM) would exceed a
// small limit and get the server killed; work_mem and maintenance_work_mem
// (which autovacuum and a GIN index's pending-list cleanup use) would let
// one process outgrow it too (memory no setting bounds, such as ANALYZE's
// sample of wide rows, still can: 65 MB under 128 MB was seen);
// effective_cache_size follows so the planner does not count on memory the
// server lacks.
var memorySettings = []string{"shared_buffers", "effective_cache_size", "work_mem", "maintenance_work_mem", "wal_buffers"}

// serverMemory returns the memory settings (bytes) of a server limited to
// limit bytes: shared_buffers sharedBuffers when set, else a sixth of the
// limit (the rest holds backends, WAL buffers and the page cache the data
// is read through); the others by pgts' tuning rules with the limit as
// the RAM: effective_cache_size three quarters of it,
// maintenance_work_mem a sixteenth, work_mem 4 MB, wal_buffers a 32nd of
// shared_buffers. Sizes are whole MiB, wal_buffers whole kiB.
func serverMemory(limit int64, sharedBuffers string) (map[string]int64, error) {
	const mib = 1 << 20
	shared := limit / 6 / mib * mib
	if sharedBuffers != "" {
		var err error
		if shared, err = embedded.ParseSize(sharedBuffers); err != nil {
			return nil, usagef("--shared-buffers %q: %v", sharedBuffers, err)
		}
	}
	if shared < 16*mib || shared > limit/2 {
		return nil, usagef("shared_buffers %d MiB under a %d MiB memory limit: must be between 16 MiB and half the limit", shared/mib, limit/mib)
	}
	return map[string]int64{"shared_buffers": shared, "effective_cache_size": limit * 3 / 4 / mib * mib,
		"maintenance_work_mem": max(limit/16/mib, 1) * mib, "work_mem": 4 * mib, "wal_buffers": shared / 32 >> 10 << 10}, nil
}

// limitServerMemory puts the embedded cluster's server under a memory
// cgroup of the given size for the benchmark. It first restarts the server
// with its memory settings fitting the limit (see serverMemory; ALTER
// SYSTEM, put back by stop), then re-attaches it before every run (a
// --restart makes a new postmaster): it wraps *beforeRun, a scenario's
// BeforeRun hook. stop stops the server, removes the cgroup, starts the
// server outside it, puts the settings back and restarts it; it runs even
// when ctx is cancelled, and only logs what fails (a server the limit
// killed may still be in crash recovery, then the settings stay in
// postgresql.auto.conf until the next memory-limited benchmark puts back
// the user's, which the file keeps beside them: savedMemorySetting). It
// returns the
// limit in bytes. Not safe for concurrent use.
func (a *app) limitServerMemory(ctx context.Context, size, sharedBuffers string, beforeRun *func(context.Context) error) (limit int64, stop func(), err error) {
	n, err := embedded.ParseSize(size)
	if err != nil {
		return 0, nil, usagef("--memory-limit %q: %v", size, err)
	}
	sizes, err := serverMemory(n, sharedBuffers)
	if err != nil {
		return 0, nil, err
	}
	choice, err := pg.Resolve(a.db, a.env.Getenv)
	if err != nil {
		return 0, nil, err
	}
	if choice.Source != pg.SourceNone {
		return 0, nil, usagef("--memory-limit works only with the embedded cluster; the database comes from %s", choice.Source)
	}
	c, err := a.cluster()
	if err != nil {
		return 0, nil, err
	}
	cs, err := a.connString(ctx)
	if err != nil {
		return 0, nil, err
	}
	restore, err := setServerMemory(ctx, cs, sizes)
	if err != nil {
		return 0, nil, err
	}
	restart := func(ctx context.Context) error {
		if _, err := c.Stop(ctx, embedded.Fast); err != nil {
			return err
		}
		_, err := c.Start(ctx)
		return err
	}
	if err := restart(ctx); err != nil {
		return 0, nil, fmt.Errorf("restarting the server with shared_buffers %d MiB: %w", sizes["shared_buffers"]>>20, err)
	}
	putBack := func() {
		bg := context.WithoutCancel(ctx)
		if err := restore(bg); err != nil {
			a.log.Warn("putting back the server's memory settings", "err", err)
		}
	}
	pid, err := bench.PostmasterPID(c.DataDir())
	if err == nil {
		var lim *bench.MemoryLimit
		if lim, err = bench.NewMemoryLimit(n, pid); err == nil {
			a.log.Info("server memory limited", "bytes", n, "shared_buffers", sizes["shared_buffers"], "work_mem", sizes["work_mem"],
				"maintenance_work_mem", sizes["maintenance_work_mem"], "cgroup", lim.Dir, "version", lim.Version)
			prev := *beforeRun
			*beforeRun = func(ctx context.Context) error {
				if prev != nil {
					if err := prev(ctx); err != nil {
						return err
					}
				}
				pid, err := bench.PostmasterPID(c.DataDir())
				if err != nil {
					return err
				}
				return lim.Attach(pid)
			}
			return n, func() {
				bg := context.WithoutCancel(ctx)
				// The server leaves the cgroup by stopping; Close then
				// finds it empty (or moves what is left). The settings are
				// put back on the server restarted outside the cgroup (a
				// server the limit had killed is in recovery until then),
				// and one more restart applies them.
				if _, err := c.Stop(bg, embedded.Fast); err != nil {
					a.log.Warn("stopping the server after the benchmark", "err", err)
				}
				if err := lim.Close(); err != nil {
					a.log.Warn("removing the memory limit", "err", err)
				}
				if _, err := c.Start(bg); err != nil {
					a.log.Warn("starting the server after the benchmark", "err", err)
					return
				}
				putBack()
				if err := restart(bg); err != nil {
					a.log.Warn("restarting the server with its own memory settings", "err", err)
				}
			}, nil
		}
	}
	putBack()
	if rerr := restart(context.WithoutCancel(ctx)); rerr != nil {
		a.log.Warn("restarting the server with its own memory settings", "err", rerr)
	}
	return 0, nil, err
}

// savedMemorySetting is the placeholder setting in which setServerMemory
// keeps, in postgresql.auto.conf itself, the memory settings it replaced
// (as a URL query: work_mem=7MB&...), until restore removes it. A run
// whose server the limit killed cannot restore; the next run finds the
// entry and puts back those settings, not the killed run's.
const savedMemorySetting = "pgts.bench_saved_memory"

// setServerMemory sets the given sizes (bytes) with ALTER SYSTEM, to take
// effect at the next start; restore puts back what postgresql.auto.conf
// held before (or removes the entries), also when an earlier run could
// not (savedMemorySetting). ALTER SYSTEM needs a superuser, which the
// embedded cluster's connection is.
func setServerMemory(ctx context.Context, connString string, sizes map[string]int64) (restore func(context.Context) error, err error) {
	conn, err := pg.Connect(ctx, connString)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	before := map[string]string{}
	saved, haveSaved := "", false
	rows, err := conn.Query(ctx, `SELECT name, setting FROM pg_file_settings
		WHERE name = ANY($1) AND sourcefile LIKE '%/postgresql.auto.conf' AND applied`, append([]string{savedMemorySetting}, memorySettings...))
	if err != nil {
		return nil, fmt.Errorf("reading postgresql.auto.conf: %w", err)
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		if k == savedMemorySetting {
			saved, haveSaved = v, true
			continue
		}
		before[k] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading postgresql.auto.conf: %w", err)
	}
	if haveSaved {
		// An earlier run did not put its settings back: those in the
		// file are its own, the user's are the ones it saved.
		q, err := url.ParseQuery(saved)
		if err != nil {
			return nil, fmt.Errorf("reading %s in postgresql.auto.conf: %w", savedMemorySetting, err)
		}
		before = map[string]string{}
		for _, k := range memorySettings {
			if v := q.Get(k); v != "" {
				before[k] = v
			}
		}
	} else {
		q := url.Values{}
		for k, v := range before {
			q.Set(k, v)
		}
		// A placeholder setting must exist in the session for ALTER
		// SYSTEM to accept it.
		lit := pg.QuoteLiteral(q.Encode())
		for _, sql := range []string{"SET " + savedMemorySetting + " = " + lit, "ALTER SYSTEM SET " + savedMemorySetting + " = " + lit} {
			if _, err := conn.Exec(ctx, sql); err != nil {
				return nil, fmt.Errorf("saving the memory settings in postgresql.auto.conf: %w", err)
			}
		}
	}
	for _, k := range memorySettings {
		if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER SYSTEM SET %s = '%dkB'", k, sizes[k]>>10)); err != nil {
			return nil, fmt.Errorf("setting %s: %w", k, err)
		}
	}
	return func(ctx context.Context) error {
		conn, err := pg.Connect(ctx, connString)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		for _, k := range memorySettings {
			sql := "ALTER SYSTEM RESET " + k
			if v, ok := before[k]; ok {
				sql = fmt.Sprintf("ALTER SYSTEM SET %s = %s", k, pg.QuoteLiteral(v))
			}
			if _, err := conn.Exec(ctx, sql); err != nil {
				return fmt.Errorf("putting back %s: %w", k, err)
			}
		}
		for _, sql := range []string{"SET " + savedMemorySetting + " = ''", "ALTER SYSTEM RESET " + savedMemorySetting} {
			if _, err := conn.Exec(ctx, sql); err != nil {
				return fmt.Errorf("removing %s: %w", savedMemorySetting, err)
			}
		}
		return nil
	}, nil
}
