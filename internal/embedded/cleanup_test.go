package embedded

import (
	"context"
	"os"
	"testing"
)

// TestStopAndDestroyLeaveNothingInTmp: the socket directory and the lock
// file under /tmp go away on stop and on destroy.
func TestStopAndDestroyLeaveNothingInTmp(t *testing.T) {
	ctx := context.Background()
	c := newTestCluster(t, Config{AnyPort: true})
	gone := func(when string) {
		t.Helper()
		for _, p := range []string{c.SocketDir(), c.SocketDir() + ".lock"} {
			if _, err := os.Lstat(p); !os.IsNotExist(err) {
				t.Errorf("after %s, %s remains (%v)", when, p, err)
			}
		}
	}
	if _, err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stop(ctx, Fast); err != nil {
		t.Fatal(err)
	}
	gone("stop")
	if _, err := c.Stop(ctx, Fast); err != nil {
		t.Fatal(err)
	}
	gone("a second stop")
	if _, err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Destroy(ctx); err != nil {
		t.Fatal(err)
	}
	gone("destroy")
}

// TestStatusBeforeCreation names the version that would be used.
func TestStatusBeforeCreation(t *testing.T) {
	c := newTestCluster(t, Config{AnyPort: true})
	st, err := c.Status()
	if err != nil || st.Initialised || st.Info.Version == "" || st.Info.DataDir != c.DataDir() {
		t.Fatalf("status = %+v, %v", st, err)
	}
}
