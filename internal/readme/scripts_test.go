package readme

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// repoRoot is the repository's top directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// fakeTools makes a PATH directory holding a fake apt-get (which records
// its arguments in calls, and fails with a detailed message when fail is
// set), a fake go, and links to the few real tools the script uses.
func fakeTools(t *testing.T, fail bool) (dir, calls string) {
	t.Helper()
	dir = t.TempDir()
	calls = filepath.Join(dir, "calls")
	status := "0"
	if fail {
		status = "100"
	}
	apt := "#!/bin/sh\necho \"apt-get $*\" >> " + calls + "\n" +
		"if [ \"$1\" = install ]; then echo 'dpkg: error processing package chromium (--configure): detailed reason 42' >&2; exit " + status + "; fi\n"
	for name, body := range map[string]string{"apt-get": apt, "go": "#!/bin/sh\nexit 0\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range []string{"id", "pg_config", "cat", "mktemp", "rm"} {
		if p, err := exec.LookPath(tool); err == nil {
			if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir, calls
}

// TestInstallDepsDemoSkipsChromium: `make demo` runs install-deps.sh with
// no argument and must not install Chromium (only `make test` needs it);
// when apt fails, its own output is shown, not only dpkg's exit code.
func TestInstallDepsDemoSkipsChromium(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the script installs packages only as root")
	}
	if _, err := exec.LookPath("pg_config"); err != nil {
		t.Skip("needs PostgreSQL's pg_config, so that the script does not install the server")
	}
	script := filepath.Join(repoRoot(t), "scripts", "install-deps.sh")

	dir, calls := fakeTools(t, false)
	cmd := exec.Command("/bin/bash", script)
	cmd.Env = []string{"PATH=" + dir, "HOME=" + t.TempDir()}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install-deps.sh: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(calls); strings.Contains(string(b), "chromium") {
		t.Fatalf("install-deps.sh for the demo installs Chromium:\n%s", b)
	}

	dir, calls = fakeTools(t, true)
	cmd = exec.Command("/bin/bash", script, "chromium")
	cmd.Env = []string{"PATH=" + dir, "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("install-deps.sh chromium with a failing apt-get succeeded:\n%s", out)
	}
	if b, _ := os.ReadFile(calls); !strings.Contains(string(b), "install") || !strings.Contains(string(b), "chromium") {
		t.Fatalf("install-deps.sh chromium did not install Chromium: calls\n%s", b)
	}
	if !strings.Contains(string(out), "detailed reason 42") {
		t.Fatalf("the installer's own output is hidden:\n%s", out)
	}
}

// TestInstallDepsWaitsForTheLock: when another apt holds the dpkg lock,
// the script waits for it (bounded) and says so, instead of failing at
// once; once the bound is passed it fails with apt's message.
func TestInstallDepsWaitsForTheLock(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the script installs packages only as root")
	}
	if _, err := exec.LookPath("pg_config"); err != nil {
		t.Skip("needs PostgreSQL's pg_config, so that the script does not install the server")
	}
	script := filepath.Join(repoRoot(t), "scripts", "install-deps.sh")
	for _, tc := range []struct {
		name      string
		busyTries int // apt-get fails on the lock this many times
		wait      string
		ok        bool
	}{
		{"lock freed", 3, "10", true},
		{"lock held past the bound", 100, "4", false},
	} {
		dir, calls := fakeTools(t, false)
		counter := filepath.Join(dir, "tries")
		apt := "#!/bin/bash\necho \"apt-get $*\" >> " + calls + "\n" +
			"n=$(cat " + counter + " 2>/dev/null || echo 0); echo $((n+1)) > " + counter + "\n" +
			"if [ \"$n\" -lt " + strconv.Itoa(tc.busyTries) + " ]; then echo 'E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)' >&2; exit 100; fi\n"
		if err := os.WriteFile(filepath.Join(dir, "apt-get"), []byte(apt), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, tool := range []string{"grep", "sleep", "bash"} {
			if p, err := exec.LookPath(tool); err == nil {
				os.Symlink(p, filepath.Join(dir, tool))
			}
		}
		cmd := exec.Command("/bin/bash", script, "chromium")
		cmd.Env = []string{"PATH=" + dir, "HOME=" + t.TempDir(), "PGTS_APT_LOCK_POLL=0", "PGTS_APT_LOCK_WAIT=" + tc.wait}
		out, err := cmd.CombinedOutput()
		if (err == nil) != tc.ok {
			t.Fatalf("%s: %v\n%s", tc.name, err, out)
		}
		if !strings.Contains(string(out), "holds the package lock") || !strings.Contains(string(out), "held by process 4242") {
			t.Fatalf("%s: the wait for the lock is not said:\n%s", tc.name, out)
		}
		if !tc.ok && !strings.Contains(string(out), "still held after 4s") {
			t.Fatalf("%s: the failure does not say the lock stayed held:\n%s", tc.name, out)
		}
	}
}

// TestDemoSaysClusterRuns: `make demo` leaves the embedded cluster running
// for the user to query, and says so, with how to stop or remove it (it
// used to end silently with the server up).
func TestDemoSaysClusterRuns(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	fake := "#!/bin/sh\necho \"pgts $*\" >> " + calls + "\n" +
		"if [ \"$1 $2\" = 'db url' ]; then echo 'postgresql://postgres@/postgres?host=%2Ftmp%2Fpgts-x&port=5'; fi\n"
	pgts := filepath.Join(dir, "pgts")
	if err := os.WriteFile(pgts, []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/bash", filepath.Join(repoRoot(t), "scripts", "demo.sh"), pgts)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo.sh: %v\n%s", err, out)
	}
	for _, want := range []string{"still running", pgts + " db stop", pgts + " db psql", "postgresql://postgres@/postgres"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo.sh's output does not say %q:\n%s", want, out)
		}
	}
}
