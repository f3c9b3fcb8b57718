package render

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// The requests below are the ones Grafana's Graphite data source sends,
// read in grafana/grafana:
//
//   - public/app/plugins/datasource/graphite/datasource.ts, query() and
//     buildGraphiteParams(): POST /render, Content-Type
//     application/x-www-form-urlencoded, body target=<each target wrapped
//     as aliasSub(<target>, "(^.*$)", "\1 <refId>")>&from=-6h&until=now&
//     format=json&maxDataPoints=<n> (translateTime turns "now-6h" into
//     "-6h", 'm' into "min", and absolute times into unix seconds).
//   - same file, testDatasource(): the health check renders
//     constantLine(100) the same way over now-1h..now, maxDataPoints=300.
//   - same file, requestMetricFind(): POST /metrics/find with body
//     query=<glob> and from/until as URL parameters; it reads text and
//     expandable of each node.
//   - same file, requestMetricExpand(): GET /metrics/expand?query=..&from=..
//     &until=..; it reads results.
//   - same file, getVersion() and getFuncDefs(): GET /version (must parse
//     as a semantic version) and GET /functions (read as text, then
//     JSON.parse after replacing "default": Infinity).
//   - pkg/tsdb/graphite/query.go, createGraphiteRequest(): the backend
//     mode posts the same form with from/until as unix seconds and one
//     target per request.
func TestGrafanaRequests(t *testing.T) {
	h := testHandler(t, testSource())
	post := func(path, rawQuery, body string) (int, string, string) {
		t.Helper()
		target := path
		if rawQuery != "" {
			target += "?" + rawQuery
		}
		req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Accept", "application/json, text/plain, */*")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Header().Get("Content-Type"), rec.Body.String()
	}
	type series struct {
		Target     string            `json:"target"`
		Tags       map[string]string `json:"tags"`
		Datapoints [][2]*float64     `json:"datapoints"`
	}
	decode := func(body string) []series {
		t.Helper()
		var out []series
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatalf("decoding %s: %v", body, err)
		}
		return out
	}

	// Panel query, frontend mode: two targets, relative range.
	body := "target=" + url.QueryEscape(`aliasSub(sumSeries(servers.web*.cpu), "(^.*$)", "\1 A")`) +
		"&target=" + url.QueryEscape(`aliasSub(aliasByNode(servers.*.cpu, 1), "(^.*$)", "\1 B")`) +
		"&from=-10min&until=now&format=json&maxDataPoints=1416"
	code, ctype, resp := post("/render", "", body)
	if code != http.StatusOK || ctype != "application/json" {
		t.Fatalf("render: %d %s %s", code, ctype, resp)
	}
	got := decode(resp)
	var names []string
	for _, s := range got {
		names = append(names, s.Target)
	}
	if want := "sumSeries(servers.web*.cpu) A,db1 B,empty B,web1 B,web2 B"; strings.Join(names, ",") != want {
		t.Errorf("targets = %v, want %s", names, want)
	}
	if n := len(got[0].Datapoints); n != 10 || *got[0].Datapoints[0][0] != 121 || *got[0].Datapoints[0][1] != t0 {
		t.Errorf("first series points: %d, first %v", n, got[0].Datapoints[0])
	}

	// Health check.
	code, _, resp = post("/render", "", "target="+url.QueryEscape(`aliasSub(constantLine(100), "(^.*$)", "\1 A")`)+
		"&from=-1h&until=now&format=json&maxDataPoints=300")
	if code != http.StatusOK || !strings.Contains(resp, `"target": "100.0 A"`) {
		t.Errorf("health check: %d %s", code, resp)
	}

	// Backend mode: unix seconds, maxDataPoints smaller than the points.
	code, _, resp = post("/render", "", url.Values{
		"target": {"servers.web1.cpu"}, "from": {"1699999979"}, "until": {"1700000579"},
		"format": {"json"}, "maxDataPoints": {"5"},
	}.Encode())
	if code != http.StatusOK {
		t.Fatalf("backend render: %d %s", code, resp)
	}
	if got := decode(resp); len(got) != 1 || len(got[0].Datapoints) != 5 {
		t.Errorf("backend render consolidated to %v", got)
	}

	// Metric browser.
	code, _, resp = post("/metrics/find", "from=-6h&until=now", "query=servers.*")
	if code != http.StatusOK {
		t.Fatalf("find: %d %s", code, resp)
	}
	var nodes []struct {
		Text       string `json:"text"`
		Expandable int    `json:"expandable"`
	}
	if err := json.Unmarshal([]byte(resp), &nodes); err != nil || len(nodes) != 4 || nodes[0].Text != "db1" || nodes[0].Expandable != 1 {
		t.Errorf("find: %v %s", err, resp)
	}

	// Template variable with expand().
	code, resp = get(t, h, "/metrics/expand", url.Values{"query": {"servers.*.cpu"}, "from": {"-6h"}, "until": {"now"}})
	var expanded struct{ Results []string }
	if err := json.Unmarshal([]byte(resp), &expanded); code != http.StatusOK || err != nil || len(expanded.Results) != 4 {
		t.Errorf("expand: %d %v %s", code, err, resp)
	}

	// Version and function index.
	code, resp = get(t, h, "/version", nil)
	if code != http.StatusOK || !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(resp) {
		t.Errorf("version: %d %q", code, resp)
	}
	code, resp = get(t, h, "/functions", nil)
	fixed := regexp.MustCompile(`"default": ?Infinity`).ReplaceAllString(resp, `"default": 1e9999`)
	var defs map[string]struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Group       string `json:"group"`
		Params      []struct {
			Name     string `json:"name"`
			Type     string `json:"type"`
			Required bool   `json:"required"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(fixed), &defs); code != http.StatusOK || err != nil {
		t.Fatalf("functions: %d %v", code, err)
	}
	for _, name := range Functions() {
		d, ok := defs[name]
		if !ok || d.Name != name || d.Group == "" || d.Description == "" {
			t.Errorf("functions: %s missing or incomplete: %+v", name, d)
		}
	}
	if p := defs["scale"].Params; len(p) != 2 || p[1].Name != "factor" || p[1].Type != "float" || !p[1].Required {
		t.Errorf("scale params = %+v", p)
	}
}
