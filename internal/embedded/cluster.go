package embedded

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultPort is the port tried first; a free one is chosen when it is taken.
const DefaultPort = 54320

// SuperUser is the superuser role the cluster is initialised with.
const SuperUser = "postgres"

// Config describes a private cluster. DataDir and Binaries are required.
type Config struct {
	DataDir  string   // absolute path of the data directory
	Binaries Binaries // the installation to run
	// Port is tried first (0 means DefaultPort); when it is busy, a free
	// port is chosen. AnyPort skips straight to a free port.
	Port    int
	AnyPort bool
	// Settings are written to pgts.conf when the cluster is initialised.
	Settings []Setting
	// StartTimeout bounds the wait for the server to accept connections.
	StartTimeout time.Duration
	Logger       *slog.Logger
}

// Validate checks the config.
func (c Config) Validate() error {
	if c.DataDir == "" || !filepath.IsAbs(c.DataDir) {
		return fmt.Errorf("data directory %q must be an absolute path", c.DataDir)
	}
	if c.Binaries.Dir == "" {
		return errors.New("no PostgreSQL binaries given")
	}
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("port %d out of range", c.Port)
	}
	return nil
}

// Cluster controls one data directory. Its methods are safe to call from
// several processes at once: they serialise on a lock file.
type Cluster struct {
	cfg  Config
	user runUser
	log  *slog.Logger
}

// New prepares a Cluster; nothing is started.
func New(cfg Config) (*Cluster, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 60 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	u, err := currentRunUser()
	if err != nil {
		return nil, err
	}
	return &Cluster{cfg: cfg, user: u, log: cfg.Logger}, nil
}

// DataDir returns the data directory.
func (c *Cluster) DataDir() string { return c.cfg.DataDir }

// SocketDir is the directory of the Unix socket: short (socket paths are
// limited to 107 bytes) and derived from the data dir so every pgts process
// finds the same one.
func (c *Cluster) SocketDir() string {
	sum := sha256.Sum256([]byte(c.cfg.DataDir))
	return "/tmp/pgts-" + hex.EncodeToString(sum[:5])
}

// Info describes a running cluster.
type Info struct {
	DataDir   string
	SocketDir string
	Port      int
	PID       int
	Version   string
	StartedAt time.Time
	Reused    bool // it was already running
}

// ConnString returns a URL for database db over the Unix socket, which
// psql and pgx both accept. It holds no password: local connections are
// trusted, and the socket directory is private to the server's user.
func (i Info) ConnString(db string) string {
	q := url.Values{"host": {i.SocketDir}, "port": {strconv.Itoa(i.Port)}}
	return "postgresql://" + SuperUser + "@/" + url.PathEscape(db) + "?" + q.Encode()
}

// TCPConnString returns a URL over loopback TCP, password included.
func (c *Cluster) TCPConnString(i Info, db string) (string, error) {
	pw, err := os.ReadFile(filepath.Join(c.cfg.DataDir, "pgts-password"))
	if err != nil {
		return "", fmt.Errorf("reading the cluster's password: %w", err)
	}
	u := url.URL{Scheme: "postgresql", User: url.UserPassword(SuperUser, strings.TrimSpace(string(pw))),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(i.Port)), Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String(), nil
}

// lock serialises Start, Stop and Destroy across processes. Stop and
// Destroy delete the lock file while they hold it, so a lock taken on a
// file that has meanwhile been unlinked (or replaced) is dropped and taken
// again on the file now at the path.
func (c *Cluster) lock() (func(), error) {
	path := c.lockPath()
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return nil, fmt.Errorf("opening lock file %q: %w", path, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %q: %w", path, err)
		}
		held, err1 := f.Stat()
		now, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(held, now) {
			return func() { f.Close() }, nil
		}
		f.Close()
	}
}

func (c *Cluster) lockPath() string { return c.SocketDir() + ".lock" }

// removeRuntimeFiles deletes the socket directory and the lock file under
// /tmp once no server runs. The caller holds the lock.
func (c *Cluster) removeRuntimeFiles() error {
	if err := os.RemoveAll(c.SocketDir()); err != nil {
		return fmt.Errorf("removing the socket directory: %w", err)
	}
	if err := os.Remove(c.lockPath()); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("removing the lock file: %w", err)
	}
	return nil
}

