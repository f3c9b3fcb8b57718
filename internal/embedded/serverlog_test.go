package embedded

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLastFailure: the server log's PANIC is named first (a WAL write on a
// full disk), then a process killed by a signal, then a FATAL; only lines
// after the offset count.
func TestLastFailure(t *testing.T) {
	dir := t.TempDir()
	c := &Cluster{cfg: Config{DataDir: dir}}
	old := "2026-11-26 10:00:00.000 UTC [10] PANIC:  an old panic\n"
	log := old +
		"2026-11-26 10:00:01.000 UTC [11] FATAL:  terminating connection due to administrator command\n" +
		"2026-11-26 10:00:02.000 UTC [12] PANIC:  could not write to file \"pg_wal/xlogtemp.12\": No space left on device\n" +
		"2026-11-26 10:00:02.100 UTC [1] LOG:  WAL writer process (PID 12) was terminated by signal 6: Aborted\n" +
		"2026-11-26 10:00:02.200 UTC [13] FATAL:  the database system is in recovery mode\n"
	if err := os.WriteFile(filepath.Join(dir, "pgts.log"), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	want := `2026-11-26 10:00:02.000 UTC [12] PANIC:  could not write to file "pg_wal/xlogtemp.12": No space left on device`
	if got := c.LastFailure(int64(len(old))); got != want {
		t.Errorf("LastFailure = %q, want %q", got, want)
	}
	if got := lastFailure("x [1] LOG:  server process (PID 7) was terminated by signal 9: Killed\ny [8] FATAL:  the database system is in recovery mode\n"); got != "x [1] LOG:  server process (PID 7) was terminated by signal 9: Killed" {
		t.Errorf("signal: %q", got)
	}
	if got := c.LastFailure(int64(len(log))); got != "" {
		t.Errorf("nothing after the offset: %q", got)
	}
}
