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
// small, fixed environment.
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
	err := cmd.Run()
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

// ensureReachable makes every ancestor of dir searchable by the run user
// (adding only the "others may traverse" bit where it is missing), because
// the server must reach its data directory. It returns the directories it
// changed so the caller can tell the user.
func (u runUser) ensureReachable(dir string) ([]string, error) {
	if !u.switched {
		return nil, nil
	}
	var changed []string
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
		if err != nil {
			return changed, fmt.Errorf("checking %q: %w", d, err)
		}
		if u.canSearch(st) {
			continue
		}
		if err := os.Chmod(d, st.Mode().Perm()|0o001); err != nil {
			return changed, fmt.Errorf("the server's user %q cannot reach %q and it could not be allowed to: %w", u.name, d, err)
		}
		changed = append(changed, d)
	}
	return changed, nil
}
