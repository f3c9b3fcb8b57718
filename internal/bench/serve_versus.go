package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgts/pgts/internal/blast"
)

// Systems of a side-by-side run.
const (
	SystemPgts = "pgts"
	SystemVM   = "vm"
)

// ServeVersus runs pgts serve and VictoriaMetrics side by side: for each
// series count and rate, Repeats rounds, each running both systems one
// after the other with the same blaster, series, rate and window, in
// alternating order (pgts then VictoriaMetrics, then the other way), so
// that a slow spell of a shared machine touches both alike.
//
// Serve is the pgts scenario (every step a fresh daemon on emptied
// archive tables); its Quiet wait applies to both systems.
type ServeVersus struct {
	Serve   ServeScenario
	VMExe   string // the victoria-metrics binary
	Repeats int
	// Contention keeps one core busy with a busy-loop process (the same
	// for both systems) while each system is measured.
	Contention bool
}

// Validate checks the run.
func (v *ServeVersus) Validate() error {
	if err := v.Serve.Validate(); err != nil {
		return err
	}
	switch {
	case v.VMExe == "":
		return errors.New("no victoria-metrics binary")
	case v.Repeats < 1 || v.Repeats > 20:
		return fmt.Errorf("repeats %d: between 1 and 20", v.Repeats)
	}
	fi, err := os.Stat(v.VMExe)
	if err != nil {
		return fmt.Errorf("victoria-metrics binary: %w", err)
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("victoria-metrics binary %q is not an executable file", v.VMExe)
	}
	return nil
}

// VersusRun is one system's run of one round.
type VersusRun struct {
	System       string  `json:"system"`
	Repeat       int     `json:"repeat"`
	Series       int     `json:"series"`
	Rate         float64 `json:"offered_rate"`
	Contention   bool    `json:"contention"`
	Acked        int64   `json:"acked"`
	AckedRate    float64 `json:"acked_rate"`
	StoredSeries int64   `json:"stored_series"`
	// StoredPoints: pgts, the points its store accepted and wrote (the
	// archives keep consolidated slots, not points); VictoriaMetrics,
	// the samples a count_over_time over the window finds.
	StoredPoints int64 `json:"stored_points"`
	// DaemonCPU is the system's process; ServerCPU pgts' PostgreSQL.
	DaemonCPU   float64 `json:"daemon_cpu_seconds"`
	ServerCPU   float64 `json:"server_cpu_seconds"`
	QuietRSS    int64   `json:"quiet_rss_bytes"`
	PostgresPSS int64   `json:"quiet_postgres_pss_bytes,omitempty"`
	SeriesBytes int64   `json:"series_bytes,omitempty"` // pgts_store_series_bytes
	DiskBytes   int64   `json:"disk_bytes"`
	Reason      string  `json:"reason,omitempty"` // what went wrong, if anything
}

// CPUPerPoint is microseconds of CPU (the system's process, and for
// pgts its PostgreSQL server) per acknowledged point.
func (r VersusRun) CPUPerPoint() float64 {
	if r.Acked == 0 {
		return 0
	}
	return (r.DaemonCPU + r.ServerCPU) / float64(r.Acked) * 1e6
}

// VersusResult is the whole run.
type VersusResult struct {
	Series     []int       `json:"series"`
	Rates      []float64   `json:"rates"`
	WindowS    float64     `json:"window_seconds"`
	QuietS     float64     `json:"quiet_seconds"`
	Repeats    int         `json:"repeats"`
	Contention bool        `json:"contention"`
	Runs       []VersusRun `json:"runs"`
	Complete   bool        `json:"complete"`
}

