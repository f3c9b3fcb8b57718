package embedded

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Setting is one postgresql.conf parameter with the reason for its value.
type Setting struct {
	Name  string
	Value string
	Why   string
}

// Machine is what tuning depends on.
type Machine struct {
	MemoryBytes int64
	CPUs        int
	// DiskFreeBytes is the free space on the data dir's file system; 0
	// means unknown (WAL is then sized by memory alone).
	DiskFreeBytes int64
}

// walDiskShare is the share of the free disk max_wal_size may take: WAL
// may overshoot max_wal_size between checkpoints, and the data needs the
// rest.
const walDiskShare = 8

const (
	kib = int64(1024)
	mib = 1024 * kib
	gib = 1024 * mib
)

// Tune recommends settings for a server dedicated to time-series loading
// and queries on a machine of the given size. The rules follow common
// practice (and timescaledb-tune's): a quarter of RAM for shared buffers,
// three quarters as the cache estimate, large WAL and spread checkpoints so
// that bulk loads are not dominated by full-page writes.
func Tune(m Machine) []Setting {
	mem := m.MemoryBytes
	if mem < 256*mib {
		mem = 256 * mib
	}
	cpus := m.CPUs
	if cpus < 1 {
		cpus = 1
	}
	shared := mem / 4
	if shared > 32*gib {
		shared = 32 * gib
	}
	maint := mem / 16
	if maint > 2*gib {
		maint = 2 * gib
	}
	const maxConns = 100
	work := (mem - shared) / (maxConns * 3) / 2
	if work < 4*mib {
		work = 4 * mib
	}
	walBuffers := shared / 32
	if walBuffers > 16*mib {
		walBuffers = 16 * mib
	}
	if walBuffers < 64*kib {
		walBuffers = 64 * kib
	}
	maxWal := int64(2 * gib)
	walWhy := "few forced checkpoints during bulk loads"
	if mem >= 8*gib {
		maxWal = 8 * gib
	}
	if free := m.DiskFreeBytes; free > 0 && free/walDiskShare < maxWal {
		maxWal = max(free/walDiskShare/mib*mib, 64*mib)
		walWhy = fmt.Sprintf("1/%d of the %s of free disk: WAL must not fill the disk (more free disk, fewer forced checkpoints)", walDiskShare, size(free/mib*mib))
	}
	perGather := cpus / 2
	if perGather < 1 {
		perGather = 1
	}
	return []Setting{
		{"shared_buffers", size(shared), "25% of RAM"},
		{"effective_cache_size", size(mem * 3 / 4), "75% of RAM: what the OS cache and shared buffers hold together"},
		{"maintenance_work_mem", size(maint), "RAM/16, at most 2GB: index builds"},
		{"work_mem", size(work), "(RAM - shared_buffers) / (max_connections * 3) / 2"},
		{"wal_buffers", size(walBuffers), "shared_buffers/32, at most 16MB"},
		{"max_wal_size", size(maxWal), walWhy},
		{"min_wal_size", size(max(maxWal/4, 32*mib)), "keep WAL segments for reuse"},
		{"checkpoint_timeout", "15min", "spread checkpoints; fewer full-page writes"},
		{"checkpoint_completion_target", "0.9", "smooth checkpoint I/O"},
		{"max_connections", strconv.Itoa(maxConns), "loader workers and daemon connections"},
		{"max_worker_processes", strconv.Itoa(cpus + 8), "cores + background workers"},
		{"max_parallel_workers", strconv.Itoa(cpus), "one per core"},
		{"max_parallel_workers_per_gather", strconv.Itoa(perGather), "half the cores"},
		{"max_parallel_maintenance_workers", strconv.Itoa(perGather), "half the cores"},
		{"random_page_cost", "1.1", "SSD storage"},
		{"effective_io_concurrency", "200", "SSD storage"},
		{"shared_preload_libraries", "plpgsql", "the SQL helpers' PL/pgSQL loaded once at start, not by each new connection's first call (about 1.4 ms)"},
	}
}

