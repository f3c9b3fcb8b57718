// Package embedded runs pgts' private PostgreSQL cluster: it finds the
// server binaries, initialises a data directory, tunes it for the machine,
// and starts, reuses, stops and destroys the server.
//
// Glossary:
//
//	data dir    the cluster's directory (PGDATA), chosen by the caller
//	bin dir     the directory holding initdb, pg_ctl and postgres
//	socket dir  a short directory under /tmp holding the Unix socket, named
//	            from a hash of the data dir so that every pgts process finds
//	            the same one
//	run user    the OS user the server runs as: the caller, or "postgres"
//	            when the caller is root (PostgreSQL refuses to run as root)
//
// Files pgts adds to a data dir:
//
//	pgts.conf          tuned settings, written once; edit freely
//	pgts-runtime.conf  port, socket and listen address, rewritten at start
//	pgts.log           the server log
//
// Nothing here reads flags or the environment: callers pass a Config.
package embedded

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ErrNoBinaries is returned when no PostgreSQL server binaries are found.
var ErrNoBinaries = errors.New("no PostgreSQL server binaries found (initdb, pg_ctl, postgres); " +
	"install them with `apt-get install postgresql` (Debian/Ubuntu), or pass --pg-bindir")

// Binaries is a PostgreSQL installation.
type Binaries struct {
	Dir     string // directory holding initdb, pg_ctl, postgres, psql
	Version string // full version, e.g. "15.18"
	Major   int    // major version, e.g. 15
}

// Path returns the path of the named program in the bin dir.
func (b Binaries) Path(prog string) string { return filepath.Join(b.Dir, prog) }

// Psql returns the path of psql: the bin dir's own, or the one on PATH.
func (b Binaries) Psql() string {
	if p := b.Path("psql"); isExecutable(p) {
		return p
	}
	if p, err := exec.LookPath("psql"); err == nil {
		return p
	}
	return b.Path("psql")
}

// Finder locates binaries. Its fields are injected so tests (and callers)
// control every place searched.
type Finder struct {
	Override   string                       // --pg-bindir: used alone when set
	PgConfig   func() (string, error)       // returns `pg_config --bindir`; nil skips
	GlobRoots  []string                     // e.g. /usr/lib/postgresql: <root>/<major>/bin, newest first
	LookPath   func(string) (string, error) // PATH search; nil skips
	MinVersion int                          // oldest major accepted
}

// DefaultFinder searches --pg-bindir, then pg_config, then the newest
// /usr/lib/postgresql/*/bin, then PATH.
func DefaultFinder(override string) Finder {
	return Finder{
		Override: override,
		PgConfig: func() (string, error) {
			out, err := exec.Command("pg_config", "--bindir").Output()
			return strings.TrimSpace(string(out)), err
		},
		GlobRoots:  []string{"/usr/lib/postgresql"},
		LookPath:   exec.LookPath,
		MinVersion: 13,
	}
}

// Find returns the first complete installation in precedence order.
func (f Finder) Find() (Binaries, error) {
	if f.Override != "" {
		b, err := probe(f.Override)
		if err != nil {
			return Binaries{}, fmt.Errorf("--pg-bindir %q: %w", f.Override, err)
		}
		return f.checkVersion(b)
	}
	var candidates []string
	if f.PgConfig != nil {
		if dir, err := f.PgConfig(); err == nil && dir != "" {
			candidates = append(candidates, dir)
		}
	}
	for _, root := range f.GlobRoots {
		candidates = append(candidates, newestFirst(root)...)
	}
	if f.LookPath != nil {
		if p, err := f.LookPath("pg_ctl"); err == nil {
			candidates = append(candidates, filepath.Dir(p))
		}
	}
	var lastErr error
	for _, dir := range candidates {
		b, err := probe(dir)
		if err != nil {
			lastErr = err
			continue
		}
		return f.checkVersion(b)
	}
	if lastErr != nil {
		return Binaries{}, fmt.Errorf("%w (last candidate: %v)", ErrNoBinaries, lastErr)
	}
	return Binaries{}, ErrNoBinaries
}

func (f Finder) checkVersion(b Binaries) (Binaries, error) {
	if f.MinVersion > 0 && b.Major < f.MinVersion {
		return Binaries{}, fmt.Errorf("PostgreSQL %s in %q is too old: pgts needs %d or newer", b.Version, b.Dir, f.MinVersion)
	}
	return b, nil
}

// newestFirst lists <root>/<major>/bin directories, highest major first.
func newestFirst(root string) []string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	type cand struct {
		major int
		dir   string
	}
	var cs []cand
	for _, e := range entries {
		m, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cs = append(cs, cand{m, filepath.Join(root, e.Name(), "bin")})
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].major > cs[j].major })
	dirs := make([]string, len(cs))
	for i, c := range cs {
		dirs[i] = c.dir
	}
	return dirs
}

// probe checks that dir holds the server programs and reads their version.
func probe(dir string) (Binaries, error) {
	for _, prog := range []string{"initdb", "pg_ctl", "postgres"} {
		if !isExecutable(filepath.Join(dir, prog)) {
			return Binaries{}, fmt.Errorf("%s not found in %q", prog, dir)
		}
	}
	out, err := exec.Command(filepath.Join(dir, "postgres"), "--version").Output()
	if err != nil {
		return Binaries{}, fmt.Errorf("running %q --version: %w", filepath.Join(dir, "postgres"), err)
	}
	version, major, err := parseVersion(string(out))
	if err != nil {
		return Binaries{}, err
	}
	return Binaries{Dir: dir, Version: version, Major: major}, nil
}

// parseVersion reads "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)".
func parseVersion(s string) (string, int, error) {
	fields := strings.Fields(s)
	for i, f := range fields {
		if f == "(PostgreSQL)" && i+1 < len(fields) {
			v := fields[i+1]
			majorText, _, _ := strings.Cut(v, ".")
			major, err := strconv.Atoi(strings.TrimRightFunc(majorText, func(r rune) bool { return r < '0' || r > '9' }))
			if err != nil {
				break
			}
			return v, major, nil
		}
	}
	return "", 0, fmt.Errorf("unrecognised version output %q", strings.TrimSpace(s))
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}
