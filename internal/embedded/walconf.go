package embedded

import (
	"os"
	"path/filepath"
	"strings"
)

// WALLevel returns the wal_level the cluster's configuration files set:
// postgresql.conf with its includes (pgts.conf, where the bulk-load
// profile MinimalWAL is written at creation), then postgresql.auto.conf
// (ALTER SYSTEM), the last setting winning as in PostgreSQL; "replica",
// PostgreSQL's default, when none sets it. It reads the files, so a
// change not yet applied by a restart shows.
func (c *Cluster) WALLevel() string {
	level := "replica"
	for _, name := range []string{"postgresql.conf", "postgresql.auto.conf"} {
		if v, ok := confSetting(filepath.Join(c.cfg.DataDir, name), "wal_level", 0); ok {
			level = v
		}
	}
	return level
}

// confSetting returns the last value of setting key in the configuration
// file path and the files it includes (up to a few levels deep).
func confSetting(path, key string, depth int) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil || depth > 4 {
		return "", false
	}
	var val string
	var found bool
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		name, v, ok := strings.Cut(line, "=")
		if !ok {
			// "name value" is valid too
			f := strings.Fields(line)
			if len(f) != 2 {
				continue
			}
			name, v = f[0], f[1]
		}
		name = strings.ToLower(strings.TrimSpace(name))
		v = strings.Trim(strings.TrimSpace(v), "'")
		switch name {
		case key:
			val, found = strings.ToLower(v), true
		case "include", "include_if_exists":
			inc := v
			if !filepath.IsAbs(inc) {
				inc = filepath.Join(filepath.Dir(path), inc)
			}
			if iv, ok := confSetting(inc, key, depth+1); ok {
				val, found = iv, true
			}
		}
	}
	return val, found
}
