package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// eventsSampler takes one EventsSample a second on a connection of its
// own. start and stop are called once each, from one goroutine.
type eventsSampler struct {
	ctx        context.Context // not cancelled with the run: the last sample must be taken
	conn       *pgxpool.Conn
	r          *eventsRunner
	postmaster int    // 0 when the server's /proc is not readable
	ckptSQL    string // checkpoints completed so far
	seeCkpt    bool   // the role may read the checkpointer's wait event
	devStat    string // /sys stat file of the data directory's block device; "" when unknown

	t0       time.Time
	last     time.Time
	inserts  int64
	srv      ProcTimes
	dev      deviceCounts
	wal      int64
	ckpt0    int64
	samples  []EventsSample
	err      error // the first failed sample's
	done     chan struct{}
	finished sync.WaitGroup
}

func newEventsSampler(ctx context.Context, pool *pgxpool.Pool, r *eventsRunner) (*eventsSampler, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	sm := &eventsSampler{ctx: context.WithoutCancel(ctx), conn: conn, r: r, done: make(chan struct{})}
	var backend, version int
	err = conn.QueryRow(ctx, `SELECT pg_backend_pid(), current_setting('server_version_num')::int,
		coalesce((SELECT rolsuper FROM pg_roles WHERE rolname = current_user), false) OR pg_has_role('pg_read_all_stats', 'MEMBER')`).
		Scan(&backend, &version, &sm.seeCkpt)
	if err != nil {
		conn.Release()
		return nil, err
	}
	sm.postmaster = PostmasterOf(backend)
	if sm.postmaster != 0 {
		var dataDir string
		if conn.QueryRow(ctx, "SELECT current_setting('data_directory')").Scan(&dataDir) == nil {
			sm.devStat = blockDeviceStat(dataDir)
		}
	}
	// PostgreSQL 17 moved the checkpoint counts to pg_stat_checkpointer.
	sm.ckptSQL = "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter"
	if version >= 170000 {
		sm.ckptSQL = "SELECT num_timed + num_requested FROM pg_stat_checkpointer"
	}
	return sm, nil
}

func (sm *eventsSampler) release() { sm.conn.Release() }

// read takes the server's counters: WAL position, checkpoints completed,
// whether the checkpointer is busy.
func (sm *eventsSampler) read(ctx context.Context) (wal, ckpts int64, busy bool, err error) {
	var wait string
	err = sm.conn.QueryRow(ctx, `SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint, (`+sm.ckptSQL+`),
		coalesce((SELECT wait_event FROM pg_stat_activity WHERE backend_type = 'checkpointer'), '')`).Scan(&wal, &ckpts, &wait)
	return wal, ckpts, sm.seeCkpt && wait != "CheckpointerMain", err
}

// checkpoint runs a CHECKPOINT and waits until the server's checkpoint
// count shows it: the checkpointer reports its statistics after waking
// the requester, and a run must not count the checkpoint it started from.
func (sm *eventsSampler) checkpoint(ctx context.Context) error {
	var before int64
	if err := sm.conn.QueryRow(ctx, sm.ckptSQL).Scan(&before); err != nil {
		return err
	}
	if _, err := sm.conn.Exec(ctx, "CHECKPOINT"); err != nil {
		return err
	}
	// Each query is its own transaction, so each sees fresh statistics.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		var n int64
		if err := sm.conn.QueryRow(ctx, sm.ckptSQL).Scan(&n); err != nil {
			return err
		}
		if n > before {
			return nil
		}
		time.Sleep(20 * time.Millisecond) // polling the server's statistics, not synchronising goroutines
	}
	return nil // counted late: the first sample may then count it
}

// start takes the first reading and samples every second until stop.
func (sm *eventsSampler) start(t0 time.Time) {
	sm.t0, sm.last = t0, t0
	sm.srv, sm.dev = ServerTimes(sm.postmaster), readDevice(sm.devStat)
	sm.wal, sm.ckpt0, _, sm.err = sm.read(sm.ctx)
	sm.finished.Add(1)
	go func() {
		defer sm.finished.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-sm.done:
				return
			case <-tick.C:
				sm.sample()
			}
		}
	}()
}

