package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/blast"
)

// The test binary plays victoria-metrics when fakeVMEnv is set: it
// writes its descriptors at start and the pid of a child it leaves in its
// process group to the file named by fakeVMEnv, answers /health,
// /metrics and /internal/force_flush, and exits on SIGTERM unless
// fakeVMIgnoreTerm is set.
const (
	fakeVMEnv        = "PGTS_BENCH_FAKE_VM_OUT"
	fakeVMIgnoreTerm = "PGTS_BENCH_FAKE_VM_IGNORE_TERM"
	fakeVMExit       = "PGTS_BENCH_FAKE_VM_EXIT"
	// vmParentEnv makes the test binary a benchmark process that starts
	// the fake victoria-metrics (its report in the directory the variable
	// names) and exits without stopping it.
	vmParentEnv = "PGTS_BENCH_VM_PARENT_DIR"
)

func vmParent() int {
	dir := os.Getenv(vmParentEnv)
	os.Unsetenv(vmParentEnv)
	os.Setenv(fakeVMEnv, filepath.Join(dir, "fake.out"))
	exe, err := os.Executable()
	if err != nil {
		return 1
	}
	if _, err := StartVM(context.Background(), VMConfig{Exe: exe, Dir: dir, Step: 10 * time.Second, Name: "orphan"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0 // exits with victoria-metrics running: Pdeathsig must end it
}

func fakeVM() int {
	out := os.Getenv(fakeVMEnv)
	var report strings.Builder
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || strings.HasPrefix(target, "/proc/") {
			continue // the listing's own descriptor
		}
		fmt.Fprintf(&report, "fd %s %s\n", e.Name(), target)
	}
	if os.Getenv(fakeVMExit) != "" {
		fmt.Fprintln(os.Stderr, "fake victoria-metrics: exiting at once")
		return 3
	}
	if os.Getenv(fakeVMIgnoreTerm) != "" {
		signal.Ignore(syscall.SIGTERM)
	}
	child := exec.Command("sleep", "300")
	if err := child.Start(); err != nil {
		return 4
	}
	fmt.Fprintf(&report, "child %d\npid %d\n", child.Process.Pid, os.Getpid())
	var addr string
	for _, a := range os.Args[1:] {
		if v, ok := strings.CutPrefix(a, "-httpListenAddr="); ok {
			addr = v
		}
		fmt.Fprintf(&report, "arg %s\n", a)
	}
	if err := os.WriteFile(out, []byte(report.String()), 0o644); err != nil {
		return 5
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "OK") })
	mux.HandleFunc("/internal/force_flush", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "vm_rows_inserted_total{type=\"graphite\"} 7\n")
	})
	srv := &http.Server{Addr: addr, Handler: mux}
	go srv.ListenAndServe() //nolint:errcheck // ends with the process
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	<-sig
	return 0
}

// fakeVMReport reads what the fake wrote: descriptors, the child's pid
// and the arguments.
func fakeVMReport(t *testing.T, path string) (fds []string, child int, args []string) {
	fds, child, args, _ = fakeVMReportPid(t, path)
	return fds, child, args
}

// fakeVMReportPid is fakeVMReport with the fake's own pid.
func fakeVMReportPid(t *testing.T, path string) (fds []string, child int, args []string, pid int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "fd":
			fds = append(fds, v)
		case "child":
			child, _ = strconv.Atoi(v)
		case "arg":
			args = append(args, v)
		case "pid":
			pid, _ = strconv.Atoi(v)
		}
	}
	return fds, child, args, pid
}

// gone waits (bounded) until pid has exited: no /proc entry, or a zombie
// waiting for its reaper.
func gone(t *testing.T, pid int) bool {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i+1:]), " Z") {
			return true
		}
		runtimeYield()
	}
	return false
}

func runtimeYield() { <-time.After(10 * time.Millisecond) }

func fakeVMConfig(t *testing.T) (VMConfig, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "fake.out")
	t.Setenv(fakeVMEnv, out)
	return VMConfig{Exe: exe, Dir: dir, Step: 10 * time.Second, Name: "fake"}, out
}

