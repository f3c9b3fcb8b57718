package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestMemoryLimitCloseWhileForking closes a limit whose process keeps
// forking short-lived children (as a postmaster starts backends): children
// forked while Close moves the processes out, and children still exiting,
// must not leave the cgroup busy.
func TestMemoryLimitCloseWhileForking(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making cgroups needs root")
	}
	if _, err := memoryCgroupMount(); err != nil {
		t.Skipf("no memory cgroup on this machine: %v", err)
	}
	for round := 0; round < 20; round++ {
		cmd := exec.Command("sh", "-c", "while :; do /bin/true & /bin/true; wait; done")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lim, err := NewMemoryLimit(128<<20, cmd.Process.Pid)
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("NewMemoryLimit: %v", err)
		}
		// Wait until a child forked inside the cgroup is listed there.
		procs := filepath.Join(lim.Dir, "cgroup.procs")
		for {
			b, err := os.ReadFile(procs)
			if err != nil {
				t.Fatal(err)
			}
			if len(strings.Fields(string(b))) > 1 {
				break
			}
		}
		cerr := lim.Close()
		_, serr := os.Stat(lim.Dir)
		alive := cmd.Process.Signal(syscall.Signal(0)) == nil
		cmd.Process.Kill()
		cmd.Wait()
		if cerr != nil {
			t.Fatalf("round %d: Close: %v", round, cerr)
		}
		if !os.IsNotExist(serr) {
			t.Fatalf("round %d: cgroup %s left behind: %v", round, lim.Dir, serr)
		}
		if !alive {
			t.Fatalf("round %d: the process did not survive Close", round)
		}
	}
}

// TestMemoryLimitCloseTwice: a second Close of a removed cgroup is not an
// error (a deferred Close after an explicit one).
func TestMemoryLimitCloseTwice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making cgroups needs root")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lim, err := NewMemoryLimit(128<<20, cmd.Process.Pid)
	if err != nil {
		t.Skipf("NewMemoryLimit: %v", err)
	}
	if err := lim.Close(); err != nil {
		t.Fatal(err)
	}
	if err := lim.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(lim.parent, "cgroup.procs"))
	if err != nil || !slices.Contains(strings.Fields(string(b)), strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("process %d is not back in %s: %v", cmd.Process.Pid, lim.parent, err)
	}
}