// stop ends the sampling with a last, partial sample and returns the
// samples and the first error of reading the server, if any.
func (sm *eventsSampler) stop() ([]EventsSample, error) {
	close(sm.done)
	sm.finished.Wait()
	if time.Since(sm.last) >= 10*time.Millisecond {
		sm.sample()
	}
	return sm.samples, sm.err
}

// sample records the interval since the last sample.
func (sm *eventsSampler) sample() {
	now := time.Now()
	rec := sm.r.second.Swap(newLatencyRecorder())
	n := sm.r.committed.Load()
	srv, dev := ServerTimes(sm.postmaster), readDevice(sm.devStat)
	ctx, cancel := context.WithTimeout(sm.ctx, 10*time.Second)
	defer cancel()
	wal, ckpts, busy, err := sm.read(ctx)
	if err != nil && sm.err == nil {
		sm.err = fmt.Errorf("sampling the server: %w", err)
	}
	s := EventsSample{T: now.Sub(sm.t0).Seconds(), Seconds: now.Sub(sm.last).Seconds(), Inserts: n - sm.inserts,
		Checkpoint: busy, Checkpoints: ckpts - sm.ckpt0, WriteBytes: -1, WriteCalls: -1, DeviceWriteBytes: -1, DeviceWrites: -1}
	if dev.ok && sm.dev.ok {
		s.DeviceWriteBytes, s.DeviceWrites = dev.bytes-sm.dev.bytes, dev.ios-sm.dev.ios
	}
	if err == nil {
		s.WALBytes = wal - sm.wal
		sm.wal = wal
	}
	if s.Seconds > 0 {
		s.IPS = float64(s.Inserts) / s.Seconds
	}
	s.P50US, s.P99US, s.MaxUS = rec.quantiles()
	if !srv.Unavailable && !sm.srv.Unavailable {
		d := srv.Sub(sm.srv)
		s.WriteBytes, s.WriteCalls = d.WriteBytes, d.WriteCalls
	}
	sm.srv, sm.dev, sm.inserts, sm.last = srv, dev, n, now
	sm.samples = append(sm.samples, s)
}

// quantiles returns the median, 99th percentile and maximum recorded, in
// microseconds; zeros when nothing was.
func (r *latencyRecorder) quantiles() (p50, p99, maxUS int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.h.TotalCount() == 0 {
		return 0, 0, 0
	}
	return r.h.ValueAtPercentile(50), r.h.ValueAtPercentile(99), r.h.Max()
}

// deviceCounts are a block device's completed writes and bytes written.
type deviceCounts struct {
	ios, bytes int64
	ok         bool
}

// blockDeviceStat returns the /sys/dev/block stat file of the device
// holding path, or "" when there is none (a network or virtual file system).
func blockDeviceStat(path string) string {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return ""
	}
	dev := uint64(st.Dev)
	major := (dev>>8)&0xfff | (dev>>32)&^uint64(0xfff)
	minor := dev&0xff | (dev>>12)&^uint64(0xff)
	p := fmt.Sprintf("/sys/dev/block/%d:%d/stat", major, minor)
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// readDevice reads the write fields of a block device's stat file
// (Documentation/block/stat.rst: field 5 writes completed, field 7
// sectors written, in 512-byte units).
func readDevice(path string) deviceCounts {
	if path == "" {
		return deviceCounts{}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return deviceCounts{}
	}
	f := strings.Fields(string(b))
	if len(f) < 7 {
		return deviceCounts{}
	}
	ios, err1 := strconv.ParseInt(f[4], 10, 64)
	sectors, err2 := strconv.ParseInt(f[6], 10, 64)
	if err1 != nil || err2 != nil {
		return deviceCounts{}
	}
	return deviceCounts{ios: ios, bytes: sectors * 512, ok: true}
}