// TestVMLifecycle starts a fake victoria-metrics: it gets only its
// standard descriptors (not a file this process holds open), the flags
// the benchmark needs; Stop ends it and the child it left in its process
// group, and removes the data directory.
func TestVMLifecycle(t *testing.T) {
	cfg, out := fakeVMConfig(t)
	// A descriptor without close-on-exec, as a shell or make may leave
	// to the benchmark (a pipe to tee): victoria-metrics must not keep it.
	var leak [2]int
	if err := syscall.Pipe(leak[:]); err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(leak[0]) //nolint:errcheck
	defer syscall.Close(leak[1]) //nolint:errcheck
	leaked, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", leak[1]))
	if err != nil {
		t.Fatal(err)
	}
	held := filepath.Join(cfg.Dir, "held")
	hf, err := os.Create(held)
	if err != nil {
		t.Fatal(err)
	}
	defer hf.Close()
	ctx := context.Background()
	vm, err := StartVM(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			vm.Stop() //nolint:errcheck
		}
	}()
	fds, child, args := fakeVMReport(t, out)
	for _, f := range fds {
		if strings.HasSuffix(f, " "+leaked) || strings.HasSuffix(f, " "+held) {
			t.Errorf("victoria-metrics inherited descriptor %s", f)
		}
	}
	if len(fds) < 3 {
		t.Errorf("descriptors %q: want at least its standard ones", fds)
	}
	want := []string{"-storageDataPath=" + vm.DataDir, "-graphiteListenAddr=" + vm.GraphiteAddr, "-httpListenAddr=" + vm.HTTPAddr,
		"-search.graphiteStorageStep=10s", "-search.maxQueryDuration=10m"}
	for _, w := range want {
		found := false
		for _, a := range args {
			found = found || a == w
		}
		if !found {
			t.Errorf("argument %q missing from %q", w, args)
		}
	}
	if !strings.HasPrefix(vm.DataDir, cfg.Dir) {
		t.Errorf("data directory %s is not under %s", vm.DataDir, cfg.Dir)
	}
	if err := vm.Flush(ctx); err != nil {
		t.Errorf("flush: %v", err)
	}
	m, err := vm.Metrics(ctx)
	if err != nil || m["vm_rows_inserted_total"] != 7 {
		t.Errorf("metrics: %v, %v", m, err)
	}
	pid := vm.Pid()
	stopped = true
	if err := vm.Stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if !gone(t, pid) {
		t.Errorf("the fake (pid %d) outlived Stop", pid)
	}
	if !gone(t, child) {
		t.Errorf("the fake's child (pid %d) outlived Stop", child)
		syscall.Kill(child, syscall.SIGKILL) //nolint:errcheck
	}
	if _, err := os.Stat(vm.DataDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("data directory %s left behind: %v", vm.DataDir, err)
	}
	if err := vm.Stop(); err != nil {
		t.Errorf("second stop: %v", err)
	}
}

// TestVMDiesWithTheBenchmark: when the benchmark process exits without
// stopping victoria-metrics, the kernel kills it (Pdeathsig).
func TestVMDiesWithTheBenchmark(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), vmParentEnv+"="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("benchmark process: %v\n%s", err, out)
	}
	_, child, _, pid := fakeVMReportPid(t, filepath.Join(dir, "fake.out"))
	defer syscall.Kill(child, syscall.SIGKILL) //nolint:errcheck // Pdeathsig ends victoria-metrics, not what it started
	if pid == 0 {
		t.Fatal("the fake did not report its pid")
	}
	if !gone(t, pid) {
		syscall.Kill(pid, syscall.SIGKILL) //nolint:errcheck
		t.Fatalf("victoria-metrics (pid %d) outlived the benchmark process", pid)
	}
}

