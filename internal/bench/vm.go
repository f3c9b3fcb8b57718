package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// VMConfig is one VictoriaMetrics process of a side-by-side benchmark:
// single-node victoria-metrics taking Graphite plaintext over TCP and
// answering its HTTP API (PromQL, the Graphite render API, /metrics) on
// free loopback ports, with its data in a fresh temporary directory.
type VMConfig struct {
	Exe string // the victoria-metrics binary
	// Dir is where the temporary data directory and the log go (the
	// data directory is removed by Stop; the log is kept).
	Dir string
	// Step is -search.graphiteStorageStep: the interval between the
	// stored points, which its render API needs to align them.
	Step time.Duration
	// Name labels the log file (vm-<Name>.log).
	Name   string
	Logger *slog.Logger
}

// Validate checks the config.
func (c *VMConfig) Validate() error {
	switch {
	case c.Exe == "":
		return errors.New("no victoria-metrics binary")
	case c.Dir == "":
		return errors.New("no directory for the victoria-metrics data")
	case c.Step < time.Second:
		return fmt.Errorf("graphite storage step %v: at least 1s", c.Step)
	}
	return nil
}

// VM is a running victoria-metrics. Its process leads its own process
// group, which Stop kills whole, and gets SIGKILL if the benchmark
// process dies first (Pdeathsig); it inherits no descriptor beyond
// /dev/null for its input and its log for its output.
type VM struct {
	cfg          VMConfig
	GraphiteAddr string // host:port of Graphite plaintext (TCP)
	HTTPAddr     string // host:port of the HTTP API
	DataDir      string
	LogPath      string
	cmd          *exec.Cmd
	exited       chan error
	client       *http.Client
	stopped      bool
}

// vmStopWait bounds the wait for victoria-metrics to exit after SIGTERM
// (it flushes its in-memory parts) before the group is killed.
var vmStopWait = time.Minute

// vmArgs are victoria-metrics' flags for a benchmark: no response cache
// (the benchmarks repeat the same requests), points visible as soon as
// they are stored, no limit on the series a query may scan, and ten
// minutes for a query (counting the points of a million series took more
// than its default 30 s on the shared 2 cores, and the run lost its
// figures).
func vmArgs(dataDir, graphite, httpAddr string, step time.Duration) []string {
	return []string{
		"-storageDataPath=" + dataDir,
		"-graphiteListenAddr=" + graphite,
		"-httpListenAddr=" + httpAddr,
		"-search.graphiteStorageStep=" + step.String(),
		"-search.latencyOffset=1s",
		"-search.disableCache",
		"-search.maxUniqueTimeseries=100000000",
		"-search.maxQueryDuration=10m",
		"-retentionPeriod=100y",
	}
}

// StartVM starts victoria-metrics and waits until it answers /health.
func StartVM(ctx context.Context, cfg VMConfig) (*VM, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Name == "" {
		cfg.Name = "vm"
	}
	data, err := os.MkdirTemp(cfg.Dir, "vm-data-")
	if err != nil {
		return nil, fmt.Errorf("victoria-metrics data directory: %w", err)
	}
	v := &VM{cfg: cfg, DataDir: data, LogPath: filepath.Join(cfg.Dir, "vm-"+cfg.Name+".log"),
		exited: make(chan error, 1), client: &http.Client{Timeout: 10 * time.Minute}}
	fail := func(err error) (*VM, error) {
		os.RemoveAll(data) //nolint:errcheck // best effort after a failed start
		return nil, err
	}
	if v.GraphiteAddr, err = freePort(); err != nil {
		return fail(err)
	}
	if v.HTTPAddr, err = freePort(); err != nil {
		return fail(err)
	}
	logf, err := os.Create(v.LogPath)
	if err != nil {
		return fail(err)
	}
	defer logf.Close() // the child has its own copy
	// Go opens its own files close-on-exec, but not what this process
	// inherited (a pipe to tee, from make or a shell): the child would
	// hold it open after this process ends.
	closeOnExecAll()
	v.cmd = exec.Command(cfg.Exe, vmArgs(data, v.GraphiteAddr, v.HTTPAddr, cfg.Step)...)
	v.cmd.Stdout, v.cmd.Stderr = logf, logf
	v.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := v.cmd.Start(); err != nil {
		return fail(fmt.Errorf("starting victoria-metrics %q: %w", cfg.Exe, err))
	}
	go func() { v.exited <- v.cmd.Wait() }()
	cfg.Logger.Info("victoria-metrics started", "pid", v.cmd.Process.Pid, "graphite", v.GraphiteAddr, "http", v.HTTPAddr, "data", data)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if st, _, err := v.get(ctx, "/health", nil); err == nil && st == http.StatusOK {
			return v, nil
		}
		select {
		case err := <-v.exited:
			v.exited <- err
			v.Stop() //nolint:errcheck // it has exited; Stop removes the data
			return nil, fmt.Errorf("victoria-metrics exited at start (%v); see %s", err, v.LogPath)
		case <-ctx.Done():
			v.Stop() //nolint:errcheck
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			v.Stop() //nolint:errcheck
			return nil, fmt.Errorf("victoria-metrics did not answer within 60 s; see %s", v.LogPath)
		}
	}
}

