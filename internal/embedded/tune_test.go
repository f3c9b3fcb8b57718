package embedded

import (
	"strings"
	"testing"
)

func TestTune(t *testing.T) {
	got := map[string]string{}
	for _, s := range Tune(Machine{MemoryBytes: 24 * gib, CPUs: 2}) {
		got[s.Name] = s.Value
	}
	want := map[string]string{
		"shared_buffers":       "6GB",
		"effective_cache_size": "18GB",
		"maintenance_work_mem": "1536MB",
		"wal_buffers":          "16MB",
		"max_wal_size":         "8GB",
		"max_worker_processes": "10",
		"max_parallel_workers": "2",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	small := map[string]string{}
	for _, s := range Tune(Machine{MemoryBytes: 1 * gib, CPUs: 1}) {
		small[s.Name] = s.Value
	}
	if small["shared_buffers"] != "256MB" || small["max_wal_size"] != "2GB" || small["max_parallel_workers_per_gather"] != "1" {
		t.Errorf("1GB machine: %v", small)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"16GB": 16 * gib, "512MB": 512 * mib, "2048kB": 2 * mib, "100": 100, " 1 tb": 1024 * gib} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "GB", "12XB", "-1GB", "99999999999999999999"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

func TestMemTotal(t *testing.T) {
	got, err := memTotal(strings.NewReader("MemFree: 1 kB\nMemTotal:       24607040 kB\n"))
	if err != nil || got != 24607040*1024 {
		t.Fatalf("memTotal = %d, %v", got, err)
	}
}

// TestTuneBoundsWALByDisk: max_wal_size never takes more than an eighth
// of the free disk, and says why.
func TestTuneBoundsWALByDisk(t *testing.T) {
	for _, c := range []struct {
		free int64
		want string
	}{{0, "8GB"}, {1024 * gib, "8GB"}, {10 * gib, "1280MB"}, {1 * gib, "128MB"}, {100 * mib, "64MB"}} {
		var maxWal, minWal Setting
		for _, s := range Tune(Machine{MemoryBytes: 24 * gib, CPUs: 2, DiskFreeBytes: c.free}) {
			switch s.Name {
			case "max_wal_size":
				maxWal = s
			case "min_wal_size":
				minWal = s
			}
		}
		if maxWal.Value != c.want {
			t.Errorf("free %d: max_wal_size = %s, want %s", c.free, maxWal.Value, c.want)
		}
		if c.free > 0 && c.free < 64*gib && !strings.Contains(maxWal.Why, "free disk") {
			t.Errorf("free %d: max_wal_size's reason %q does not mention the disk", c.free, maxWal.Why)
		}
		if mw, _ := ParseSize(minWal.Value); mw < 32*mib {
			t.Errorf("free %d: min_wal_size = %s, below 2 segments", c.free, minWal.Value)
		}
	}
}
