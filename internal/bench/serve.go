package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/blast"
	"github.com/pgts/pgts/internal/pg"
)

// ServeScenario measures the metrics daemon the way Tgres measured itself:
// Graphite plaintext over TCP at a fixed rate across N series, each step a
// fresh daemon on emptied archive tables (so every step starts with a cold
// start of N never-seen series), for Window; a step is sustained when
// the daemon acknowledged the offered rate, its cache drained after the
// window, nothing was dropped and its memory stayed under the budget.
//
// The daemon runs as a child process (`Exe serve --config ...`), as in
// production, so its CPU and memory are its own.
type ServeScenario struct {
	Exe        string        `json:"-"` // the pgts binary
	ConnString string        `json:"-"` // the database (its pgts archive tables are emptied before each step)
	Series     []int         `json:"series"`
	Rates      []float64     `json:"rates"` // points/s, tried in increasing order per series count
	Window     time.Duration `json:"-"`
	WindowS    float64       `json:"window_seconds"`
	// Drain bounds the wait, after the window, for the cache to be
	// written (default 3 flush intervals + 10 s).
	Drain         time.Duration `json:"-"`
	MaxMemory     int64         `json:"max_memory_bytes"`
	FlushInterval time.Duration `json:"-"`
	FlushS        float64       `json:"flush_interval_seconds"`
	// FlushWorkers is the daemon's flush-workers; 0 leaves its default.
	FlushWorkers       int      `json:"flush_workers,omitempty"`
	Archives           []string `json:"archives"`
	Step               string   `json:"step"`
	StopAtFirstFailure bool     `json:"stop_at_first_failure"`
	// LiveHeap: after each drained step, wait for the daemon's live heap
	// (up to gcWait) to report it with the cache the store accounts.
	LiveHeap bool `json:"live_heap"`
	// Quiet: after each drained step, leave the daemon idle this long,
	// then read its resident memory and PostgreSQL's proportional set
	// size (0: not measured).
	Quiet  time.Duration `json:"-"`
	QuietS float64       `json:"quiet_seconds,omitempty"`
	Dir    string        `json:"-"` // working directory for configs and daemon logs
	Logger *slog.Logger  `json:"-"`
}

// Validate checks the scenario.
func (s *ServeScenario) Validate() error {
	switch {
	case s.Exe == "":
		return errors.New("no pgts binary to run the daemon with")
	case len(s.Series) == 0 || len(s.Rates) == 0:
		return errors.New("need at least one series count and one rate")
	case s.Window < time.Second:
		return fmt.Errorf("window %v: at least 1s", s.Window)
	case s.MaxMemory < 1<<20:
		return fmt.Errorf("max memory %d: at least 1 MiB", s.MaxMemory)
	case s.FlushInterval < time.Second:
		return fmt.Errorf("flush interval %v: at least 1s", s.FlushInterval)
	case s.FlushWorkers < 0 || s.FlushWorkers > 64:
		return fmt.Errorf("flush workers %d: between 1 and 64, or 0 for the daemon's default", s.FlushWorkers)
	case len(s.Archives) == 0:
		return errors.New("no archives")
	case s.Quiet < 0 || s.Quiet > 10*time.Minute:
		return fmt.Errorf("quiet wait %v: between 0 and 10m", s.Quiet)
	}
	for _, n := range s.Series {
		if n < 1 || n > 10_000_000 {
			return fmt.Errorf("series %d: between 1 and 10,000,000", n)
		}
	}
	for _, r := range s.Rates {
		if !(r >= 1 && r <= 1e7) {
			return fmt.Errorf("rate %v: between 1 and 10,000,000 points/s", r)
		}
	}
	return nil
}

// ServeSample is one second of a step, read from the daemon's /metrics.
type ServeSample struct {
	T          float64 `json:"t"`           // seconds since the step started
	Acked      float64 `json:"acked_per_s"` // points the blaster wrote in that second
	Received   float64 `json:"received_per_s"`
	Added      float64 `json:"added_per_s"` // points the store accepted
	Slots      float64 `json:"slots_per_s"` // archive slots written to PostgreSQL
	CacheBytes int64   `json:"cache_bytes"`
	// SeriesBytes is the memory of all series' state
	// (pgts_store_series_bytes), CacheBytes only what is pending.
	SeriesBytes int64 `json:"series_bytes"`
	Waiting     int64 `json:"waiting_points"` // points receivers hold while the store is full
	RSS         int64 `json:"daemon_rss_bytes"`
	Series      int64 `json:"series"`
}

