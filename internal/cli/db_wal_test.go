package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDBStartWALMinimalTwice: db status shows the WAL profile, and db
// start --wal-minimal warns that the flag applies at creation only when
// the existing cluster does not have the profile (it used to warn even
// when wal_level already was minimal).
func TestDBStartWALMinimalTwice(t *testing.T) {
	tmp, err := os.MkdirTemp("/tmp", "pgts-cli-wal-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chmod(tmp, 0o755); err != nil { // the server's user (postgres, as root) passes it
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "data")
	env := map[string]string{"PGTS_DATA_DIR": dir}
	t.Cleanup(func() {
		if _, stderr, code := run(t, env, "db", "destroy", "--yes"); code != 0 {
			t.Errorf("destroy: %d %s", code, stderr)
		}
	})
	if _, stderr, code := run(t, env, "db", "start", "--wal-minimal"); code != 0 {
		t.Fatalf("start: %d %s", code, stderr)
	}
	if out, stderr, code := run(t, env, "db", "status"); code != 0 || !strings.Contains(out, "wal level: minimal (bulk-load profile") {
		t.Fatalf("status: %d\n%s%s", code, out, stderr)
	}
	if out, _, code := run(t, env, "db", "status", "--json"); code != 0 || !strings.Contains(out, `"wal_level": "minimal"`) {
		t.Fatalf("status --json: %d\n%s", code, out)
	}
	if _, stderr, code := run(t, env, "db", "start", "--wal-minimal"); code != 0 || strings.Contains(stderr, "applies when a cluster is created") {
		t.Fatalf("second start --wal-minimal: %d\n%s", code, stderr)
	}
	// Without the profile, the warning stays.
	conf := filepath.Join(dir, "postgresql.auto.conf")
	if err := os.WriteFile(conf, []byte("wal_level = 'replica'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := run(t, env, "db", "status"); !strings.Contains(out, "wal level: replica") {
		t.Fatalf("status with wal_level = replica in postgresql.auto.conf:\n%s", out)
	}
	if _, stderr, _ := run(t, env, "db", "start", "--wal-minimal"); !strings.Contains(stderr, "applies when a cluster is created") {
		t.Fatalf("start --wal-minimal on a cluster without the profile does not warn:\n%s", stderr)
	}
}
