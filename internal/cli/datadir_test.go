package cli

import (
	"strings"
	"testing"
)

// TestDefaultDataDir: the default data dir is per user, not per working
// directory; the flag and PGTS_DATA_DIR override it.
func TestDefaultDataDir(t *testing.T) {
	for _, c := range []struct {
		flag string
		env  map[string]string
		root bool
		want string
	}{
		{"/srv/x", map[string]string{"PGTS_DATA_DIR": "/env/x", "HOME": "/home/u"}, false, "/srv/x"},
		{"", map[string]string{"PGTS_DATA_DIR": "/env/x", "HOME": "/home/u"}, false, "/env/x"},
		{"", map[string]string{"XDG_DATA_HOME": "/xdg", "HOME": "/home/u"}, false, "/xdg/pgts"},
		{"", map[string]string{"HOME": "/home/u"}, false, "/home/u/.local/share/pgts"},
		{"", map[string]string{"XDG_DATA_HOME": "relative", "HOME": "/home/u"}, false, "/home/u/.local/share/pgts"},
		{"", map[string]string{"HOME": "/root"}, true, "/var/lib/pgts"},
		{"", map[string]string{"XDG_DATA_HOME": "/xdg", "HOME": "/root"}, true, "/xdg/pgts"},
	} {
		a := &app{dataDir: c.flag, env: Env{Getenv: func(k string) string { return c.env[k] }}}
		got, err := a.dataDirPathFor(c.root)
		if err != nil || got != c.want {
			t.Errorf("flag %q env %v root %v: %q, %v; want %q", c.flag, c.env, c.root, got, err, c.want)
		}
	}
	a := &app{env: Env{Getenv: func(string) string { return "" }}}
	if _, err := a.dataDirPathFor(false); err == nil {
		t.Error("no HOME, no XDG_DATA_HOME, not root: want an error asking for --data-dir")
	}
}

// TestTuneDiskFree: db tune bounds WAL by the free disk, and says so.
func TestTuneDiskFree(t *testing.T) {
	out, stderr, code := run(t, nil, "db", "tune", "--memory", "16GB", "--cpus", "8", "--disk-free", "8GB")
	if code != 0 || !strings.Contains(out, "max_wal_size                       = 1GB") || !strings.Contains(out, "free disk") {
		t.Fatalf("exit %d, output:\n%s%s", code, out, stderr)
	}
}