// ServeStep is one (series, rate) step.
type ServeStep struct {
	Series       int     `json:"series"`
	Rate         float64 `json:"offered_rate"`
	Sent         int64   `json:"sent"`
	Acked        int64   `json:"acked"`
	AckedRate    float64 `json:"acked_rate"`
	Added        int64   `json:"added"`
	Dropped      int64   `json:"dropped"`
	Refused      int64   `json:"refused"`
	Registered   int64   `json:"series_registered"`
	PeakCache    int64   `json:"peak_cache_bytes"`
	PeakRSS      int64   `json:"peak_daemon_rss_bytes"`
	DrainSeconds float64 `json:"drain_seconds"`
	// EndCache is the cache the store accounts once drained, and
	// LiveHeap the daemon's live heap then (as of the second collection
	// after the drain; 0 when none came within gcWait).
	EndCache int64 `json:"end_cache_bytes"`
	// EndSeriesBytes is pgts_store_series_bytes once drained (after the
	// quiet wait when there is one).
	EndSeriesBytes int64 `json:"end_series_bytes"`
	// After Quiet: the daemon's resident memory, the proportional set
	// size of the PostgreSQL server's processes, and the bytes of the
	// pgts schema's tables and indexes (measured after the daemon stops).
	QuietRSS    int64         `json:"quiet_daemon_rss_bytes,omitempty"`
	PostgresPSS int64         `json:"quiet_postgres_pss_bytes,omitempty"`
	DiskBytes   int64         `json:"disk_bytes"`
	LiveHeap    int64         `json:"end_live_heap_bytes"`
	DaemonCPU   float64       `json:"daemon_cpu_seconds"`
	ServerCPU   float64       `json:"server_cpu_seconds"`
	Sustained   bool          `json:"sustained"`
	Reason      string        `json:"reason,omitempty"` // why not sustained
	Samples     []ServeSample `json:"samples"`
}

// ServeResult is the whole run.
type ServeResult struct {
	Scenario ServeScenario `json:"scenario"`
	Steps    []ServeStep   `json:"steps"`
	// Best is the highest sustained rate per series count (0: none).
	Best     map[string]float64 `json:"best_sustained_rate"`
	Complete bool               `json:"complete"`
}

// RunServe runs every step; onStep is called after each.
func RunServe(ctx context.Context, s ServeScenario, onStep func(ServeStep)) (ServeResult, error) {
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.Drain == 0 {
		s.Drain = 3*s.FlushInterval + 10*time.Second
	}
	if s.Step == "" {
		s.Step = "10s"
	}
	s.WindowS, s.FlushS, s.QuietS = s.Window.Seconds(), s.FlushInterval.Seconds(), s.Quiet.Seconds()
	res := ServeResult{Scenario: s, Best: map[string]float64{}}
	if err := s.Validate(); err != nil {
		return res, err
	}
	pool, postmaster, err := servePool(ctx, s.ConnString)
	if err != nil {
		return res, err
	}
	defer pool.Close()
	for _, n := range s.Series {
		res.Best[strconv.Itoa(n)] = 0
		for _, rate := range s.Rates {
			if rate > float64(n) {
				// Graphite timestamps are whole seconds: a series would get
				// two points in one second.
				s.Logger.Info("skipping a rate above the series count", "series", n, "rate", rate)
				continue
			}
			step, err := runServeStep(ctx, s, pool, postmaster, n, rate)
			if err != nil {
				return res, err
			}
			res.Steps = append(res.Steps, step)
			if onStep != nil {
				onStep(step)
			}
			if step.Sustained && rate > res.Best[strconv.Itoa(n)] {
				res.Best[strconv.Itoa(n)] = rate
			}
			if !step.Sustained && s.StopAtFirstFailure {
				break
			}
		}
	}
	res.Complete = true
	return res, nil
}

