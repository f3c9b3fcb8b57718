package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/pg"
)

// Machine describes where a benchmark ran: the host as the client sees it
// and the PostgreSQL server with the settings that decide its write speed.
// Results carry it so that a figure is never read without its machine.
type Machine struct {
	Cores       int               `json:"cores"`               // logical CPUs the client may use
	CPUModel    string            `json:"cpu_model,omitempty"` // /proc/cpuinfo "model name"
	MemoryBytes int64             `json:"memory_bytes"`        // MemTotal of /proc/meminfo; 0 when unknown
	Kernel      string            `json:"kernel,omitempty"`    // /proc/sys/kernel/osrelease
	OS          string            `json:"os"`                  // GOOS/GOARCH
	GoVersion   string            `json:"go_version"`
	PostgreSQL  string            `json:"postgresql,omitempty"` // version()
	Settings    map[string]string `json:"settings,omitempty"`   // SHOW output of ServerSettings
	// Warnings lists what could not be read (a remote server's /proc, a
	// setting the server lacks); the rest of Machine is still filled.
	Warnings []string `json:"warnings,omitempty"`
}

// ServerSettings are the PostgreSQL settings a write benchmark depends on.
var ServerSettings = []string{"shared_buffers", "wal_level", "synchronous_commit", "fsync", "max_wal_size",
	"checkpoint_timeout", "effective_io_concurrency", "full_page_writes", "wal_compression"}

// HostMachine reads the client host's side of Machine from /proc and the
// Go runtime. Unreadable files leave their fields empty and add a warning.
func HostMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, GoVersion: runtime.Version()}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	} else {
		m.Warnings = append(m.Warnings, fmt.Sprintf("kernel: %v", err))
	}
	if v, err := procField("/proc/meminfo", "MemTotal"); err == nil {
		kb, _ := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
		m.MemoryBytes = kb * 1024
	} else {
		m.Warnings = append(m.Warnings, fmt.Sprintf("memory: %v", err))
	}
	if v, err := procField("/proc/cpuinfo", "model name"); err == nil {
		m.CPUModel = v
	}
	return m
}

// procField returns the value of the first "key: value" line of a /proc
// file whose key is key.
func procField(path, key string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: no %q line", path, key)
}

// DescribeMachine returns the host's Machine completed with the server's
// version and ServerSettings, read over pool. A failing query is a warning,
// not an error: a benchmark's results are worth keeping without it.
func DescribeMachine(ctx context.Context, pool *pgxpool.Pool) Machine {
	m := HostMachine()
	if pool == nil {
		return m
	}
	if err := pool.QueryRow(ctx, "SELECT version()").Scan(&m.PostgreSQL); err != nil {
		m.Warnings = append(m.Warnings, fmt.Sprintf("server version: %v", err))
		return m
	}
	rows, err := pool.Query(ctx, "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY($1) ORDER BY name", ServerSettings)
	if err != nil {
		m.Warnings = append(m.Warnings, fmt.Sprintf("server settings: %v", err))
		return m
	}
	defer rows.Close()
	m.Settings = map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			m.Warnings = append(m.Warnings, fmt.Sprintf("server settings: %v", err))
			return m
		}
		m.Settings[k] = v
	}
	if err := rows.Err(); err != nil {
		m.Warnings = append(m.Warnings, fmt.Sprintf("server settings: %v", err))
	}
	for _, s := range ServerSettings {
		if _, ok := m.Settings[s]; !ok {
			m.Warnings = append(m.Warnings, fmt.Sprintf("server setting %q: not reported", s))
		}
	}
	return m
}

// DescribeMachineAt connects to connString just to describe the machine;
// see DescribeMachine.
func DescribeMachineAt(ctx context.Context, connString string) Machine {
	pool, err := pg.NewPool(ctx, connString, 2)
	if err != nil {
		m := HostMachine()
		m.Warnings = append(m.Warnings, fmt.Sprintf("server: %v", err))
		return m
	}
	defer pool.Close()
	return DescribeMachine(ctx, pool)
}

// MemoryLimit is a memory cgroup made for the server of a benchmark: a
// child of the cgroup the server already runs in (so every limit above
// it still applies), holding the postmaster and its children with a
// limit on their memory, page cache included. cgroup v1's memory
// controller is used when mounted, else cgroup v2's.
//
// Processes forked by an attached postmaster (new backends) inherit the
// cgroup. Memory charged before attaching (shared_buffers, pages read
// earlier) stays charged where it was. Not safe for concurrent use.
type MemoryLimit struct {
	Bytes   int64
	Version int    // 1 or 2
	Dir     string // the cgroup's directory
	parent  string // where Close moves the processes back to
}

// cgroupMount is a mounted cgroup hierarchy.
type cgroupMount struct {
	dir     string
	version int
}

// memoryCgroupMount finds the v1 memory hierarchy or, failing that, the
// cgroup v2 hierarchy.
func memoryCgroupMount() (cgroupMount, error) { return controllerMount("memory") }