// Start initialises the data dir when it is new, and starts the server
// unless it is already running, in which case it is reused.
func (c *Cluster) Start(ctx context.Context) (Info, error) {
	unlock, err := c.lock()
	if err != nil {
		return Info{}, err
	}
	defer unlock()

	if err := c.ensureInitialised(ctx); err != nil {
		return Info{}, err
	}
	if info, ok, err := c.running(); err != nil {
		return Info{}, err
	} else if ok {
		info.Reused = true
		if err := c.waitReady(ctx, &info); err != nil {
			return Info{}, err
		}
		return info, nil
	}
	crashed, err := c.clearDeadServer(ctx)
	if err != nil {
		return Info{}, err
	}
	sock := c.SocketDir()
	if err := os.MkdirAll(sock, 0o700); err != nil {
		return Info{}, fmt.Errorf("creating socket directory %q: %w", sock, err)
	}
	if err := c.user.own(sock); err != nil {
		return Info{}, err
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port := c.choosePort(attempt > 0)
		if err := c.writeRuntimeConf(port, sock); err != nil {
			return Info{}, err
		}
		if err := c.clearStaleSocketLocks(); err != nil {
			return Info{}, err
		}
		stopWatch := func() {}
		if crashed {
			stopWatch = c.watchRecovery(c.logSize())
		}
		err := c.pgctlStart(ctx)
		stopWatch()
		if err == nil {
			info, ok, err := c.running()
			if err != nil {
				return Info{}, err
			}
			if !ok {
				return Info{}, fmt.Errorf("the server started but exited at once; see %s", c.logPath())
			}
			return info, nil
		}
		lastErr = err
		logTail := c.logTail(4000)
		switch {
		case strings.Contains(logTail, "could not bind") || strings.Contains(logTail, "already in use"):
			c.log.Info("port busy, choosing another", "port", port)
			continue
		case strings.Contains(logTail, "pre-existing shared memory block"):
			// Backends of a killed postmaster still hold the old shared
			// memory; they exit once they notice their parent is gone.
			c.log.Info("waiting for the processes of a killed server to exit")
			if err := waitDelay(ctx, time.Duration(attempt+1)*500*time.Millisecond); err != nil {
				return Info{}, err
			}
			continue
		}
		return Info{}, fmt.Errorf("starting PostgreSQL in %q: %w\nlast lines of %s:\n%s", c.cfg.DataDir, err, c.logPath(), lastLines(logTail, 8))
	}
	return Info{}, fmt.Errorf("starting PostgreSQL in %q: %w\nlast lines of %s:\n%s", c.cfg.DataDir, lastErr, c.logPath(), lastLines(c.logTail(4000), 8))
}

func waitDelay(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (c *Cluster) pgctlStart(ctx context.Context) error {
	_, err := c.user.run(ctx, c.cfg.Binaries.Path("pg_ctl"), "start", "-D", c.cfg.DataDir, "-l", c.logPath(),
		"-w", "-t", strconv.Itoa(int(c.cfg.StartTimeout/time.Second)), "-s")
	return err
}

func (c *Cluster) logPath() string { return filepath.Join(c.cfg.DataDir, "pgts.log") }

// logTail returns up to n bytes from the end of the server log.
func (c *Cluster) logTail(n int64) string {
	f, err := os.Open(c.logPath())
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := st.Size() - n
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	_, _ = f.ReadAt(buf, off)
	return string(buf)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}

// choosePort returns the preferred port when it is free, else a free one.
func (c *Cluster) choosePort(forceFree bool) int {
	want := c.cfg.Port
	prev, hasPrev := c.previousPort()
	if want == 0 {
		want = DefaultPort
		if hasPrev {
			want = prev
		}
	}
	if c.cfg.AnyPort {
		want = prev
	}
	if !forceFree && (hasPrev || !c.cfg.AnyPort) && portFree(want) {
		return want
	}
	for i := 0; i < 20; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			break
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if portFree(p) {
			return p
		}
	}
	return want
}

// portFree reports whether a TCP port on loopback is free. The socket dir
// is private to this data dir, so a socket file left there by a killed
// server of ours is no conflict (the server replaces it).
func portFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// previousPort reads the port of the last start, so a restart keeps it.
func (c *Cluster) previousPort() (int, bool) {
	b, err := os.ReadFile(filepath.Join(c.cfg.DataDir, "pgts-runtime.conf"))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "port = "); ok {
			if p, err := strconv.Atoi(v); err == nil {
				return p, true
			}
		}
	}
	return 0, false
}