// serveConfig is the daemon's configuration for a step: Graphite TCP and
// HTTP on free loopback ports, everything else off.
func serveConfig(s ServeScenario, graphite, httpAddr string) string {
	quoted := make([]string, len(s.Archives))
	for i, a := range s.Archives {
		quoted[i] = strconv.Quote(a)
	}
	workers := ""
	if s.FlushWorkers > 0 {
		workers = fmt.Sprintf("flush-workers = %d\n", s.FlushWorkers)
	}
	return fmt.Sprintf(`max-memory = %d
max-series = 10000000
flush-interval = %q
%s[graphite]
tcp = %q
udp = ""
[pickle]
tcp = ""
[statsd]
udp = ""
tcp = ""
[http]
addr = %q
[[ds]]
regexp = "."
step = %q
archives = [%s]
`, s.MaxMemory, s.FlushInterval.String(), workers, graphite, httpAddr, s.Step, strings.Join(quoted, ", "))
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// emptyArchives removes what an earlier step stored, so each step starts
// with a cold start.
func emptyArchives(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := pool.Exec(ctx, `DO $$ BEGIN
		IF to_regclass('pgts.metric') IS NOT NULL THEN
			TRUNCATE pgts.metric, pgts.rra_data, pgts.ds_state, pgts.rra_bundle;
		END IF; END $$`)
	if err != nil {
		return fmt.Errorf("emptying the archive tables: %w", err)
	}
	_, err = pool.Exec(ctx, "CHECKPOINT")
	return err
}

func runServeStep(ctx context.Context, s ServeScenario, pool *pgxpool.Pool, postmaster, n int, rate float64) (ServeStep, error) {
	step := ServeStep{Series: n, Rate: rate}
	if err := emptyArchives(ctx, pool); err != nil {
		return step, err
	}
	gAddr, err := freePort()
	if err != nil {
		return step, err
	}
	hAddr, err := freePort()
	if err != nil {
		return step, err
	}
	cfgPath := filepath.Join(s.Dir, fmt.Sprintf("serve-%d-%.0f.toml", n, rate))
	if err := os.WriteFile(cfgPath, []byte(serveConfig(s, gAddr, hAddr)), 0o644); err != nil {
		return step, err
	}
	logPath := filepath.Join(s.Dir, fmt.Sprintf("serve-%d-%.0f.log", n, rate))
	logf, err := os.Create(logPath)
	if err != nil {
		return step, err
	}
	defer logf.Close()
	closeOnExecAll() // the daemon gets no inherited descriptor either
	cmd := exec.Command(s.Exe, "serve", "--config", cfgPath, "--db", s.ConnString)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return step, fmt.Errorf("starting the daemon: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopDaemon := func() error {
		cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck // it may have exited
		select {
		case err := <-exited:
			return err
		case <-time.After(2 * time.Minute):
			cmd.Process.Kill() //nolint:errcheck
			<-exited
			return errors.New("the daemon did not stop within 2 minutes of SIGTERM")
		}
	}
	client := &http.Client{Timeout: 5 * time.Second}
	metricsURL := "http://" + hAddr + "/metrics"
	// Wait until the daemon answers.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := scrape(ctx, client, metricsURL); err == nil {
			break
		}
		select {
		case err := <-exited:
			return step, fmt.Errorf("the daemon exited at start (%v); see %s", err, logPath)
		default:
		}
		if time.Now().After(deadline) {
			stopDaemon() //nolint:errcheck
			return step, fmt.Errorf("the daemon did not answer within 30 s; see %s", logPath)
		}
		select {
		case <-ctx.Done():
			stopDaemon() //nolint:errcheck
			return step, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}

	cpu0, srv0 := procCPU(cmd.Process.Pid), ServerTimes(postmaster)
	bcfg := blast.DefaultConfig()
	bcfg.Protocol, bcfg.Addr, bcfg.Rate, bcfg.Series, bcfg.Duration = "graphite", gAddr, rate, n, s.Window
	bcfg.Prefix, bcfg.BatchSize = "bench", max(100, min(10000, int(rate/100)))
	bl, err := blast.New(bcfg)
	if err != nil {
		stopDaemon() //nolint:errcheck
		return step, err
	}
	start := time.Now()
	type blastDone struct {
		st  blast.Stats
		err error
	}
	bdone := make(chan blastDone, 1)
	go func() {
		st, err := bl.Run(ctx)
		bdone <- blastDone{st, err}
	}()
	var prev map[string]float64
	var prevAcked int64
	sample := func() (map[string]float64, error) {
		m, err := scrape(ctx, client, metricsURL)
		if err != nil {
			return nil, err
		}
		acked := bl.Stats().Acked
		sm := ServeSample{T: time.Since(start).Seconds(), Acked: float64(acked - prevAcked),
			CacheBytes: int64(m["pgts_store_cache_bytes"]), SeriesBytes: int64(m["pgts_store_series_bytes"]), Waiting: int64(m["pgts_serve_sink_waiting_points"]),
			RSS: int64(m["process_resident_memory_bytes"]), Series: int64(m["pgts_store_series"])}
		if prev != nil {
			sm.Received = m["pgts_serve_points_received_total"] - prev["pgts_serve_points_received_total"]
			sm.Added = m["pgts_store_points_added_total"] - prev["pgts_store_points_added_total"]
			sm.Slots = m["pgts_store_slots_stored_total"] - prev["pgts_store_slots_stored_total"]
		}
		prevAcked = acked
		step.Samples = append(step.Samples, sm)
		step.PeakCache = max(step.PeakCache, sm.CacheBytes)
		step.PeakRSS = max(step.PeakRSS, sm.RSS)
		prev = m
		return m, nil
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var bd blastDone
blasting:
	for {
		select {
		case bd = <-bdone:
			break blasting
		case <-tick.C:
			if _, err := sample(); err != nil {
				s.Logger.Warn("scraping the daemon", "err", err)
			}
		}
	}
	step.Sent, step.Acked = bd.st.Sent, bd.st.Acked
	step.AckedRate = bd.st.Rate()
	// Drain: the store has taken every point and its cache is back to
	// what the series' state alone needs (closed slots written).
	drainStart := time.Now()
	var last map[string]float64
	drained := false
	for time.Since(drainStart) < s.Drain {
		<-tick.C
		m, err := sample()
		if err != nil {
			continue
		}
		last = m
		if m["pgts_store_points_added_total"]+m["pgts_store_points_refused_total"] >= float64(step.Acked) &&
			m["pgts_store_unflushed_series"] == 0 && m["pgts_store_buffered_points"] == 0 &&
			m["pgts_store_series"] >= float64(min(int64(n), step.Acked)) {
			drained = true
			break
		}
	}
	step.DrainSeconds = time.Since(drainStart).Seconds()
	step.DaemonCPU = procCPU(cmd.Process.Pid) - cpu0
	step.ServerCPU = ServerTimes(postmaster).Sub(srv0).CPUSeconds
	if drained && s.LiveHeap {
		step.EndCache, step.LiveHeap = liveAfterGC(ctx, client, metricsURL, last)
	}
	if last != nil {
		step.EndSeriesBytes = int64(last["pgts_store_series_bytes"])
	}
	if drained && s.Quiet > 0 {
		select {
		case <-ctx.Done():
		case <-time.After(s.Quiet):
		}
		step.QuietRSS = procRSS(cmd.Process.Pid)
		step.PostgresPSS = TreePSS(postmaster)
		if m, err := scrape(ctx, client, metricsURL); err == nil {
			step.EndSeriesBytes = int64(m["pgts_store_series_bytes"])
		}
	}
	stopErr := stopDaemon()
	if last != nil {
		step.Added = int64(last["pgts_store_points_added_total"])
		step.Dropped = int64(last["pgts_serve_points_dropped_total"])
		step.Refused = int64(last["pgts_store_points_refused_total"])
	}
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM pgts.metric").Scan(&step.Registered); err != nil {
		return step, err
	}
	if err := pool.QueryRow(ctx, pgtsDiskBytesSQL).Scan(&step.DiskBytes); err != nil {
		return step, fmt.Errorf("sizing the pgts schema: %w", err)
	}
	switch {
	case bd.err != nil:
		step.Reason = "blaster: " + bd.err.Error()
	case step.AckedRate < 0.98*rate:
		step.Reason = fmt.Sprintf("acknowledged %.0f points/s, under 98%% of %.0f", step.AckedRate, rate)
	case !drained:
		step.Reason = fmt.Sprintf("the cache did not drain within %v of the window", s.Drain)
	case step.Dropped > 0 || step.Refused > 0:
		step.Reason = fmt.Sprintf("%d points dropped, %d refused", step.Dropped, step.Refused)
	case step.PeakCache > s.MaxMemory:
		step.Reason = fmt.Sprintf("cache peaked at %d bytes, over the %d budget", step.PeakCache, s.MaxMemory)
	case stopErr != nil:
		step.Reason = "daemon stop: " + stopErr.Error()
	case step.Registered != min(int64(n), step.Acked):
		step.Reason = fmt.Sprintf("%d series registered, want %d", step.Registered, min(int64(n), step.Acked))
	default:
		step.Sustained = true
	}
	return step, ctx.Err()
}

