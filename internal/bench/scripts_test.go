package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchRenderScript runs the unit tests of make bench-render's script
// (scripts/parity/test_bench_render.py: its comparison of answers, its
// table, and VictoriaMetrics' lifecycle when a binary is built).
func TestBenchRenderScript(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: make bench-render needs it, nothing else does")
	}
	cmd := exec.Command(py, "-m", "unittest", "-v", "test_bench_render")
	cmd.Dir = "../../scripts/parity"
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "OK") {
		t.Errorf("unittest:\n%s", out)
	}
	t.Logf("\n%s", out)
}

// TestBenchVMScriptSkips: when VictoriaMetrics cannot be built,
// scripts/bench-vm.sh prints no path, one line saying how to get it, and
// exits 0 so that the benchmarks run without it.
func TestBenchVMScriptSkips(t *testing.T) {
	// A copy of the script in a directory of its own, so that its
	// .bench-tools is not the repository's.
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../../scripts/bench-vm.sh")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "scripts", "bench-vm.sh")
	if err := os.WriteFile(script, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, "v1.151.0")
	cmd.Env = append(os.Environ(), "GO=false")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bench-vm.sh: %v\n%s", err, stderr.String())
	}
	if stdout.String() != "" {
		t.Errorf("stdout %q, want nothing", stdout.String())
	}
	if !strings.Contains(stderr.String(), "VictoriaMetrics skipped: 'GOBIN=") ||
		!strings.Contains(stderr.String(), "go install github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics@v1.151.0") {
		t.Errorf("stderr %q: want the skip line with the install command", stderr.String())
	}
}
