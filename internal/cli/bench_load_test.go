package cli

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBenchLoadTimescaleChunkFlag checks --timescaledb-chunk's
// validation; each refusal is a usage error before any database work.
func TestBenchLoadTimescaleChunkFlag(t *testing.T) {
	env := map[string]string{"DATABASE_URL": "postgres://127.0.0.1:1/none"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--stores", "plain", "--timescaledb-chunk", "1h"}, "without the timescaledb store"},
		{[]string{"--stores", "timescaledb", "--timescaledb-chunk", "30s"}, "whole number of minutes"},
		{[]string{"--stores", "timescaledb", "--timescaledb-chunk", "soon"}, `--timescaledb-chunk "soon"`},
		{[]string{"--stores", "timescaledb", "--timescaledb-chunk", "0d"}, `--timescaledb-chunk "0d"`},
		{[]string{"--stores", "timescaledb", "--timescaledb-chunk", "1h,60m"}, "given twice"},
	} {
		_, stderr, code := run(t, env, append([]string{"bench", "load", "--out", t.TempDir()}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 with %q", c.args, code, stderr, c.want)
		}
	}
	got, err := parseChunks("default,1h,7d,90m")
	if want := []time.Duration{0, time.Hour, 7 * 24 * time.Hour, 90 * time.Minute}; err != nil || !slices.Equal(got, want) {
		t.Errorf("parseChunks: %v, %v; want %v", got, err, want)
	}
}