// gcWait bounds the wait for the idle daemon's next two garbage
// collections: the Go runtime forces one every 2 minutes.
const gcWait = 270 * time.Second

// liveAfterGC waits for the second garbage collection of the daemon after
// the scrape m, then returns the cache its store accounts and its live
// heap (what that collection marked). The first may have started while
// the last flush ran, and what is allocated while a collection marks
// counts as live: the second marks an idle daemon's heap. Both are 0 when
// no second collection came within gcWait.
func liveAfterGC(ctx context.Context, c *http.Client, url string, m map[string]float64) (cache, live int64) {
	gcs := m["go_gc_duration_seconds_count"] + 1
	deadline := time.Now().Add(gcWait)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return 0, 0
		case <-time.After(time.Second):
		}
		n, err := scrape(ctx, c, url)
		if err != nil {
			continue
		}
		if n["go_gc_duration_seconds_count"] > gcs {
			return int64(n["pgts_store_cache_bytes"]), int64(n["go_gc_heap_live_bytes"])
		}
	}
	return 0, 0
}

// procCPU is the user+system CPU seconds of one process.
func procCPU(pid int) float64 {
	self, _, _, err := statTimes(pid)
	if err != nil {
		return 0
	}
	return self
}

// scrape reads a Prometheus text exposition and sums each metric over its
// labels.
func scrape(ctx context.Context, c *http.Client, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return parseExposition(io.LimitReader(resp.Body, 16<<20))
}

