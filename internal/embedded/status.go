package embedded

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// pidFile is the content of postmaster.pid.
type pidFile struct {
	pid       int
	startedAt time.Time
	port      int
	socketDir string
	status    string // "starting", "ready", "stopping"
}

func readPidFile(dataDir string) (pidFile, bool, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if errors.Is(err, fs.ErrNotExist) {
		return pidFile{}, false, nil
	}
	if err != nil {
		return pidFile{}, false, fmt.Errorf("reading postmaster.pid: %w", err)
	}
	lines := strings.Split(string(b), "\n")
	var p pidFile
	if len(lines) > 0 {
		p.pid, _ = strconv.Atoi(strings.TrimSpace(lines[0]))
	}
	if len(lines) > 2 {
		if s, err := strconv.ParseInt(strings.TrimSpace(lines[2]), 10, 64); err == nil {
			p.startedAt = time.Unix(s, 0)
		}
	}
	if len(lines) > 3 {
		p.port, _ = strconv.Atoi(strings.TrimSpace(lines[3]))
	}
	if len(lines) > 4 {
		p.socketDir = strings.TrimSpace(lines[4])
	}
	if len(lines) > 7 {
		p.status = strings.TrimSpace(lines[7])
	}
	return p, true, nil
}

// alivePostgres reports whether pid is a live postgres process (not a
// zombie).
func alivePostgres(pid int) bool {
	if pid <= 0 || processDead(pid) {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	prog, _, _ := strings.Cut(string(cmdline), "\x00")
	return filepath.Base(prog) == "postgres" || strings.HasPrefix(string(cmdline), "postgres")
}

// running reports whether the server of the data dir runs, from its pid
// file. A pid file whose process is gone (or is some other program) is
// stale: it is left for the server to replace, or removed when a foreign
// process now holds that pid.
func (c *Cluster) running() (Info, bool, error) {
	p, ok, err := readPidFile(c.cfg.DataDir)
	if err != nil || !ok {
		return Info{}, false, err
	}
	if !alivePostgres(p.pid) {
		if p.pid > 0 && !processDead(p.pid) && syscall.Kill(p.pid, 0) == nil {
			// The pid was reused by another program: the server would refuse
			// to start while the file names a live process.
			if err := os.Remove(filepath.Join(c.cfg.DataDir, "postmaster.pid")); err != nil {
				return Info{}, false, fmt.Errorf("removing stale postmaster.pid: %w", err)
			}
		}
		return Info{}, false, nil
	}
	return Info{DataDir: c.cfg.DataDir, SocketDir: p.socketDir, Port: p.port, PID: p.pid,
		Version: c.cfg.Binaries.Version, StartedAt: p.startedAt}, true, nil
}

// waitReady waits until a reused server reports "ready" in its pid file.
func (c *Cluster) waitReady(ctx context.Context, info *Info) error {
	deadline := time.Now().Add(c.cfg.StartTimeout)
	for delay := 20 * time.Millisecond; ; delay = min(delay*2, time.Second) {
		p, ok, err := readPidFile(c.cfg.DataDir)
		if err != nil {
			return err
		}
		if !ok || !alivePostgres(p.pid) {
			return fmt.Errorf("the server in %q stopped while starting; see %s", c.cfg.DataDir, c.logPath())
		}
		if p.status == "ready" {
			info.Port, info.SocketDir = p.port, p.socketDir
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the server in %q is %q after %s; see %s", c.cfg.DataDir, p.status, c.cfg.StartTimeout, c.logPath())
		}
		if err := waitDelay(ctx, delay); err != nil {
			return err
		}
	}
}

// State is the cluster's state as `pgts db status` shows it.
type State struct {
	Initialised bool
	Running     bool
	Stale       bool // a pid file remains from a server that was killed
	Info        Info
	SizeBytes   int64
	WALBytes    int64 // of pg_wal, included in SizeBytes
	// DiskFreeBytes is the free space on the data dir's file system (0
	// when unknown).
	DiskFreeBytes int64
	Uptime        time.Duration
	// WALLevel is the wal_level of the configuration files ("minimal":
	// the bulk-load profile); "" when the cluster is not initialised.
	WALLevel string
}

// Status inspects the data dir without starting anything.
func (c *Cluster) Status() (State, error) {
	s := State{Info: Info{DataDir: c.cfg.DataDir, Version: c.cfg.Binaries.Version}}
	if _, err := os.Stat(filepath.Join(c.cfg.DataDir, "PG_VERSION")); err != nil {
		s.DiskFreeBytes, _ = DiskFree(c.cfg.DataDir)
		return s, nil
	}
	s.Initialised = true
	s.WALLevel = c.WALLevel()
	s.SizeBytes = dirSize(c.cfg.DataDir)
	s.WALBytes = dirSize(filepath.Join(c.cfg.DataDir, "pg_wal"))
	s.DiskFreeBytes, _ = DiskFree(c.cfg.DataDir)
	info, ok, err := c.running()
	if err != nil {
		return s, err
	}
	if ok {
		s.Running, s.Info = true, info
		if !info.StartedAt.IsZero() {
			s.Uptime = time.Since(info.StartedAt).Truncate(time.Second)
		}
		return s, nil
	}
	if _, ok, _ := readPidFile(c.cfg.DataDir); ok {
		s.Stale = true
	}
	s.Info = Info{DataDir: c.cfg.DataDir, SocketDir: c.SocketDir(), Version: c.cfg.Binaries.Version}
	if p, ok := c.previousPort(); ok {
		s.Info.Port = p
	}
	return s, nil
}

func dirSize(dir string) int64 {
	var total int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
			}
		}
		return nil
	})
	return total
}

