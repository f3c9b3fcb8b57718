package embedded

import (
	"os"
	"strings"
)

// LogPath is the server log of the cluster.
func (c *Cluster) LogPath() string { return c.logPath() }

// LogOffset is the server log's size now: LastFailure(offset) reads only
// what is logged after it.
func (c *Cluster) LogOffset() int64 { return c.logSize() }

// lastFailureBytes bounds how much of the log LastFailure reads (the end).
const lastFailureBytes = 256 << 10

// LastFailure returns the server log's line that best says why the server
// stopped or a session was cut off, among the lines written after offset:
// the last PANIC (a WAL write on a full disk: "could not write to file
// "pg_wal/...": No space left on device"), else the last process ended by
// a signal (the out-of-memory killer's SIGKILL), else the last FATAL; ""
// when there is none.
func (c *Cluster) LastFailure(offset int64) string {
	f, err := os.Open(c.logPath())
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() <= offset {
		return ""
	}
	offset = max(offset, st.Size()-lastFailureBytes)
	buf := make([]byte, st.Size()-offset)
	n, _ := f.ReadAt(buf, offset)
	return lastFailure(string(buf[:n]))
}

// lastFailure picks LastFailure's line from log lines.
func lastFailure(log string) string {
	var panicLine, signalLine, fatalLine string
	for _, line := range strings.Split(log, "\n") {
		switch {
		case strings.Contains(line, "PANIC:  "):
			panicLine = line
		case strings.Contains(line, "was terminated by signal"):
			signalLine = line
		case strings.Contains(line, "FATAL:  "):
			fatalLine = line
		}
	}
	for _, l := range []string{panicLine, signalLine, fatalLine} {
		if l != "" {
			return strings.TrimSpace(l)
		}
	}
	return ""
}
