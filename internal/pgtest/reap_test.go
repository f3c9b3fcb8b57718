package pgtest

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pgts/pgts/internal/embedded"
)

// TestReapStale: a cluster whose test binary died without stopping it is
// stopped and deleted, socket directory included; one whose owner lives
// is left alone, and so is a directory without an owner file.
func TestReapStale(t *testing.T) {
	if os.Getenv(EnvURL) != "" {
		t.Skip("an external server: no private clusters to reap")
	}
	bins, err := embedded.DefaultFinder(os.Getenv("PGTS_PG_BINDIR")).Find()
	if err != nil {
		t.Fatal(err)
	}
	// A pid of a process that has exited.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mkRoot := func(owner int) string {
		dir, err := os.MkdirTemp("/tmp", "pgts-reaptest-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if owner > 0 {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(owner)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	stale, live, unowned := mkRoot(dead.Process.Pid), mkRoot(os.Getpid()), mkRoot(0)
	c, err := embedded.New(embedded.Config{DataDir: stale + "/data", Binaries: bins, AnyPort: true,
		Settings: Settings(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	info, err := c.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Destroy(context.Background()) }) //nolint:errcheck // only if the reaping failed

	got := reapStale("/tmp/pgts-reaptest-*", bins)
	if !slices.Equal(got, []string{stale}) {
		t.Fatalf("reaped %v, want only %s", got, stale)
	}
	if !exited(t, info.PID) {
		t.Errorf("the stale cluster's server (pid %d) still runs", info.PID)
	}
	for _, gone := range []string{stale, c.SocketDir(), c.SocketDir() + ".lock"} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", gone, err)
		}
	}
	for _, kept := range []string{live, unowned} {
		if _, err := os.Stat(kept); err != nil {
			t.Errorf("%s was removed: %v", kept, err)
		}
	}
}

// exited waits up to 10 s for process pid to exit (pidfd: told by the
// kernel, not polled) and reports whether it has.
func exited(t *testing.T, pid int) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return errors.Is(err, unix.ESRCH) // gone already
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 10_000)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatalf("waiting for pid %d: %v", pid, err)
		}
		return n > 0
	}
}
