package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLoadNamesServerPanic: a load into the embedded cluster whose server
// PANICs (here WAL it cannot create, as on a full disk) says what the
// server's log says (it used to say only that the connection broke, or
// that the server may have crashed).
func TestLoadNamesServerPanic(t *testing.T) {
	tmp, err := os.MkdirTemp("/tmp", "pgts-cli-panic-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "data")
	env := map[string]string{"PGTS_DATA_DIR": dir}
	t.Cleanup(func() {
		os.Chmod(filepath.Join(dir, "pg_wal"), 0o700)
		if _, stderr, code := run(t, env, "db", "destroy", "--yes"); code != 0 {
			t.Errorf("destroy: %d %s", code, stderr)
		}
	})
	if _, stderr, code := run(t, env, "table", "create", "c", "--columns",
		"time timestamptz not null, device int not null, data1 float8, data2 float8, data3 float8, data4 float8, data5 float8", "--interval", "1 day"); code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	// The server cannot create a WAL segment: its next one PANICs.
	if err := os.Chmod(filepath.Join(dir, "pg_wal"), 0o500); err != nil {
		t.Fatal(err)
	}
	start := time.Now().UTC().Add(-48 * time.Hour).Format("2006-01-02")
	_, stderr, code := run(t, env, "load", "c", "--generate", "conditions", "--batches", "100", "--start", start, "--workers", "1")
	if code != 1 || !strings.Contains(stderr, "the server's log") || !strings.Contains(stderr, `PANIC:  could not create file "pg_wal/xlogtemp`) {
		t.Fatalf("load with a server that PANICs: exit %d\n%s", code, stderr)
	}
}
