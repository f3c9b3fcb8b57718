package embedded

import (
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// A program started by pgts inherits every descriptor of pgts that is not
// close-on-exec: the ones pgts itself inherited from its parent, such as
// the lock of `flock LOCKFILE pgts ...`. The postmaster, which outlives
// pgts, would keep such a lock held for as long as it runs. So the
// server's programs are started with those descriptors marked
// close-on-exec, and the marks are removed again at once: the caller's own
// descriptors stay as they were.

// execMu serialises the marking, so that two starts do not restore each
// other's marks too early.
var execMu sync.Mutex

// startWithStdioOnly starts cmd with no descriptor of this process but
// cmd's own standard ones (and cmd.ExtraFiles, which os/exec passes on
// explicitly).
func startWithStdioOnly(start func() error) error {
	execMu.Lock()
	defer execMu.Unlock()
	restore := markInheritedCloseOnExec()
	defer restore()
	return start()
}

// markInheritedCloseOnExec sets FD_CLOEXEC on every descriptor above 2
// that lacks it and returns a function clearing it again on those.
func markInheritedCloseOnExec() (restore func()) {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return func() {}
	}
	type mark struct {
		fd       int
		dev, ino uint64
	}
	var marked []mark
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue // closed meanwhile (ReadDir's own), or already marked
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err == nil {
			marked = append(marked, mark{fd, st.Dev, st.Ino})
		}
	}
	return func() {
		for _, m := range marked {
			// A descriptor closed and reused meanwhile is not the
			// caller's any more: leave it close-on-exec.
			var st unix.Stat_t
			if unix.Fstat(m.fd, &st) != nil || st.Dev != m.dev || st.Ino != m.ino {
				continue
			}
			if flags, err := unix.FcntlInt(uintptr(m.fd), unix.F_GETFD, 0); err == nil {
				unix.FcntlInt(uintptr(m.fd), unix.F_SETFD, flags&^unix.FD_CLOEXEC)
			}
		}
	}
}
