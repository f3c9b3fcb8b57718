package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/render"
	"github.com/pgts/pgts/internal/rra"
	"github.com/pgts/pgts/internal/tsstore"
)

// TestRenderTaggedSeries: series stored with tags, as the Influx and
// remote-write receivers store them (measurement.field or __name__ plus
// sorted tags), are selected through the render API the way Grafana's tag
// mode asks: /tags/autoComplete and seriesByTag.
func TestRenderTaggedSeries(t *testing.T) {
	ctx := context.Background()
	store := tenSecondStore(t)
	now := time.Now().Truncate(10 * time.Second)
	var pts []ingest.Point
	for i := range 6 {
		at := now.Add(time.Duration(i-6) * 10 * time.Second).UnixMicro()
		pts = append(pts,
			ingest.Point{Name: "cpu.usage_idle", Tags: []ingest.Tag{{Key: "dc", Value: "eu"}, {Key: "host", Value: "a"}}, Value: 90, Time: at},
			ingest.Point{Name: "cpu.usage_idle", Tags: []ingest.Tag{{Key: "dc", Value: "us"}, {Key: "host", Value: "b"}}, Value: 70, Time: at},
			ingest.Point{Name: "up", Tags: []ingest.Tag{{Key: "instance", Value: "x:9090"}, {Key: "job", Value: "api"}}, Value: 1, Time: at})
	}
	if err := store.Add(ctx, pts); err != nil {
		t.Fatal(err)
	}
	h, err := render.New(renderSource{store}, render.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	get := func(path string, q url.Values) string {
		resp, err := http.Get(srv.URL + path + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	if got := get("/tags/autoComplete/tags", url.Values{"expr": {"name=cpu.usage_idle"}}); got != `["dc", "host"]` {
		t.Errorf("autoComplete/tags: %s", got)
	}
	if got := get("/tags/autoComplete/values", url.Values{"expr": {"name=up"}, "tag": {"job"}}); got != `["api"]` {
		t.Errorf("autoComplete/values: %s", got)
	}
	if got := get("/tags/findSeries", url.Values{"expr": {"dc=~e"}}); got != `["cpu.usage_idle;dc=eu;host=a"]` {
		t.Errorf("findSeries: %s", got)
	}
	// without expressions, from the store's index of tags and values
	for _, c := range []struct {
		path string
		q    url.Values
		want string
	}{
		{"/tags/autoComplete/tags", url.Values{}, `["dc", "host", "instance", "job", "name"]`},
		{"/tags/autoComplete/tags", url.Values{"tagPrefix": {"h"}}, `["host"]`},
		{"/tags/autoComplete/tags", url.Values{"limit": {"2"}}, `["dc", "host"]`},
		{"/tags/autoComplete/values", url.Values{"tag": {"name"}}, `["cpu.usage_idle", "up"]`},
		{"/tags/autoComplete/values", url.Values{"tag": {"host"}, "valuePrefix": {"b"}}, `["b"]`},
		{"/tags/autoComplete/values", url.Values{"tag": {"dc"}, "limit": {"1"}}, `["eu"]`},
		{"/tags/autoComplete/values", url.Values{"tag": {"nope"}}, `[]`},
		// a regular expression narrowed by its literal prefix
		{"/tags/findSeries", url.Values{"expr": {"host=~b$"}}, `["cpu.usage_idle;dc=us;host=b"]`},
		{"/tags/findSeries", url.Values{"expr": {"name=~cpu[.]"}}, `["cpu.usage_idle;dc=eu;host=a", "cpu.usage_idle;dc=us;host=b"]`},
	} {
		if got := get(c.path, c.q); got != c.want {
			t.Errorf("%s %v: %s, want %s", c.path, c.q, got, c.want)
		}
	}
	body := get("/render", url.Values{"target": {"aliasByTags(seriesByTag('name=cpu.usage_idle','dc=us'),'host')"},
		"from": {"-5min"}, "format": {"json"}})
	if !strings.HasPrefix(body, `[{"target": "b", "tags": {"dc": "us", "host": "b", "name": "cpu.usage_idle"}, "datapoints": [`) || !strings.Contains(body, "[70.0, ") {
		t.Errorf("render: %s", body)
	}
	// a glob does not select tagged series
	if got := get("/render", url.Values{"target": {"cpu.*"}, "from": {"-5min"}, "format": {"json"}}); got != "[]" {
		t.Errorf("glob: %s", got)
	}
}

// tenSecondStore opens a store on a fresh test database whose every series
// keeps one archive of 10-second slots over an hour, flushed only when a
// test asks (or at Close, at the end of the test).
func tenSecondStore(t *testing.T) *tsstore.Store {
	t.Helper()
	ctx := context.Background()
	rule, err := rra.ParseRule(rra.RuleConfig{Regexp: ".", Step: "10s", RRAs: []string{"10s:1h"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := tsstore.DefaultConfig()
	cfg.Rules = []rra.Rule{rule}
	cfg.FlushInterval = time.Hour
	store, err := tsstore.Open(ctx, pgtest.Pool(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(ctx) })
	return store
}