// RunServeVersus runs every round; onRun is called after each system's
// run.
func RunServeVersus(ctx context.Context, v ServeVersus, onRun func(VersusRun)) (VersusResult, error) {
	s := &v.Serve
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
	res := VersusResult{Series: s.Series, Rates: s.Rates, WindowS: s.WindowS, QuietS: s.QuietS, Repeats: v.Repeats,
		Contention: v.Contention}
	if err := v.Validate(); err != nil {
		return res, err
	}
	step, err := time.ParseDuration(s.Step)
	if err != nil {
		return res, fmt.Errorf("step %q: %w", s.Step, err)
	}
	pool, postmaster, err := servePool(ctx, s.ConnString)
	if err != nil {
		return res, err
	}
	defer pool.Close()
	for _, n := range s.Series {
		for _, rate := range s.Rates {
			if rate > float64(n) {
				s.Logger.Info("skipping a rate above the series count", "series", n, "rate", rate)
				continue
			}
			for r := range v.Repeats {
				order := []string{SystemPgts, SystemVM}
				if r%2 == 1 {
					order = []string{SystemVM, SystemPgts}
				}
				for _, sys := range order {
					run, err := versusRun(ctx, v, sys, pool, postmaster, n, rate, step)
					run.Repeat = r
					res.Runs = append(res.Runs, run)
					if onRun != nil {
						onRun(run)
					}
					if err != nil {
						return res, err
					}
				}
			}
		}
	}
	res.Complete = true
	return res, nil
}

func versusRun(ctx context.Context, v ServeVersus, sys string, pool *pgxpool.Pool, postmaster, n int, rate float64, step time.Duration) (VersusRun, error) {
	run := VersusRun{System: sys, Series: n, Rate: rate, Contention: v.Contention}
	if v.Contention {
		stop, err := startBusyLoop(v.Serve.Dir)
		if err != nil {
			return run, err
		}
		defer stop()
	}
	if sys == SystemVM {
		err := runVMStep(ctx, v.Serve, v.VMExe, n, rate, step, &run)
		return run, err
	}
	st, err := runServeStep(ctx, v.Serve, pool, postmaster, n, rate)
	run.Acked, run.AckedRate = st.Acked, st.AckedRate
	run.StoredSeries, run.StoredPoints = st.Registered, st.Added
	run.DaemonCPU, run.ServerCPU = st.DaemonCPU, st.ServerCPU
	run.QuietRSS, run.PostgresPSS, run.SeriesBytes, run.DiskBytes = st.QuietRSS, st.PostgresPSS, st.EndSeriesBytes, st.DiskBytes
	run.Reason = st.Reason
	return run, err
}

// runVMStep is one VictoriaMetrics run: a fresh process on an empty data
// directory, the blaster for the window, then the wait until it has
// inserted every acknowledged point (bounded by the scenario's Drain), a
// forced flush, the count of what it stored, the quiet wait and its
// resident memory and data directory size.
func runVMStep(ctx context.Context, s ServeScenario, exe string, n int, rate float64, step time.Duration, run *VersusRun) error {
	vm, err := StartVM(ctx, VMConfig{Exe: exe, Dir: s.Dir, Step: step, Name: fmt.Sprintf("%d-%.0f-%d", n, rate, time.Now().UnixNano()),
		Logger: s.Logger})
	if err != nil {
		return err
	}
	defer vm.Stop() //nolint:errcheck // stopped below; this covers early returns
	cpu0 := procCPU(vm.Pid())
	bcfg := blast.DefaultConfig()
	bcfg.Protocol, bcfg.Addr, bcfg.Rate, bcfg.Series, bcfg.Duration = "graphite", vm.GraphiteAddr, rate, n, s.Window
	bcfg.Prefix, bcfg.BatchSize = "bench", max(100, min(10000, int(rate/100)))
	bl, err := blast.New(bcfg)
	if err != nil {
		return err
	}
	start := time.Now()
	st, berr := bl.Run(ctx)
	run.Acked, run.AckedRate = st.Acked, st.Rate()
	if berr != nil {
		run.Reason = "blaster: " + berr.Error()
	}
	// Drain: every acknowledged point inserted.
	drained := false
	for deadline := time.Now().Add(s.Drain); time.Now().Before(deadline); {
		m, err := vm.Metrics(ctx)
		if err == nil && m["vm_rows_inserted_total"] >= float64(st.Acked) {
			drained = true
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	if err := vm.Flush(ctx); err != nil {
		return err
	}
	run.DaemonCPU = procCPU(vm.Pid()) - cpu0
	if !drained && run.Reason == "" {
		run.Reason = fmt.Sprintf("not every acknowledged point was inserted within %v of the window", s.Drain)
	}
	run.StoredSeries, run.StoredPoints, err = vm.Stored(ctx, bcfg.Prefix, time.Now().Add(time.Minute), time.Since(start)+2*time.Minute)
	if err != nil {
		return err
	}
	if s.Quiet > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.Quiet):
		}
	}
	run.QuietRSS = procRSS(vm.Pid())
	if err := vm.Flush(ctx); err != nil {
		return err
	}
	run.DiskBytes = vm.DiskBytes()
	if err := vm.Stop(); err != nil && run.Reason == "" {
		run.Reason = "stop: " + err.Error()
	}
	switch {
	case run.Reason != "":
	case run.AckedRate < 0.98*rate:
		run.Reason = fmt.Sprintf("acknowledged %.0f points/s, under 98%% of %.0f", run.AckedRate, rate)
	case run.StoredPoints != run.Acked:
		run.Reason = fmt.Sprintf("%d points stored, %d acknowledged", run.StoredPoints, run.Acked)
	}
	return ctx.Err()
}

