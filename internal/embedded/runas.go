package embedded

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// runUser is the OS account the server runs as.
type runUser struct {
	name     string
	uid, gid uint32
	groups   []uint32
	switched bool // true when pgts runs as root and the server as another user
}

// currentRunUser returns the caller itself, or the "postgres" account when
// the caller is root.
func currentRunUser() (runUser, error) {
	if os.Geteuid() != 0 {
		u, _ := user.Current()
		name := strconv.Itoa(os.Geteuid())
		if u != nil {
			name = u.Username
		}
		return runUser{name: name, uid: uint32(os.Geteuid()), gid: uint32(os.Getegid())}, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return runUser{}, fmt.Errorf("running as root, but PostgreSQL refuses to run as root and there is no %q user to run it as: "+
			"install Debian's postgresql package (it creates one) or run pgts as a normal user", "postgres")
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	ru := runUser{name: u.Username, uid: uint32(uid), gid: uint32(gid), switched: true}
	if gids, err := u.GroupIds(); err == nil {
		for _, g := range gids {
			if n, err := strconv.ParseUint(g, 10, 32); err == nil {
				ru.groups = append(ru.groups, uint32(n))
			}
		}
	}
	return ru, nil
}

// command builds a command that runs as the run user, from "/" (the
// caller's working directory may be unreadable for that user), with a
// small, fixed environment. Start it with startWithStdioOnly (run does).
func (u runUser) command(ctx context.Context, prog string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "LANG=C"}
	if u.switched {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: u.uid, Gid: u.gid, Groups: u.groups}}
	}
	return cmd
}

// run executes a command and returns its combined output in the error.
func (u runUser) run(ctx context.Context, prog string, args ...string) (string, error) {
	cmd := u.command(ctx, prog, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := startWithStdioOnly(cmd.Start)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %w: %s", filepath.Base(prog), strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}

// own gives path to the run user (when pgts runs as root).
func (u runUser) own(path string) error {
	if !u.switched {
		return nil
	}
	if err := os.Chown(path, int(u.uid), int(u.gid)); err != nil {
		return fmt.Errorf("giving %q to user %q: %w", path, u.name, err)
	}
	return nil
}

// canSearch reports whether the run user may traverse dir.
func (u runUser) canSearch(st os.FileInfo) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	mode := st.Mode().Perm()
	if sys.Uid == u.uid {
		return mode&0o100 != 0
	}
	if sys.Gid == u.gid {
		return mode&0o010 != 0
	}
	for _, g := range u.groups {
		if sys.Gid == g {
			return mode&0o010 != 0
		}
	}
	return mode&0o001 != 0
}

// checkReachable checks that the run user may traverse every existing
// ancestor of dir. It never changes a directory it did not create: when
// one is closed to the server's user (a 0700 home directory, as /root),
// the error names it and says how to fix it.
func (u runUser) checkReachable(dir string) error {
	if !u.switched {
		return nil
	}
	var ancestors []string
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		ancestors = append(ancestors, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	for i := len(ancestors) - 1; i >= 0; i-- {
		d := ancestors[i]
		st, err := os.Stat(d)
		if os.IsNotExist(err) {
			return nil // pgts creates the rest, passable
		}
		if err != nil {
			return fmt.Errorf("checking %q: %w", d, err)
		}
		if !st.IsDir() {
			return nil // creating the data dir fails, and says so
		}
		if !u.canSearch(st) {
			return fmt.Errorf("the server runs as user %q (PostgreSQL refuses to run as root), which cannot enter %q (mode %04o): "+
				"choose a data directory it can reach (--data-dir or PGTS_DATA_DIR, e.g. /var/lib/pgts), or let it pass with: chmod o+x %s",
				u.name, d, st.Mode().Perm(), d)
		}
	}
	return nil
}

// mkdirReachable creates dir (mode 0700) and its missing ancestors, which
// it makes passable by the run user (0755): they are pgts' own.
func mkdirReachable(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		mode := os.FileMode(0o755)
		if i == 0 {
			mode = 0o700
		}
		if err := os.Mkdir(missing[i], mode); err != nil && !os.IsExist(err) {
			return err
		}
		if err := os.Chmod(missing[i], mode); err != nil { // beat the umask
			return err
		}
	}
	return nil
}