// StopMode is pg_ctl's shutdown mode.
type StopMode string

// Shutdown modes: Fast rolls back open transactions, Immediate skips the
// shutdown checkpoint (crash recovery runs at the next start).
const (
	Fast      StopMode = "fast"
	Immediate StopMode = "immediate"
)

// Stop stops the server, and removes its socket directory and lock file
// under /tmp. Stopping a stopped cluster is not an error; it reports
// whether the server was running.
func (c *Cluster) Stop(ctx context.Context, mode StopMode) (bool, error) {
	unlock, err := c.lock()
	if err != nil {
		return false, err
	}
	defer unlock()
	return c.stopLocked(ctx, mode)
}

func (c *Cluster) stopLocked(ctx context.Context, mode StopMode) (bool, error) {
	_, ok, err := c.running()
	if err != nil {
		return false, err
	}
	if ok {
		if _, err := c.user.run(ctx, c.cfg.Binaries.Path("pg_ctl"), "stop", "-D", c.cfg.DataDir, "-m", string(mode), "-w", "-s"); err != nil {
			return true, fmt.Errorf("stopping PostgreSQL in %q: %w", c.cfg.DataDir, err)
		}
	}
	if len(processesIn(c.cfg.DataDir)) > 0 {
		// Backends of a killed server still run: their socket lock files
		// must stay until they are gone.
		return ok, nil
	}
	return ok, c.removeRuntimeFiles()
}

// Destroy stops the server and deletes the data dir, the socket dir and the
// lock file.
func (c *Cluster) Destroy(ctx context.Context) error {
	unlock, err := c.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := c.stopLocked(ctx, Immediate); err != nil {
		return err
	}
	if err := os.RemoveAll(c.cfg.DataDir); err != nil {
		return fmt.Errorf("removing %q: %w", c.cfg.DataDir, err)
	}
	return c.removeRuntimeFiles()
}

// processDead reports whether pid has exited or is sure to: gone, a zombie
// not yet reaped (kill(pid, 0) still succeeds on a zombie, and PostgreSQL
// then takes its lock files for a live server's), exiting, or with SIGKILL
// pending. The last two cover the moment right after `kill -9`, when the
// process still looks alive (under load, for a while): it must not be
// reused as a running server, nor taken for some other program.
func processDead(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	return deadOrDying(string(stat), string(status))
}

// processExited reports whether pid is gone or a zombie: unlike a process
// still exiting, it holds no memory (the shared memory of a killed
// server's backends).
func processExited(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	st, _, ok := statFields(string(stat))
	return ok && exitedState(st)
}

// pfExiting is the kernel's PF_EXITING task flag: the process is in exit.
const pfExiting = 0x4

// sigkillBit is SIGKILL's bit in the pending masks of /proc/PID/status.
const sigkillBit = 1 << (9 - 1)

// deadOrDying decides processDead from /proc/PID/stat and /proc/PID/status.
func deadOrDying(stat, status string) bool {
	st, flags, ok := statFields(stat)
	if !ok {
		return false
	}
	if exitedState(st) || flags&pfExiting != 0 {
		return true
	}
	for _, line := range strings.Split(status, "\n") {
		name, val, ok := strings.Cut(line, ":")
		if !ok || (name != "SigPnd" && name != "ShdPnd") {
			continue
		}
		if mask, err := strconv.ParseUint(strings.TrimSpace(val), 16, 64); err == nil && mask&sigkillBit != 0 {
			return true
		}
	}
	return false
}

func exitedState(st byte) bool { return st == 'Z' || st == 'X' || st == 'x' }

// statFields returns the state and the flags of /proc/PID/stat. They
// follow the parenthesised command name, which may itself contain
// parentheses: "PID (COMM) STATE PPID PGRP SESSION TTY TPGID FLAGS ...".
func statFields(stat string) (state byte, flags uint64, ok bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return 0, 0, false
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 7 || len(f[0]) != 1 {
		return 0, 0, false
	}
	flags, err := strconv.ParseUint(f[6], 10, 64)
	if err != nil {
		return f[0][0], 0, true
	}
	return f[0][0], flags, true
}