// startBusyLoop starts a process that keeps one core busy (a shell loop)
// in its own process group; stop kills the group and waits for it.
func startBusyLoop(dir string) (stop func(), err error) {
	closeOnExecAll()
	cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the busy loop: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }() //nolint:errcheck // killed on purpose
	return func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) //nolint:errcheck
		<-exited
	}, nil
}

// VersusSummary is the median of one system's repeats at one series count
// and rate.
type VersusSummary struct {
	System                 string
	Series                 int
	Rate                   float64
	Runs                   int
	AckedRate, CPUPerPoint float64
	DaemonCPU, ServerCPU   float64 // per point, µs
	StoredSeries           float64
	StoredPoints           float64
	QuietRSS, PostgresPSS  float64
	SeriesBytes, DiskBytes float64
	Reasons                []string
}

// SummarizeVersus takes the medians of each system's repeats per series
// count and rate, in order of first appearance.
func SummarizeVersus(runs []VersusRun) []VersusSummary {
	var out []VersusSummary
	idx := map[string]int{}
	groups := map[string][]VersusRun{}
	for _, r := range runs {
		k := fmt.Sprintf("%s/%d/%g", r.System, r.Series, r.Rate)
		if _, ok := idx[k]; !ok {
			idx[k] = len(out)
			out = append(out, VersusSummary{System: r.System, Series: r.Series, Rate: r.Rate})
		}
		groups[k] = append(groups[k], r)
	}
	for k, i := range idx {
		g := groups[k]
		med := func(f func(VersusRun) float64) float64 {
			v := make([]float64, len(g))
			for j, r := range g {
				v[j] = f(r)
			}
			return median(v)
		}
		perPoint := func(cpu float64, r VersusRun) float64 {
			if r.Acked == 0 {
				return 0
			}
			return cpu / float64(r.Acked) * 1e6
		}
		s := &out[i]
		s.Runs = len(g)
		s.AckedRate = med(func(r VersusRun) float64 { return r.AckedRate })
		s.CPUPerPoint = med(VersusRun.CPUPerPoint)
		s.DaemonCPU = med(func(r VersusRun) float64 { return perPoint(r.DaemonCPU, r) })
		s.ServerCPU = med(func(r VersusRun) float64 { return perPoint(r.ServerCPU, r) })
		s.StoredSeries = med(func(r VersusRun) float64 { return float64(r.StoredSeries) })
		s.StoredPoints = med(func(r VersusRun) float64 { return float64(r.StoredPoints) })
		s.QuietRSS = med(func(r VersusRun) float64 { return float64(r.QuietRSS) })
		s.PostgresPSS = med(func(r VersusRun) float64 { return float64(r.PostgresPSS) })
		s.SeriesBytes = med(func(r VersusRun) float64 { return float64(r.SeriesBytes) })
		s.DiskBytes = med(func(r VersusRun) float64 { return float64(r.DiskBytes) })
		for _, r := range g {
			if r.Reason != "" {
				s.Reasons = append(s.Reasons, fmt.Sprintf("repeat %d: %s", r.Repeat+1, r.Reason))
			}
		}
	}
	return out
}