func (c *Cluster) writeRuntimeConf(port int, sock string) error {
	content := fmt.Sprintf("# Written by pgts at every start; changes here are overwritten.\n"+
		"port = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nunix_socket_permissions = 0700\n", port, sock)
	return c.writeOwned(filepath.Join(c.cfg.DataDir, "pgts-runtime.conf"), content)
}

func (c *Cluster) writeOwned(path, content string) error {
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return fmt.Errorf("writing %q: %w", path, err)
	}
	return c.user.own(path)
}

// ensureInitialised runs initdb for a new data dir and checks an existing
// one belongs to these binaries' major version.
func (c *Cluster) ensureInitialised(ctx context.Context) error {
	dir := c.cfg.DataDir
	versionFile, err := os.ReadFile(filepath.Join(dir, "PG_VERSION"))
	if err == nil {
		major, err := strconv.Atoi(strings.TrimSpace(string(versionFile)))
		if err != nil {
			return fmt.Errorf("data directory %q has an unreadable PG_VERSION %q", dir, strings.TrimSpace(string(versionFile)))
		}
		if major != c.cfg.Binaries.Major {
			return fmt.Errorf("data directory %q was created by PostgreSQL %d, but the binaries in %q are PostgreSQL %s: "+
				"pass --pg-bindir with PostgreSQL %d binaries, or use another --data-dir", dir, major, c.cfg.Binaries.Dir, c.cfg.Binaries.Version, major)
		}
		return c.user.checkReachable(dir)
	}
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("reading %q: %w", filepath.Join(dir, "PG_VERSION"), err)
	}
	if err := c.user.checkReachable(dir); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		if err := mkdirReachable(dir); err != nil {
			return fmt.Errorf("cannot create data directory %q: %w (choose another with --data-dir or PGTS_DATA_DIR)", dir, err)
		}
	case err != nil:
		return fmt.Errorf("cannot read data directory %q: %w", dir, err)
	case len(entries) > 0:
		return fmt.Errorf("%q is not empty and is not a PostgreSQL data directory (no PG_VERSION): choose another --data-dir", dir)
	}
	if err := syscall.Access(dir, 2 /* W_OK */); err != nil {
		return fmt.Errorf("data directory %q is not writable: %w (choose another with --data-dir or PGTS_DATA_DIR)", dir, err)
	}
	if err := c.user.own(dir); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("setting permissions of %q: %w", dir, err)
	}
	// initdb wants an empty directory: the password file waits in the
	// private socket directory until initdb has run.
	sock := c.SocketDir()
	if err := os.MkdirAll(sock, 0o700); err != nil {
		return fmt.Errorf("creating socket directory %q: %w", sock, err)
	}
	if err := c.user.own(sock); err != nil {
		return err
	}
	password := randomPassword()
	pwFile := filepath.Join(sock, "pgts-password")
	if err := c.writeOwned(pwFile, password+"\n"); err != nil {
		return err
	}
	defer os.Remove(pwFile)
	c.log.Info("creating a new PostgreSQL cluster (settings for this machine in its pgts.conf)", "data_dir", dir, "version", c.cfg.Binaries.Version, "user", c.user.name)
	if _, err := c.user.run(ctx, c.cfg.Binaries.Path("initdb"), "-D", dir, "-U", SuperUser, "--pwfile", pwFile,
		"--auth-local=trust", "--auth-host=scram-sha-256", "--encoding=UTF8", "--locale=C", "--no-instructions"); err != nil {
		return fmt.Errorf("initialising %q: %w", dir, err)
	}
	if err := c.writeOwned(filepath.Join(dir, "pgts-password"), password+"\n"); err != nil {
		return err
	}
	var conf strings.Builder
	if err := WriteConf(&conf, "Settings chosen by pgts for this machine (pgts db tune explains them).\nEdit freely: pgts writes this file only when it creates the cluster.", c.cfg.Settings); err != nil {
		return err
	}
	if err := c.writeOwned(filepath.Join(dir, "pgts.conf"), conf.String()); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("opening postgresql.conf: %w", err)
	}
	_, err = f.WriteString("\n# pgts: tuned settings, then port and socket (rewritten at each start)\n" +
		"include_if_exists = 'pgts.conf'\ninclude_if_exists = 'pgts-runtime.conf'\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing postgresql.conf: %w", err)
	}
	return nil
}

func randomPassword() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// BinDir returns the directory of the server binaries in use.
func (c *Cluster) BinDir() string { return c.cfg.Binaries.Dir }