func parseExposition(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		name := line[:sp]
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name = name[:i]
		}
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			continue
		}
		out[name] += v
	}
	return out, sc.Err()
}

// pgtsDiskBytesSQL sums the tables of the pgts schema with their indexes
// and TOAST.
const pgtsDiskBytesSQL = `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
	FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE n.nspname = 'pgts' AND c.relkind IN ('r', 'm')`

// procRSS is the resident memory of one process (VmRSS), 0 when unknown.
func procRSS(pid int) int64 {
	return statusField(fmt.Sprintf("/proc/%d/status", pid), "VmRSS:")
}

// statusField reads a "Name:   N kB" line of a /proc file, in bytes.
func statusField(path, name string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0
			}
			n, _ := strconv.ParseInt(f[0], 10, 64)
			return n << 10
		}
	}
	return 0
}

// TreePSS is the proportional set size of a process and its children
// (a postmaster and its server processes): shared memory counts once,
// split among the processes mapping it. 0 when it cannot be read.
func TreePSS(root int) int64 {
	if root <= 0 {
		return 0
	}
	total := statusField(fmt.Sprintf("/proc/%d/smaps_rollup", root), "Pss:")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return total
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == root {
			continue
		}
		if _, _, ppid, err := statTimes(pid); err == nil && ppid == root {
			total += statusField(fmt.Sprintf("/proc/%d/smaps_rollup", pid), "Pss:")
		}
	}
	return total
}

// servePool opens the pool a serve benchmark reads the archives through,
// and finds the postmaster whose processes' CPU it counts.
func servePool(ctx context.Context, conn string) (*pgxpool.Pool, int, error) {
	pool, err := pg.NewPool(ctx, conn, 2)
	if err != nil {
		return nil, 0, err
	}
	var backend int
	if err := pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		pool.Close()
		return nil, 0, err
	}
	return pool, PostmasterOf(backend), nil
}
