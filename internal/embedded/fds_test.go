package embedded

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestServerInheritsNoDescriptors: a descriptor the caller holds open
// without close-on-exec (as `flock LOCKFILE pgts ...` passes its lock) does
// not reach the server, which would otherwise hold it (and the lock) long
// after pgts exits.
func TestServerInheritsNoDescriptors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held.lock")
	fd, err := syscall.Open(path, syscall.O_CREAT|syscall.O_RDWR, 0o600) // no O_CLOEXEC, as a parent would pass it
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	c := newTestCluster(t, Config{AnyPort: true})
	info, err := c.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("/proc", strconv.Itoa(info.PID), "fd")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err == nil && target == path {
			t.Errorf("the postmaster (PID %d) holds descriptor %s on %s, inherited from the caller", info.PID, e.Name(), path)
		}
	}
	// The caller's own descriptor is left as it was: still open, still
	// inherited by what the caller itself runs.
	flags, err := fcntl(fd, syscall.F_GETFD)
	if err != nil || flags&syscall.FD_CLOEXEC != 0 {
		t.Errorf("the caller's descriptor flags = %#x, %v; want it untouched (no FD_CLOEXEC)", flags, err)
	}
}

func fcntl(fd, cmd int) (int, error) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), uintptr(cmd), 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}