// controllerMount finds the cgroup v1 hierarchy that has controller or,
// failing that, the cgroup v2 hierarchy, from /proc/self/mountinfo.
func controllerMount(controller string) (cgroupMount, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return cgroupMount{}, err
	}
	var v2 cgroupMount
	for _, line := range strings.Split(string(b), "\n") {
		// 36 35 0:31 / /sys/fs/cgroup/memory rw,... - cgroup cgroup rw,memory
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		switch g[0] {
		case "cgroup":
			if slices.Contains(strings.Split(g[2], ","), controller) {
				return cgroupMount{dir: f[4], version: 1}, nil
			}
		case "cgroup2":
			if v2.dir == "" {
				v2 = cgroupMount{dir: f[4], version: 2}
			}
		}
	}
	if v2.dir == "" {
		return cgroupMount{}, fmt.Errorf("neither cgroup v1's %s controller nor cgroup v2 is mounted", controller)
	}
	return v2, nil
}

// cgroupOf returns pid's cgroup path within the hierarchy of version.
func cgroupOf(pid, version int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if version == 2 && f[0] == "0" && f[1] == "" {
			return f[2], nil
		}
		if version == 1 && slices.Contains(strings.Split(f[1], ","), "memory") {
			return f[2], nil
		}
	}
	return "", fmt.Errorf("process %d is in no cgroup v%d memory hierarchy", pid, version)
}

// NewMemoryLimit makes a memory cgroup limited to bytes next to the
// cgroup of process pid (the postmaster) and attaches pid and its
// children. The error says why when this machine cannot do it.
func NewMemoryLimit(bytes int64, pid int) (*MemoryLimit, error) {
	if bytes < 64<<20 {
		return nil, fmt.Errorf("memory limit %d bytes: must be at least 64 MiB", bytes)
	}
	mnt, err := memoryCgroupMount()
	if err != nil {
		return nil, fmt.Errorf("memory limit: %w", err)
	}
	rel, err := cgroupOf(pid, mnt.version)
	if err != nil {
		return nil, fmt.Errorf("memory limit: %w", err)
	}
	parent := filepath.Join(mnt.dir, rel)
	m := &MemoryLimit{Bytes: bytes, Version: mnt.version, parent: parent,
		Dir: filepath.Join(parent, fmt.Sprintf("pgts-bench-%d", os.Getpid()))}
	limitFile, limit := "memory.limit_in_bytes", strconv.FormatInt(bytes, 10)
	if mnt.version == 2 {
		limitFile = "memory.max"
		ctl, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
		if err != nil {
			return nil, fmt.Errorf("memory limit: cgroup v2 at %s: %w", parent, err)
		}
		if !slices.Contains(strings.Fields(string(ctl)), "memory") {
			if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+memory"), 0); err != nil {
				return nil, fmt.Errorf("memory limit: cgroup v2 at %s does not delegate the memory controller (%w); "+
					"run the server where it does (e.g. systemd-run --user -p MemoryMax=SIZE, or a container with --memory)", parent, err)
			}
		}
	}
	if err := os.Mkdir(m.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("memory limit: cgroup v%d at %s is not writable here (%w); "+
			"run as root or in a container with a delegated cgroup, or limit the container's memory instead", mnt.version, parent, err)
	}
	if err := os.WriteFile(filepath.Join(m.Dir, limitFile), []byte(limit), 0); err != nil {
		os.Remove(m.Dir)
		return nil, fmt.Errorf("memory limit: setting %s: %w", limitFile, err)
	}
	if err := m.Attach(pid); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// Attach moves pid and its children (a postmaster's server processes)
// into the cgroup; attaching a process already there does nothing.
func (m *MemoryLimit) Attach(pid int) error {
	for _, p := range append([]int{pid}, childrenOf(pid)...) {
		if err := os.WriteFile(filepath.Join(m.Dir, "cgroup.procs"), []byte(strconv.Itoa(p)), 0); err != nil {
			if _, serr := os.Stat(fmt.Sprintf("/proc/%d", p)); serr != nil && p != pid {
				continue // a backend that exited meanwhile
			}
			return fmt.Errorf("memory limit: attaching process %d: %w", p, err)
		}
	}
	return nil
}

// closeWait bounds how long Close waits for the cgroup to empty.
const closeWait = 10 * time.Second

// Close moves the processes back to the parent cgroup and removes the
// cgroup, so the server outlives the benchmark without the limit. A
// process forked inside the cgroup while the others are moved out (a
// postmaster starting a backend) is moved by a later pass, and an exiting
// process that still holds the cgroup busy is waited for, up to 10 s.
// Closing a removed cgroup does nothing.
func (m *MemoryLimit) Close() error {
	deadline := time.Now().Add(closeWait)
	for {
		b, err := os.ReadFile(filepath.Join(m.Dir, "cgroup.procs"))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("memory limit: %w", err)
		}
		procs := strings.Fields(string(b))
		for _, p := range procs {
			_ = os.WriteFile(filepath.Join(m.parent, "cgroup.procs"), []byte(p), 0) // exited processes leave by themselves
		}
		err = os.Remove(m.Dir)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("memory limit: removing %s (processes %v were in it): %w", m.Dir, procs, err)
		}
		time.Sleep(10 * time.Millisecond) // an exiting process leaves within milliseconds
	}
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil || p == pid {
			continue
		}
		if _, _, ppid, err := statTimes(p); err == nil && ppid == pid {
			out = append(out, p)
		}
	}
	return out
}

// PostmasterPID reads the postmaster's pid from a data directory's
// postmaster.pid.
func PostmasterPID(dataDir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, fmt.Errorf("the server's pid: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("the server's pid: %s/postmaster.pid starts with %q", dataDir, line)
	}
	return pid, nil
}
