package pgtest

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pgts/pgts/internal/embedded"
)

// A test binary that ends without Main's cleanup (a panic in a test, a
// kill) leaves its clusters running, each holding a port, its memory and
// a directory under /tmp. Each cluster directory therefore holds the pid
// of the test binary that made it (ownerFile), and the first cluster a
// later test binary starts stops and deletes those whose owner is gone.

// ownerFile names the file, in a test cluster's root directory, that
// holds the pid of the test binary that made the directory.
const ownerFile = "owner.pid"

// testRootGlob matches the root directories of test clusters.
const testRootGlob = "/tmp/pgts-test-*"

var reapOnce sync.Once

// markOwner records this process as the owner of the cluster root dir.
func markOwner(dir string) error {
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644)
}

// reapStale stops and deletes the clusters under the roots matching glob
// whose owner has exited; a root without an owner file (another binary's
// being made, or older) is left alone. It returns the roots it deleted.
func reapStale(glob string, bins embedded.Binaries) []string {
	roots, _ := filepath.Glob(glob)
	var reaped []string
	for _, root := range roots {
		b, err := os.ReadFile(filepath.Join(root, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || alive(pid) {
			continue
		}
		versions, _ := filepath.Glob(filepath.Join(root, "*", "PG_VERSION"))
		for _, v := range versions {
			c, err := embedded.New(embedded.Config{DataDir: filepath.Dir(v), Binaries: bins, AnyPort: true,
				Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_ = c.Destroy(ctx)
			cancel()
		}
		if os.RemoveAll(root) == nil {
			reaped = append(reaped, root)
		}
	}
	return reaped
}

// alive reports whether process pid runs: it exists and has not exited
// (a zombie, not yet waited for by its parent, has).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// The state follows the command name in parentheses, which may
	// itself hold parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return true
	}
	st := b[i+2]
	return st != 'Z' && st != 'X' && st != 'x'
}