// TestVMStopKillsWhatIgnoresSIGTERM: a victoria-metrics that does not exit
// on SIGTERM is killed with its group after the wait.
func TestVMStopKillsWhatIgnoresSIGTERM(t *testing.T) {
	cfg, out := fakeVMConfig(t)
	t.Setenv(fakeVMIgnoreTerm, "1")
	old := vmStopWait
	vmStopWait = 100 * time.Millisecond
	defer func() { vmStopWait = old }()
	vm, err := StartVM(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, child, _ := fakeVMReport(t, out)
	err = vm.Stop()
	if err == nil || !strings.Contains(err.Error(), "did not stop") {
		t.Errorf("stop: %v, want a 'did not stop' error", err)
	}
	if !gone(t, vm.Pid()) || !gone(t, child) {
		t.Errorf("the fake or its child outlived Stop")
	}
}

// TestVMStartFailure: a binary that exits at once is an error naming its
// log, and leaves no data directory.
func TestVMStartFailure(t *testing.T) {
	cfg, _ := fakeVMConfig(t)
	t.Setenv(fakeVMExit, "1")
	_, err := StartVM(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "exited at start") || !strings.Contains(err.Error(), "vm-fake.log") {
		t.Fatalf("start: %v, want an 'exited at start' error naming the log", err)
	}
	ents, _ := os.ReadDir(cfg.Dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "vm-data-") {
			t.Errorf("data directory %s left behind", e.Name())
		}
	}
	if b, _ := os.ReadFile(filepath.Join(cfg.Dir, "vm-fake.log")); !strings.Contains(string(b), "exiting at once") {
		t.Errorf("log %q: want the fake's message", b)
	}
}

func TestVMConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  VMConfig
		want string
	}{
		{VMConfig{Dir: "/tmp", Step: time.Second}, "no victoria-metrics binary"},
		{VMConfig{Exe: "vm", Step: time.Second}, "no directory"},
		{VMConfig{Exe: "vm", Dir: "/tmp", Step: time.Millisecond}, "at least 1s"},
	} {
		if err := c.cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

func TestParseVMScalar(t *testing.T) {
	for _, c := range []struct {
		body string
		want float64
		err  string
	}{
		{`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000,"1234"]}]}}`, 1234, ""},
		{`{"status":"success","data":{"resultType":"vector","result":[]}}`, 0, ""},
		{`{"status":"error","error":"bad"}`, 0, "status"},
		{`{"status":"success","data":{"result":[{"value":[1,"1"]},{"value":[1,"2"]}]}}`, 0, "2 series"},
		{`not json`, 0, "victoria-metrics answer"},
	} {
		got, err := parseVMScalar([]byte(c.body))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want error %q", c.body, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: %v, %v; want %v", c.body, got, err, c.want)
		}
	}
}

// vmBinary is a built victoria-metrics: the Makefile's cache, else
// /tmp/vmbin (where a developer may have one).
func vmBinary(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"../../.bench-tools/bin/victoria-metrics", "/tmp/vmbin/victoria-metrics"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			abs, _ := filepath.Abs(p)
			return abs
		}
	}
	t.Skip("no victoria-metrics binary in .bench-tools/bin or /tmp/vmbin: `make bench-tools` builds one")
	return ""
}

// TestVMStoresGraphitePoints: the real victoria-metrics stores every
// point the blaster sends over Graphite plaintext, and Stored counts
// them.
func TestVMStoresGraphitePoints(t *testing.T) {
	exe := vmBinary(t)
	ctx := context.Background()
	vm, err := StartVM(ctx, VMConfig{Exe: exe, Dir: t.TempDir(), Step: 10 * time.Second, Name: "real"})
	if err != nil {
		t.Fatal(err)
	}
	defer vm.Stop() //nolint:errcheck
	cfg := blast.DefaultConfig()
	cfg.Addr, cfg.Rate, cfg.Series, cfg.Duration, cfg.BatchSize, cfg.Prefix = vm.GraphiteAddr, 200, 50, 2*time.Second, 50, "bench"
	bl, err := blast.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := bl.Run(ctx)
	if err != nil || st.Acked == 0 {
		t.Fatalf("blast: %+v, %v", st, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, err := vm.Metrics(ctx)
		if err == nil && m["vm_rows_inserted_total"] >= float64(st.Acked) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("victoria-metrics inserted %v of %d points", m["vm_rows_inserted_total"], st.Acked)
		}
		runtimeYield()
	}
	if err := vm.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	series, points, err := vm.Stored(ctx, "bench", time.Now().Add(time.Minute), 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if series != 50 || points != st.Acked {
		t.Errorf("stored %d series and %d points, want 50 and %d", series, points, st.Acked)
	}
	if vm.DiskBytes() == 0 {
		t.Errorf("no bytes in %s", vm.DataDir)
	}
}