// WriteVersusTable prints one table per series count and rate: a row per
// measure, a column per system and their ratio, each figure the median
// of the repeats.
func WriteVersusTable(w io.Writer, res VersusResult) error {
	sums := SummarizeVersus(res.Runs)
	type pair struct{ p, v *VersusSummary }
	var keys []string
	pairs := map[string]*pair{}
	for i := range sums {
		s := &sums[i]
		k := fmt.Sprintf("%d/%g", s.Series, s.Rate)
		if pairs[k] == nil {
			pairs[k] = &pair{}
			keys = append(keys, k)
		}
		if s.System == SystemPgts {
			pairs[k].p = s
		} else {
			pairs[k].v = s
		}
	}
	mib := func(b float64) string {
		if b < 100<<20 {
			return strconv.FormatFloat(b/(1<<20), 'f', 1, 64)
		}
		return commasF(b / (1 << 20))
	}
	cond := "quiet"
	if res.Contention {
		cond = "one core kept busy"
	}
	for _, k := range keys {
		p, v := pairs[k].p, pairs[k].v
		if p == nil || v == nil {
			continue
		}
		tw := &errWriter{w: w}
		runs := "one run each"
		if p.Runs > 1 {
			runs = "medians of " + strconv.Itoa(p.Runs) + " repeats (interleaved)"
		}
		tw.printf("%s series @ %s points/s, %s s window, %s, %s\n",
			commasF(float64(p.Series)), commasF(p.Rate), strconv.FormatFloat(res.WindowS, 'f', -1, 64), cond, runs)
		tw.printf("\n| measure | pgts serve (+ PostgreSQL) | VictoriaMetrics | pgts/VM |\n| --- | ---: | ---: | ---: |\n")
		row := func(name string, a, b float64, f func(float64) string) {
			ratio := "-"
			if b != 0 {
				ratio = strconv.FormatFloat(a/b, 'f', 2, 64)
			}
			tw.printf("| %s | %s | %s | %s |\n", name, f(a), f(b), ratio)
		}
		one := func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
		row("offered points/s", p.Rate, v.Rate, commasF)
		row("acked points/s", p.AckedRate, v.AckedRate, commasF)
		row("stored series", p.StoredSeries, v.StoredSeries, commasF)
		row("stored points", p.StoredPoints, v.StoredPoints, commasF)
		row("CPU µs/point", p.CPUPerPoint, v.CPUPerPoint, one)
		tw.printf("| … of which the daemon | %s | %s | |\n", one(p.DaemonCPU), one(v.DaemonCPU))
		tw.printf("| … of which PostgreSQL | %s | - | |\n", one(p.ServerCPU))
		quiet := "RSS after " + strconv.FormatFloat(res.QuietS, 'f', -1, 64) + " s quiet, MiB"
		row(quiet, p.QuietRSS, v.QuietRSS, mib)
		tw.printf("| … KiB per series | %s | %s | |\n", one(p.QuietRSS/1024/float64(p.Series)), one(v.QuietRSS/1024/float64(v.Series)))
		tw.printf("| PostgreSQL PSS beside, MiB | %s | - | |\n", mib(p.PostgresPSS))
		tw.printf("| pgts_store_series_bytes, MiB | %s | - | |\n", mib(p.SeriesBytes))
		row("bytes on disk, MiB", p.DiskBytes, v.DiskBytes, mib)
		sep := "\n"
		for _, s := range []*VersusSummary{p, v} {
			for _, r := range s.Reasons {
				tw.printf("%s- %s, %s\n", sep, systemName(s.System), r)
				sep = ""
			}
		}
		tw.printf("\n")
		if tw.err != nil {
			return tw.err
		}
	}
	return nil
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func systemName(s string) string {
	if s == SystemVM {
		return "VictoriaMetrics"
	}
	return "pgts serve"
}

// commasF prints a number rounded to an integer with thousands separators.
func commasF(x float64) string {
	n := int64(x + 0.5)
	if x < 0 {
		n = int64(x - 0.5)
	}
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
