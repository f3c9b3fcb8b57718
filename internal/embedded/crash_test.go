package embedded

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a logger used by several
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestStartRightAfterKill starts the cluster at once after a kill -9 of
// the postmaster, while its backends may still be alive and the dead
// postmaster not yet reaped: Start waits for them, starts, and says that
// crash recovery ran.
func TestStartRightAfterKill(t *testing.T) {
	ctx := context.Background()
	var logs syncBuffer
	c := newTestCluster(t, Config{AnyPort: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	info, err := c.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	query1(t, info)
	for range 3 {
		if err := syscall.Kill(info.PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitDead(t, info.PID)
		again, err := c.Start(ctx)
		if err != nil {
			t.Fatalf("start right after kill -9: %v", err)
		}
		if again.Reused {
			t.Fatalf("start after kill -9 reused the killed server: %+v", again)
		}
		query1(t, again)
		info = again
	}
	st, err := c.Status()
	if err != nil || st.WALBytes <= 0 || st.DiskFreeBytes <= 0 {
		t.Errorf("status = %+v, %v; want the WAL size and the free disk", st, err)
	}
	if !strings.Contains(logs.String(), "crash recovery: ") || !strings.Contains(logs.String(), "redo") {
		t.Fatalf("the log does not mention crash recovery:\n%s", logs.String())
	}
}

// waitDead waits until a killed process has died: it may still be a
// zombie (not reaped) and its children alive, as right after a kill -9.
func waitDead(t *testing.T, pid int) {
	t.Helper()
	for !processDead(pid) {
		runtimeGosched()
	}
}

// TestStartClearsSocketLockOfDeadServer: the pid file and the socket lock
// file name a process of the server's user that is not a PostgreSQL server
// (what a start sees while the killed postmaster exits, or once its PID is
// reused). The pid file alone was treated as stale, and PostgreSQL then
// refused the socket lock file ("lock file ... already exists"): a user
// restarting after a crash needed a second try. Start clears both.
func TestStartClearsSocketLockOfDeadServer(t *testing.T) {
	ctx := context.Background()
	c := newTestCluster(t, Config{AnyPort: true})
	if _, err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stop(ctx, Fast); err != nil {
		t.Fatal(err)
	}
	port, ok := c.previousPort()
	if !ok {
		t.Fatal("no previous port")
	}
	// A live process of the server's user, so that PostgreSQL's kill(pid,
	// 0) succeeds on it as on the killed postmaster before it is reaped.
	other := c.user.command(ctx, "/bin/sleep", "600")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	pid := other.Process.Pid
	if err := os.MkdirAll(c.SocketDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := c.user.own(c.SocketDir()); err != nil {
		t.Fatal(err)
	}
	lock := fmt.Sprintf("%d\n%s\n", pid, c.DataDir())
	if err := c.writeOwned(filepath.Join(c.SocketDir(), fmt.Sprintf(".s.PGSQL.%d.lock", port)), lock); err != nil {
		t.Fatal(err)
	}
	pidFile := fmt.Sprintf("%d\n%s\n%d\n%d\n%s\n127.0.0.1\n  1234   5678\nready\n", pid, c.DataDir(), time.Now().Unix(), port, c.SocketDir())
	if err := c.writeOwned(filepath.Join(c.DataDir(), "postmaster.pid"), pidFile); err != nil {
		t.Fatal(err)
	}
	info, err := c.Start(ctx)
	if err != nil {
		t.Fatalf("start with the lock files of a dead server: %v", err)
	}
	if info.Reused || info.PID == pid {
		t.Fatalf("start = %+v, want a new server", info)
	}
	query1(t, info)
}

// TestDeadOrDying: right after kill -9, before the process becomes a
// zombie, it has SIGKILL pending or is exiting; a start then must neither
// reuse it as a running server nor take it for another program.
func TestDeadOrDying(t *testing.T) {
	const live = "1234 (postgres) S 1 1234 1234 0 -1 4194560 2231 0 0 0 1 2 0 0 20 0 1 0 100 1 1 1"
	for _, tc := range []struct {
		name, stat, status string
		want               bool
	}{
		{"running", live, "Name:\tpostgres\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n", false},
		{"zombie", "1234 (postgres) Z 1 1234 1234 0 -1 4227332 0 0", "", true},
		{"exiting", "1234 (postgres) R 1 1234 1234 0 -1 4194564 2231 0", "SigPnd:\t0000000000000000\n", true},
		{"sigkill pending", live, "SigPnd:\t0000000000000100\nShdPnd:\t0000000000000000\n", true},
		{"sigkill pending for the group", live, "SigPnd:\t0000000000000000\nShdPnd:\t0000000000000100\n", true},
		{"sigterm pending", live, "SigPnd:\t0000000000004000\nShdPnd:\t0000000000004000\n", false},
		{"parenthesised name", "1234 (a) b) S 1 1234 1234 0 -1 4194560 1 0", "", false},
	} {
		if got := deadOrDying(tc.stat, tc.status); got != tc.want {
			t.Errorf("%s: deadOrDying = %v, want %v", tc.name, got, tc.want)
		}
	}
}
