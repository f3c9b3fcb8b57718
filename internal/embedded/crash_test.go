package embedded

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"testing"
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