// Pid is the victoria-metrics process id.
func (v *VM) Pid() int { return v.cmd.Process.Pid }

// URL is the base URL of its HTTP API.
func (v *VM) URL() string { return "http://" + v.HTTPAddr }

// Stop sends SIGTERM to its process group, kills the group if it has not
// exited within vmStopWait, and removes the data directory. Safe to call
// more than once.
func (v *VM) Stop() error {
	if v.stopped {
		return nil
	}
	v.stopped = true
	defer os.RemoveAll(v.DataDir) //nolint:errcheck // best effort
	pgid := v.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM) //nolint:errcheck // it may have exited
	var err error
	select {
	case err = <-v.exited:
	case <-time.After(vmStopWait):
		syscall.Kill(-pgid, syscall.SIGKILL) //nolint:errcheck
		<-v.exited
		err = fmt.Errorf("victoria-metrics did not stop within %v of SIGTERM", vmStopWait)
	}
	// Whatever the leader left in its group goes with it.
	syscall.Kill(-pgid, syscall.SIGKILL) //nolint:errcheck // usually nothing left
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signaled() {
		return nil // it died of the group's SIGTERM or SIGKILL
	}
	return err
}

func (v *VM) get(ctx context.Context, path string, q url.Values) (int, []byte, error) {
	u := v.URL() + path
	if q != nil {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := v.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp.StatusCode, body, err
}

// Metrics scrapes its /metrics, each metric summed over its labels.
func (v *VM) Metrics(ctx context.Context) (map[string]float64, error) {
	return scrape(ctx, v.client, v.URL()+"/metrics")
}

// Flush makes every point it took searchable and written to its data
// directory (/internal/force_flush).
func (v *VM) Flush(ctx context.Context) error {
	st, body, err := v.get(ctx, "/internal/force_flush", nil)
	if err != nil {
		return fmt.Errorf("victoria-metrics force_flush: %w", err)
	}
	if st != http.StatusOK {
		return fmt.Errorf("victoria-metrics force_flush: %d %.200s", st, body)
	}
	return nil
}

// Query runs an instant PromQL query at t and returns the value of its
// only series (0 when the answer is empty).
func (v *VM) Query(ctx context.Context, query string, t time.Time) (float64, error) {
	q := url.Values{"query": {query}, "time": {strconv.FormatInt(t.Unix(), 10)}}
	st, body, err := v.get(ctx, "/api/v1/query", q)
	if err != nil {
		return 0, fmt.Errorf("victoria-metrics query %q: %w", query, err)
	}
	if st != http.StatusOK {
		return 0, fmt.Errorf("victoria-metrics query %q: %d %.300s", query, st, body)
	}
	return parseVMScalar(body)
}

func parseVMScalar(body []byte) (float64, error) {
	var r struct {
		Status string `json:"status"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return 0, fmt.Errorf("victoria-metrics answer %.200q: %w", body, err)
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("victoria-metrics answer %.200q: status %q", body, r.Status)
	}
	switch len(r.Data.Result) {
	case 0:
		return 0, nil
	case 1:
	default:
		return 0, fmt.Errorf("victoria-metrics answer: %d series, want one", len(r.Data.Result))
	}
	s, ok := r.Data.Result[0].Value[1].(string)
	if !ok {
		return 0, fmt.Errorf("victoria-metrics answer %.200q: value is not a string", body)
	}
	return strconv.ParseFloat(s, 64)
}

// Stored counts the series whose name starts with prefix+"." and their
// points with timestamps in (t-lookback, t].
func (v *VM) Stored(ctx context.Context, prefix string, t time.Time, lookback time.Duration) (series, points int64, err error) {
	sel := fmt.Sprintf(`{__name__=~%q}`, regexpQuote(prefix)+`[.].*`)
	w := strconv.FormatInt(int64(lookback.Seconds())+1, 10) + "s"
	s, err := v.Query(ctx, fmt.Sprintf("count(last_over_time(%s[%s]))", sel, w), t)
	if err != nil {
		return 0, 0, err
	}
	p, err := v.Query(ctx, fmt.Sprintf("sum(count_over_time(%s[%s]))", sel, w), t)
	if err != nil {
		return 0, 0, err
	}
	return int64(s), int64(p), nil
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// DiskBytes is the size of the files in its data directory.
func (v *VM) DiskBytes() int64 { return dirBytes(v.DataDir) }

func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error { //nolint:errcheck // a file may go while we walk
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// closeOnExecAll marks every descriptor of this process above the
// standard ones close-on-exec, so that a child gets only what os/exec
// hands it.
func closeOnExecAll() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
}
