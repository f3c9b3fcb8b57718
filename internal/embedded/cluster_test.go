package embedded

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func findBinaries(t *testing.T) Binaries {
	t.Helper()
	b, err := DefaultFinder(os.Getenv("PGTS_PG_BINDIR")).Find()
	if err != nil {
		t.Fatalf("these tests need PostgreSQL (make test installs it): %v", err)
	}
	return b
}

func newTestCluster(t *testing.T, cfg Config) *Cluster {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "pgts-embedded-test-")
	if err != nil {
		t.Fatal(err)
	}
	// As root the server runs as postgres, which must pass this directory;
	// pgts changes only directories it creates.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if cfg.DataDir == "" {
		cfg.DataDir = filepath.Join(dir, "data")
	}
	if cfg.Binaries.Dir == "" {
		cfg.Binaries = findBinaries(t)
	}
	if cfg.Settings == nil {
		cfg.Settings = []Setting{{"fsync", "off", "test"}, {"shared_buffers", "32MB", "test"}}
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := c.Destroy(ctx); err != nil {
			t.Errorf("destroy: %v", err)
		}
		os.RemoveAll(dir)
	})
	return c
}

func query1(t *testing.T, info Info) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, info.ConnString("postgres"))
	if err != nil {
		t.Fatalf("connect %s: %v", info.ConnString("postgres"), err)
	}
	defer conn.Close(ctx)
	var one int
	if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("select 1 = %d, %v", one, err)
	}
}

func TestStartReuseKillRecover(t *testing.T) {
	ctx := context.Background()
	c := newTestCluster(t, Config{AnyPort: true})
	info, err := c.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Reused {
		t.Fatal("first start reported reuse")
	}
	query1(t, info)
	conf, err := os.ReadFile(filepath.Join(c.DataDir(), "pgts.conf"))
	if err != nil || !strings.Contains(string(conf), "shared_buffers") {
		t.Fatalf("pgts.conf = %q, %v", conf, err)
	}

	again, err := c.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Reused || again.PID != info.PID || again.Port != info.Port {
		t.Fatalf("second start = %+v, want reuse of pid %d port %d", again, info.PID, info.Port)
	}

	// Kill the postmaster: status reports the stale pid file, start recovers.
	if err := syscall.Kill(info.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, info.PID)
	st, err := c.Status()
	if err != nil {
		t.Fatal(err)
	}
	if st.Running || !st.Stale {
		t.Fatalf("status after kill = %+v, want stale and not running", st)
	}
	recovered, err := c.Start(ctx)
	if err != nil {
		t.Fatalf("start after kill -9: %v", err)
	}
	if recovered.Reused || recovered.PID == info.PID {
		t.Fatalf("start after kill = %+v", recovered)
	}
	if recovered.Port != info.Port {
		t.Errorf("port changed after recovery: %d, was %d", recovered.Port, info.Port)
	}
	query1(t, recovered)

	st, err = c.Status()
	if err != nil || !st.Running || st.SizeBytes == 0 || st.Info.Port != info.Port {
		t.Fatalf("status = %+v, %v", st, err)
	}

	was, err := c.Stop(ctx, Fast)
	if err != nil || !was {
		t.Fatalf("stop = %v, %v", was, err)
	}
	was, err = c.Stop(ctx, Fast)
	if err != nil || was {
		t.Fatalf("second stop = %v, %v; want not running, no error", was, err)
	}
}

// waitGone waits for a killed process to be reaped; kill(pid, 0) fails once
// it is gone. The postmaster is not our child (pg_ctl daemonised it), so
// init reaps it.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive", pid)
		}
		runtimeGosched()
	}
}

func runtimeGosched() { time.Sleep(time.Millisecond) } // polling a process we cannot wait on

func TestBusyPortChoosesAnother(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port
	c := newTestCluster(t, Config{Port: busy})
	info, err := c.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Port == busy {
		t.Fatalf("started on busy port %d", busy)
	}
	query1(t, info)
}

func TestVersionMismatchRefused(t *testing.T) {
	c := newTestCluster(t, Config{AnyPort: true})
	if err := os.MkdirAll(c.DataDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	other := strconv.Itoa(c.cfg.Binaries.Major - 1)
	if err := os.WriteFile(filepath.Join(c.DataDir(), "PG_VERSION"), []byte(other+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := c.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "created by PostgreSQL "+other) {
		t.Fatalf("err = %v, want a version mismatch", err)
	}
}

func TestNonEmptyDirRefused(t *testing.T) {
	c := newTestCluster(t, Config{AnyPort: true})
	os.MkdirAll(c.DataDir(), 0o700)
	os.WriteFile(filepath.Join(c.DataDir(), "notes.txt"), []byte("mine"), 0o600)
	_, err := c.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("err = %v", err)
	}
}

func TestUnwritableDataDir(t *testing.T) {
	// A path below a regular file cannot be created, whoever we are.
	d, err := os.MkdirTemp("/tmp", "pgts-unwritable-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil { // for the server's user, as root
		t.Fatal(err)
	}
	f := filepath.Join(d, "file")
	os.WriteFile(f, nil, 0o600)
	c, err := New(Config{DataDir: filepath.Join(f, "data"), Binaries: findBinaries(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "cannot create data directory") {
		t.Fatalf("err = %v", err)
	}
}

func TestNoBinaries(t *testing.T) {
	f := Finder{GlobRoots: []string{t.TempDir()}}
	_, err := f.Find()
	if !errors.Is(err, ErrNoBinaries) || !strings.Contains(err.Error(), "apt-get install postgresql") {
		t.Fatalf("err = %v", err)
	}
	_, err = Finder{Override: t.TempDir()}.Find()
	if err == nil || !strings.Contains(err.Error(), "--pg-bindir") {
		t.Fatalf("override err = %v", err)
	}
}

func TestParseVersion(t *testing.T) {
	for in, want := range map[string]int{
		"postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)\n": 15,
		"postgres (PostgreSQL) 17devel":                          17,
		"postgres (PostgreSQL) 13.2":                             13,
	} {
		_, major, err := parseVersion(in)
		if err != nil || major != want {
			t.Errorf("parseVersion(%q) = %d, %v", in, major, err)
		}
	}
	if _, _, err := parseVersion("garbage"); err == nil {
		t.Error("garbage accepted")
	}
}
