// Package bench runs pgts' benchmark scenarios and measures them: rows per
// second, per-batch timings, CPU seconds of the client and of the server
// processes, bytes written, WAL generated and table sizes. It produces
// Result values; formatting them is the report package's business.
//
// Glossary:
//
//	store    how the target table is laid out (one plain table, native
//	         partitions made beforehand, a pgts series table)
//	loader   how rows travel (psql COPY, pgts text or binary COPY, INSERT)
//	run      one store × loader × workers combination, measured once
//	server CPU  utime+stime of the postmaster and its children (live ones
//	         read directly, exited ones through the postmaster's cutime)
package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of /proc/PID/stat times; 100 on Linux.
const clockTicks = 100

// ProcTimes is CPU and I/O of a process tree at one instant.
type ProcTimes struct {
	CPUSeconds  float64 // user + system, including reaped children
	WriteBytes  int64   // bytes the processes caused to be written to storage
	ReadBytes   int64
	WriteCalls  int64 // write(2)-family system calls (syscw); PostgreSQL answers clients with send(2), which syscw does not count
	Processes   int
	Unavailable bool // /proc could not be read (e.g. a remote server)
}

// Sub returns a - b.
func (a ProcTimes) Sub(b ProcTimes) ProcTimes {
	return ProcTimes{CPUSeconds: a.CPUSeconds - b.CPUSeconds, WriteBytes: a.WriteBytes - b.WriteBytes,
		ReadBytes: a.ReadBytes - b.ReadBytes, WriteCalls: a.WriteCalls - b.WriteCalls, Processes: a.Processes, Unavailable: a.Unavailable || b.Unavailable}
}

// statTimes reads utime, stime, cutime, cstime (seconds) and the parent pid.
func statTimes(pid int) (self, children float64, ppid int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, 0, err
	}
	// The command name may contain spaces and parentheses: fields start
	// after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return 0, 0, 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	// f[0] is state (field 3); utime is field 14 → f[11].
	num := func(k int) float64 { v, _ := strconv.ParseFloat(f[k], 64); return v }
	ppid, _ = strconv.Atoi(f[1])
	return (num(11) + num(12)) / clockTicks, (num(13) + num(14)) / clockTicks, ppid, nil
}

// ioBytes reads write_bytes, read_bytes and syscw of /proc/PID/io.
func ioBytes(pid int) (w, r, calls int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0, 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "write_bytes":
			w = n
		case "read_bytes":
			r = n
		case "syscw":
			calls = n
		}
	}
	return w, r, calls
}

// ServerTimes sums CPU and I/O over a postmaster and all its children.
// Children that exited are counted through the postmaster's cutime and
// cstime (it reaps them); their I/O is not, so WriteBytes is a lower bound
// when backends come and go during a run (a run keeps its connections).
func ServerTimes(postmaster int) ProcTimes {
	self, children, _, err := statTimes(postmaster)
	if err != nil {
		return ProcTimes{Unavailable: true}
	}
	pt := ProcTimes{CPUSeconds: self + children, Processes: 1}
	pt.WriteBytes, pt.ReadBytes, pt.WriteCalls = ioBytes(postmaster)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return ProcTimes{Unavailable: true}
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == postmaster {
			continue
		}
		s, _, ppid, err := statTimes(pid)
		if err != nil || ppid != postmaster {
			continue
		}
		pt.CPUSeconds += s
		w, r, c := ioBytes(pid)
		pt.WriteBytes += w
		pt.ReadBytes += r
		pt.WriteCalls += c
		pt.Processes++
	}
	return pt
}

// SelfTimes is this process's CPU (including reaped children, such as a
// psql child) and I/O.
func SelfTimes() ProcTimes {
	self, children, _, err := statTimes(os.Getpid())
	if err != nil {
		return ProcTimes{Unavailable: true}
	}
	w, r, c := ioBytes(os.Getpid())
	return ProcTimes{CPUSeconds: self + children, WriteBytes: w, ReadBytes: r, WriteCalls: c, Processes: 1}
}

// PostmasterOf returns the parent of a backend pid when it is a local
// postgres process, or 0.
func PostmasterOf(backend int) int {
	_, _, ppid, err := statTimes(backend)
	if err != nil || ppid <= 1 {
		return 0
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", ppid))
	if err != nil || !strings.HasPrefix(filepath.Base(exe), "postgres") {
		return 0
	}
	return ppid
}
