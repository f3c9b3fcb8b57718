package render

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// tieredSource is a two-archive store as whisper keeps one: 10 s values
// for the last fineRetention seconds, 60 s values for longer, the archive
// chosen by now - from as whisper does (the first whose retention covers
// it). Fetch judges by clock, FetchAt by the now it is given.
type tieredSource struct {
	fine, coarse  *MemSource
	fineRetention int64
	clock         int64
}

func (s *tieredSource) Find(ctx context.Context, pattern string) ([]Node, error) {
	return s.fine.Find(ctx, pattern)
}

func (s *tieredSource) Fetch(ctx context.Context, names []string, from, until int64, mdp int) ([]Series, error) {
	return s.FetchAt(ctx, names, from, until, s.clock, mdp)
}

func (s *tieredSource) FetchAt(ctx context.Context, names []string, from, until, now int64, mdp int) ([]Series, error) {
	if now-from <= s.fineRetention {
		return s.fine.Fetch(ctx, names, from, until, mdp)
	}
	return s.coarse.Fetch(ctx, names, from, until, mdp)
}

// TestFetchAtRequestNow checks that the storage picks its resolution by
// the request's now, as graphite-web's whisper reads do: timeShift's range
// one hour back from a 5 h range ending 1 h ago lies exactly 6 h before
// now=T, inside the 10 s archive's 6 h, so with maxDataPoints=100 the
// shifted series draws 14400 s / 10 s in groups of 15 (150 s points), not
// the 60 s archive's groups of 3 (180 s points).
func TestFetchAtRequestNow(t *testing.T) {
	const T = 1800000000 // a multiple of 3600
	src := &tieredSource{fine: NewMemSource(), coarse: NewMemSource(), fineRetention: 6 * 3600, clock: T + 600}
	fine := make([]float64, 8*360)
	for i := range fine {
		fine[i] = float64(i % 7)
	}
	coarse := make([]float64, 8*60)
	for i := range coarse {
		coarse[i] = float64(i % 5)
	}
	src.fine.Add("m.a", T-8*3600, 10, fine...)
	src.coarse.Add("m.a", T-8*3600, 60, coarse...)
	opts := DefaultOptions()
	opts.Now = func() time.Time { return time.Unix(src.clock, 0) }
	h, err := New(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		target   string
		now      string // the request's now parameter, "" for none
		wantStep int64
	}{
		{"shifted, now given", `timeShift(m.a, "1h")`, strconv.Itoa(T), 150},
		{"shifted, clock later", `timeShift(m.a, "1h")`, "", 180},
		{"plain, now given", `m.a`, strconv.Itoa(T), 150},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := url.Values{"target": {c.target}, "from": {strconv.Itoa(T - 5*3600)}, "until": {strconv.Itoa(T - 3600)},
				"maxDataPoints": {"100"}, "format": {"json"}}
			if c.now != "" {
				q.Set("now", c.now)
			}
			code, body := get(t, h, "/render", q)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			var out []struct {
				Datapoints [][2]*float64 `json:"datapoints"`
			}
			if err := json.Unmarshal([]byte(body), &out); err != nil {
				t.Fatalf("%v: %s", err, body)
			}
			if len(out) != 1 || len(out[0].Datapoints) < 2 {
				t.Fatalf("want one series of several points: %s", body)
			}
			dp := out[0].Datapoints
			if step := int64(*dp[1][1] - *dp[0][1]); step != c.wantStep {
				t.Errorf("step %d, want %d (%d points from %v)", step, c.wantStep, len(dp), *dp[0][1])
			}
		})
	}
}
