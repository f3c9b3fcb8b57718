package cli

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
)

// TestServeRenderLimits: the [render] section's limits reach the render
// API — a request past render.max-points answers 400 naming the limit.
func TestServeRenderLimits(t *testing.T) {
	db := pgtest.DB(t)
	cfgFile := loopbackConfig(t, "[render]\nmax-points = 100\n")
	ad, logs, cancel, done := startServe(t, db, serveFlags{config: cfgFile})
	defer func() {
		cancel()
		<-done
	}()
	get := func(target string) (int, string) {
		q := url.Values{"target": {target}, "from": {"-1h"}, "format": {"json"}}
		resp, err := http.Get("http://" + ad.HTTP + "/render?" + q.Encode())
		if err != nil {
			t.Fatalf("%v\n%s", err, logs.String())
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// 3,600 one-second points: past the limit of 100.
	if code, body := get(`timeFunction("t", 1)`); code != http.StatusBadRequest || !strings.Contains(body, "more than 100 points") {
		t.Errorf("3,600 points under max-points = 100: %d %q, want 400 naming the limit", code, body)
	}
	// 60 one-minute points: within it.
	if code, body := get(`timeFunction("t", 60)`); code != http.StatusOK {
		t.Errorf("60 points under max-points = 100: %d %q, want 200", code, body)
	}
}
