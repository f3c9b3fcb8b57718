package cli

import (
	"runtime"

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
