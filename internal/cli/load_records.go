package cli

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/embedded"
	"github.com/pgts/pgts/internal/records"
)

// A record is held several times while it loads: as read, as parsed
// fields, encoded in its batch and in the COPY message.
// maxRecordMemoryFactor is how many times its size a record takes at
// peak: a 256 MiB record took 1.34 GB of peak RSS (/usr/bin/time -v,
// file and stdin, one parser and two).
const (
	maxRecordMemoryFactor     = 5
	maxRecordMemoryFactorText = "5 times"
	// The default bound keeps one record of the longest kind within an
	// eighth of the machine's memory: 1 GiB from 40 GiB of memory on.
	defaultRecordMemoryShare = 8
	defaultRecordMemoryText  = "40GB"
)

// maxRecordBytes reads --max-record-bytes: the longest record, by default
// what COPY accepts (1 GiB), unless a record that long would take more
// than an eighth of the machine's memory.
func maxRecordBytes(flag string) (int, error) {
	if flag == "" {
		return defaultMaxRecordBytes(), nil
	}
	n, err := embedded.ParseSize(flag)
	if err != nil {
		return 0, usagef("--max-record-bytes: %v", err)
	}
	if n < 1 || n > records.MaxMaxRecordBytes {
		return 0, usagef("--max-record-bytes %q: must be between 1 byte and 1GB (PostgreSQL refuses a longer line or field)", flag)
	}
	return int(n), nil
}

func defaultMaxRecordBytes() int {
	m, err := embedded.ThisMachine(runtime.NumCPU())
	if err != nil || m.MemoryBytes <= 0 {
		return records.MaxMaxRecordBytes
	}
	bound := m.MemoryBytes / defaultRecordMemoryShare / maxRecordMemoryFactor
	return int(max(min(bound, records.MaxMaxRecordBytes), 1<<20))
}

// withServerLog adds to a load's error, when the server is the embedded
// cluster, the line of the server's log that says why the server failed
// (a PANIC on a full disk, a backend killed by a signal): the client only
// sees its connection go. A FATAL line is added to the server's failures
// only (a lost connection, a shutdown, a full disk): other sessions'
// FATALs are no news.
func (a *app) withServerLog(err error) error {
	if err == nil || a.embedded == nil {
		return err
	}
	line := a.embedded.LastFailure(a.embeddedLog)
	var se *copyload.ServerError
	if line == "" || !errors.As(err, &se) && !strings.Contains(line, "PANIC:") && !strings.Contains(line, "terminated by signal") {
		return err
	}
	return fmt.Errorf("%w\nthe server's log (%s) says: %s", err, a.embedded.LogPath(), line)
}
