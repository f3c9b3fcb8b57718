package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// CPULimit is a CPU cgroup made for one server of a benchmark (a shard
// server of `bench load --shards`): its processes together get at most
// Cores cores of CPU time (CFS bandwidth: quota per 100 ms period).
// cgroup v1's cpu controller is used when mounted, else cgroup v2's
// cpu.max. Processes forked by an attached postmaster inherit it. Not
// safe for concurrent use.
type CPULimit struct {
	Cores   float64
	Version int
	Dir     string
	parent  string
}

const cpuPeriodMicros = 100000

// NewCPULimit makes a CPU cgroup named name (unique per process) limited
// to cores, at the root of the CPU hierarchy, and attaches pid and its
// children. The error says why when this machine cannot do it.
func NewCPULimit(name string, cores float64, pid int) (*CPULimit, error) {
	if cores < 0.01 || cores > 1024 {
		return nil, fmt.Errorf("cpu limit %g cores: must be between 0.01 and 1024", cores)
	}
	mnt, err := controllerMount("cpu")
	if err != nil {
		return nil, fmt.Errorf("cpu limit: %w", err)
	}
	l := &CPULimit{Cores: cores, Version: mnt.version, parent: mnt.dir,
		Dir: filepath.Join(mnt.dir, fmt.Sprintf("pgts-bench-%d-%s", os.Getpid(), name))}
	quota := strconv.Itoa(int(cores * cpuPeriodMicros))
	if mnt.version == 2 {
		ctl, err := os.ReadFile(filepath.Join(mnt.dir, "cgroup.subtree_control"))
		if err == nil && !slices.Contains(strings.Fields(string(ctl)), "cpu") {
			if err := os.WriteFile(filepath.Join(mnt.dir, "cgroup.subtree_control"), []byte("+cpu"), 0); err != nil {
				return nil, fmt.Errorf("cpu limit: cgroup v2 at %s does not delegate the cpu controller: %w", mnt.dir, err)
			}
		}
	}
	if err := os.Mkdir(l.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("cpu limit: cgroup v%d at %s is not writable here (%w); run as root or in a container with a delegated cgroup", mnt.version, mnt.dir, err)
	}
	var werr error
	if mnt.version == 1 {
		werr = os.WriteFile(filepath.Join(l.Dir, "cpu.cfs_period_us"), []byte(strconv.Itoa(cpuPeriodMicros)), 0)
		if werr == nil {
			werr = os.WriteFile(filepath.Join(l.Dir, "cpu.cfs_quota_us"), []byte(quota), 0)
		}
	} else {
		werr = os.WriteFile(filepath.Join(l.Dir, "cpu.max"), []byte(quota+" "+strconv.Itoa(cpuPeriodMicros)), 0)
	}
	if werr != nil {
		os.Remove(l.Dir)
		return nil, fmt.Errorf("cpu limit: %w", werr)
	}
	if err := l.Attach(pid); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// Attach moves pid and its children into the cgroup.
func (l *CPULimit) Attach(pid int) error {
	for _, p := range append([]int{pid}, childrenOf(pid)...) {
		if err := os.WriteFile(filepath.Join(l.Dir, "cgroup.procs"), []byte(strconv.Itoa(p)), 0); err != nil {
			if _, serr := os.Stat(fmt.Sprintf("/proc/%d", p)); serr != nil && p != pid {
				continue
			}
			return fmt.Errorf("cpu limit: attaching process %d: %w", p, err)
		}
	}
	return nil
}

// Throttled returns how many periods the cgroup was throttled in and for
// how long in all (microseconds), from cpu.stat.
func (l *CPULimit) Throttled() (periods int64, micros int64) {
	b, err := os.ReadFile(filepath.Join(l.Dir, "cpu.stat"))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "nr_throttled":
			periods = v
		case "throttled_time": // v1, nanoseconds
			micros = v / 1000
		case "throttled_usec": // v2
			micros = v
		}
	}
	return periods, micros
}

// Close moves the processes back and removes the cgroup.
func (l *CPULimit) Close() error {
	b, err := os.ReadFile(filepath.Join(l.Dir, "cgroup.procs"))
	if err != nil {
		return fmt.Errorf("cpu limit: %w", err)
	}
	for _, p := range strings.Fields(string(b)) {
		_ = os.WriteFile(filepath.Join(l.parent, "cgroup.procs"), []byte(p), 0)
	}
	if err := os.Remove(l.Dir); err != nil {
		return fmt.Errorf("cpu limit: removing %s: %w", l.Dir, err)
	}
	return nil
}
