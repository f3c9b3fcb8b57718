package embedded

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// After a kill -9 of the postmaster (or a machine crash), the data dir
// and the socket dir keep lock files naming the dead postmaster, which may
// not be reaped yet (a zombie still "exists" for kill(pid, 0), so
// PostgreSQL refuses to start), and its backends may still hold the shared
// memory for a moment. clearDeadServer waits for them (bounded) and removes
// the lock files of the dead process; PostgreSQL then runs crash recovery,
// whose progress watchRecovery relays from the server log.

// clearDeadServer prepares a start after an unclean stop. It reports
// whether the pid file named a dead server. The caller holds c.lock.
func (c *Cluster) clearDeadServer(ctx context.Context) (bool, error) {
	p, ok, err := readPidFile(c.cfg.DataDir)
	if err != nil || !ok || p.pid <= 0 || !processDead(p.pid) {
		return false, err
	}
	c.log.Warn("the server was not shut down cleanly (killed, or the machine stopped): PostgreSQL runs crash recovery as it starts", "pid", p.pid)
	if err := c.waitBackends(ctx); err != nil {
		return true, err
	}
	locks, _ := filepath.Glob(filepath.Join(c.SocketDir(), ".s.PGSQL.*.lock"))
	for _, f := range append(locks, filepath.Join(c.cfg.DataDir, "postmaster.pid")) {
		if err := removeIfPID(f, p.pid); err != nil {
			return true, err
		}
	}
	return true, nil
}

// clearStaleSocketLocks removes the socket lock files that name no live
// PostgreSQL server: PostgreSQL refuses one naming any live process of its
// user (or a zombie), such as the killed postmaster before it is reaped or
// a program that got its PID since. The socket dir is this data dir's
// own, and the caller holds c.lock and has found no server running.
func (c *Cluster) clearStaleSocketLocks() error {
	locks, _ := filepath.Glob(filepath.Join(c.SocketDir(), ".s.PGSQL.*.lock"))
	for _, f := range locks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		first, _, _ := strings.Cut(string(b), "\n")
		pid, err := strconv.Atoi(strings.TrimSpace(first))
		if err != nil || alivePostgres(pid) {
			continue
		}
		c.log.Info("removing the socket lock file of a server that no longer runs", "file", f, "pid", pid)
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("removing the stale socket lock file %q (PID %d): %w", f, pid, err)
		}
	}
	return nil
}

// removeIfPID removes a PostgreSQL lock file whose first line is pid.
func removeIfPID(path string, pid int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil // gone already, or not ours to read: the server decides
	}
	first, _, _ := strings.Cut(string(b), "\n")
	if n, err := strconv.Atoi(strings.TrimSpace(first)); err != nil || n != pid {
		return nil
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("removing the lock file %q of the killed server (PID %d): %w", path, pid, err)
	}
	return nil
}

// waitBackends waits (at most StartTimeout) until no live process has the
// data dir as its working directory, as every backend of the killed
// postmaster does; they exit when they notice their parent is gone.
func (c *Cluster) waitBackends(ctx context.Context) error {
	deadline := time.Now().Add(c.cfg.StartTimeout)
	said := false
	for delay := 10 * time.Millisecond; ; delay = min(delay*2, 500*time.Millisecond) {
		pids := processesIn(c.cfg.DataDir)
		if len(pids) == 0 {
			return nil
		}
		if !said {
			c.log.Info("waiting for the processes of the killed server to exit", "count", len(pids))
			said = true
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v of the killed server in %q still run after %s; stop them (kill PID) and start again", pids, c.cfg.DataDir, c.cfg.StartTimeout)
		}
		if err := waitDelay(ctx, delay); err != nil {
			return err
		}
	}
}

// processesIn lists the processes, live or still exiting, whose working
// directory is dir (the killed postmaster itself included until it is a
// zombie: an exiting process may still hold the shared memory).
func processesIn(dir string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == dir && !processExited(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// recoveryPhrases mark the server log lines that tell crash recovery's
// progress (PostgreSQL logs "redo in progress" every
// log_startup_progress_interval, 10 s by default).
var recoveryPhrases = []string{"was interrupted", "not properly shut down", "automatic recovery", "redo starts",
	"redo in progress", "redo done", "redo is not required", "checkpoint starting: end-of-recovery"}

// watchRecovery relays crash recovery's log lines written after offset
// until stop is called; stop returns after a last read, so no line written
// before it is missed.
func (c *Cluster) watchRecovery(offset int64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				offset = c.relayRecovery(offset)
				return
			case <-tick.C:
				offset = c.relayRecovery(offset)
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// relayRecovery logs the recovery lines of the server log after offset and
// returns the offset after the last complete line read.
func (c *Cluster) relayRecovery(offset int64) int64 {
	f, err := os.Open(c.logPath())
	if err != nil {
		return offset
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, _ := f.ReadAt(buf, offset)
	chunk := string(buf[:n])
	end := strings.LastIndexByte(chunk, '\n')
	if end < 0 {
		return offset
	}
	for _, line := range strings.Split(chunk[:end], "\n") {
		for _, p := range recoveryPhrases {
			if strings.Contains(line, p) {
				msg := line
				if _, after, ok := strings.Cut(line, "LOG:  "); ok {
					msg = after
				}
				c.log.Info("crash recovery: " + msg)
				break
			}
		}
	}
	return offset + int64(end) + 1
}

// logSize returns the server log's size, 0 when it does not exist.
func (c *Cluster) logSize() int64 {
	st, err := os.Stat(c.logPath())
	if err != nil {
		return 0
	}
	return st.Size()
}