// MinimalWAL is the bulk-loading profile: with wal_level = minimal, rows
// COPYed into a table created in the same transaction (pgts load --bulk's
// one-transaction partitions) are not written to WAL; the table is synced
// at COMMIT instead. The price: no streaming replication, no WAL
// archiving, hence no point-in-time recovery, and no pg_basebackup —
// only crash recovery and dumps. The server refuses wal_level = minimal
// unless max_wal_senders is 0 and archive_mode is off.
func MinimalWAL() []Setting {
	return []Setting{
		{"wal_level", "minimal", "bulk-load profile: no WAL for COPY into tables made in the same transaction; NO replication, NO point-in-time recovery"},
		{"max_wal_senders", "0", "required by wal_level = minimal"},
		{"archive_mode", "off", "required by wal_level = minimal"},
	}
}

// size renders bytes the way postgresql.conf accepts (kB, MB, GB units).
func size(b int64) string {
	switch {
	case b%gib == 0:
		return fmt.Sprintf("%dGB", b/gib)
	case b >= gib:
		return fmt.Sprintf("%dMB", b/mib)
	case b%mib == 0 || b >= 16*mib:
		return fmt.Sprintf("%dMB", b/mib)
	default:
		return fmt.Sprintf("%dkB", b/kib)
	}
}

// ParseSize reads a memory size such as "16GB", "512MB", "2048kB" or a
// plain number of bytes. Units are binary (1GB = 1024MB), as in PostgreSQL.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("size %q: expected a number with an optional unit (kB, MB, GB, TB)", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	unit := strings.ToUpper(strings.TrimSpace(t[i:]))
	mult := map[string]int64{"": 1, "B": 1, "K": kib, "KB": kib, "KIB": kib, "M": mib, "MB": mib, "MIB": mib,
		"G": gib, "GB": gib, "GIB": gib, "T": 1024 * gib, "TB": 1024 * gib, "TIB": 1024 * gib}[unit]
	if mult == 0 {
		return 0, fmt.Errorf("size %q: unknown unit %q (use kB, MB, GB or TB)", s, unit)
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * mult, nil
}

// ThisMachine reads the memory (MemTotal in /proc/meminfo, capped by a
// cgroup v2 limit when one is set) and the usable cores.
func ThisMachine(cpus int) (Machine, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return Machine{}, fmt.Errorf("reading memory size: %w", err)
	}
	defer f.Close()
	mem, err := memTotal(f)
	if err != nil {
		return Machine{}, err
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if lim, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && lim < mem {
			mem = lim
		}
	}
	return Machine{MemoryBytes: mem, CPUs: cpus}, nil
}

func memTotal(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parsing MemTotal %q: %w", f[1], err)
			}
			return kb * kib, nil
		}
	}
	return 0, fmt.Errorf("no MemTotal in /proc/meminfo")
}

// WriteConf renders settings as a postgresql.conf include file.
func WriteConf(w io.Writer, header string, settings []Setting) error {
	bw := bufio.NewWriter(w)
	for _, line := range strings.Split(strings.TrimSpace(header), "\n") {
		fmt.Fprintf(bw, "# %s\n", line)
	}
	for _, s := range settings {
		fmt.Fprintf(bw, "%-34s = %-10s # %s\n", s.Name, quoteConf(s.Value), s.Why)
	}
	return bw.Flush()
}

func quoteConf(v string) string {
	if v == "" || strings.ContainsAny(v, " '#=,\\") {
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	return v
}

// DiskFree returns the free space (for an unprivileged user) on the file
// system that holds path, or holds its nearest existing ancestor when path
// does not exist yet.
func DiskFree(path string) (int64, error) {
	for {
		var st syscall.Statfs_t
		err := syscall.Statfs(path, &st)
		if err == nil {
			return int64(st.Bavail) * st.Bsize, nil
		}
		parent := filepath.Dir(path)
		if !errors.Is(err, syscall.ENOENT) || parent == path {
			return 0, fmt.Errorf("reading the free disk space at %q: %w", path, err)
		}
		path = parent
	}
}
