package embedded

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnreachableParentNotChanged: as root the server runs as postgres,
// which cannot pass a 0700 directory of root's. pgts must not change that
// directory's permissions (it may be /root), but say what to do; the
// directories it creates itself it makes passable.
func TestUnreachableParentNotChanged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only as root does the server run as another user")
	}
	base, err := os.MkdirTemp("/tmp", "pgts-reach-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	private := filepath.Join(base, "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	c := newTestCluster(t, Config{AnyPort: true, DataDir: filepath.Join(private, "data")})
	_, err = c.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), private) || !strings.Contains(err.Error(), "chmod") {
		t.Errorf("start under a 0700 directory: %v, want an error naming %s and how to fix it", err, private)
	}
	if st, err := os.Stat(private); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("%s is now %v (%v), want 0700 untouched", private, st.Mode().Perm(), err)
	}

	// New directories on the way are pgts' own: it makes them passable.
	c2 := newTestCluster(t, Config{AnyPort: true, DataDir: filepath.Join(base, "new", "deeper", "data")})
	if _, err := c2.Start(context.Background()); err != nil {
		t.Fatalf("start under new directories: %v", err)
	}
}
