package serve

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/snappy"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/ingest/remotewrite"
	"github.com/pgts/pgts/internal/ingest/statsd"
)

func TestGraphiteTCP(t *testing.T) {
	ts := startServer(t, nil, nil)
	sendTCP(t, ts.addrs.GraphiteTCP, []byte("servers.web1.cpu 0.5 1700000000\r\ncpu;host=a 2 1700000001\nnot a valid line\nlast.line 3 1700000002"))
	eventually(t, "3 points", func() bool { return ts.sink.len() == 3 })
	want := []ingest.Point{
		{Name: "servers.web1.cpu", Value: 0.5, Time: sec(1700000000)},
		{Name: "cpu", Tags: []ingest.Tag{{Key: "host", Value: "a"}}, Value: 2, Time: sec(1700000001)},
		{Name: "last.line", Value: 3, Time: sec(1700000002)},
	}
	if d := cmp.Diff(want, ts.sink.points()); d != "" {
		t.Errorf("points (-want +got):\n%s", d)
	}
	if got := ts.metric("points_received_total", map[string]string{"protocol": protoGraphiteTCP}); got != 3 {
		t.Errorf("received %v, want 3", got)
	}
	if got := ts.metric("parse_errors_total", map[string]string{"protocol": protoGraphiteTCP, "kind": "syntax"}); got != 1 {
		t.Errorf("syntax errors %v, want 1", got)
	}
}

func TestGraphiteUDP(t *testing.T) {
	ts := startServer(t, nil, nil)
	c := dial(t, "udp", ts.addrs.GraphiteUDP)
	if _, err := c.Write([]byte("a.b 1 1700000000\na.c 2\n")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "2 points", func() bool { return ts.sink.len() == 2 })
	want := []ingest.Point{
		{Name: "a.b", Value: 1, Time: sec(1700000000)},
		{Name: "a.c", Value: 2, Time: testNow.UnixMicro()}, // no timestamp: now
	}
	if d := cmp.Diff(want, ts.sink.points()); d != "" {
		t.Errorf("points (-want +got):\n%s", d)
	}
}

// pickleFrame prefixes a pickle with its 4-byte big-endian length.
func pickleFrame(p []byte) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(len(p)))
}

// testdata/carbon.pickle was made once with Python 3:
//
//	pickle.dumps([('servers.web1.cpu', (1700000000, 0.5)),
//	    ('servers.web1.mem', (1700000010, 1024)),
//	    ('disk.used;host=web1;dc=eu', (1700000020.9, 75.25)),
//	    (u'servers.web2.cpu', ('1700000030', '2.5'))], protocol=2)
func readPickle(t *testing.T) []byte {
	t.Helper()
	p, err := os.ReadFile("testdata/carbon.pickle")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPickle(t *testing.T) {
	ts := startServer(t, nil, nil)
	p := readPickle(t)
	frame := append(pickleFrame(p), p...)
	sendTCP(t, ts.addrs.Pickle, append(frame, frame...)) // two frames on one connection
	eventually(t, "8 points", func() bool { return ts.sink.len() == 8 })
	want := []ingest.Point{
		{Name: "servers.web1.cpu", Value: 0.5, Time: sec(1700000000)},
		{Name: "servers.web1.mem", Value: 1024, Time: sec(1700000010)},
		{Name: "disk.used", Tags: []ingest.Tag{{Key: "dc", Value: "eu"}, {Key: "host", Value: "web1"}}, Value: 75.25, Time: sec(1700000020)},
		{Name: "servers.web2.cpu", Value: 2.5, Time: sec(1700000030)},
	}
	if d := cmp.Diff(append(want, want...), ts.sink.points()); d != "" {
		t.Errorf("points (-want +got):\n%s", d)
	}
}

func TestStatsDUDPFlush(t *testing.T) {
	ts := startServer(t, nil, nil)
	c := dial(t, "udp", ts.addrs.StatsDUDP)
	if _, err := c.Write([]byte("api.hits:1|c\napi.hits:2|c|@0.5\nlatency:10|ms\nlatency:20|ms\ntemp:42|g\ntemp:-2|g\nbad line\n")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "6 metrics", func() bool {
		return ts.metric("points_received_total", map[string]string{"protocol": protoStatsDUDP}) == 6
	})
	if err := ts.FlushStatsD(context.Background()); err != nil {
		t.Fatal(err)
	}
	now := testNow.UnixMicro()
	for name, want := range map[string]float64{
		"stats.counters.api.hits.count": 5, // 1 + 2/0.5
		"stats.counters.api.hits.rate":  0.5,
		"stats.timers.latency.mean":     15,
		"stats.timers.latency.upper":    20,
		"stats.timers.latency.count":    2,
		"stats.gauges.temp":             40,
	} {
		got := ts.sink.byName(name)
		if len(got) != 1 || got[0].Value != want || got[0].Time != now {
			t.Errorf("%s: got %+v, want one point %v at %d", name, got, want, now)
		}
	}
	if got := ts.metric("parse_errors_total", map[string]string{"protocol": protoStatsDUDP}); got != 1 {
		t.Errorf("parse errors %v, want 1", got)
	}
}

func TestStatsDTCP(t *testing.T) {
	ts := startServer(t, nil, nil)
	sendTCP(t, ts.addrs.StatsDTCP, []byte("tcp.hits:3|c\ntcp.users:alice|s\ntcp.users:bob|s\ntcp.users:alice|s\n"))
	eventually(t, "4 metrics", func() bool {
		return ts.metric("points_received_total", map[string]string{"protocol": protoStatsDTCP}) == 4
	})
	if err := ts.FlushStatsD(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := ts.sink.byName("stats.counters.tcp.hits.count"); len(got) != 1 || got[0].Value != 3 {
		t.Errorf("counter: %+v", got)
	}
	if got := ts.sink.byName("stats.sets.tcp.users.count"); len(got) != 1 || got[0].Value != 2 {
		t.Errorf("set: %+v", got)
	}
}

// post sends body to the server's path and returns the status and the
// response body.
func post(t *testing.T, ts *testServer, path string, body []byte, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+ts.addrs.HTTP+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestInflux(t *testing.T) {
	ts := startServer(t, nil, nil)
	code, body := post(t, ts, "/write?precision=s", []byte("cpu,host=a usage=0.5,idle=99i,note=\"x\" 1700000000\nmem free=3 1700000001\n"), nil)
	if code != http.StatusNoContent {
		t.Fatalf("/write: %d %s", code, body)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, "disk used=7 1700000002000\n")
	zw.Close()
	code, body = post(t, ts, "/api/v2/write?precision=ms&bucket=b", gz.Bytes(), map[string]string{"Content-Encoding": "gzip"})
	if code != http.StatusNoContent {
		t.Fatalf("/api/v2/write: %d %s", code, body)
	}
	host := []ingest.Tag{{Key: "host", Value: "a"}}
	want := []ingest.Point{
		{Name: "cpu.usage", Tags: host, Value: 0.5, Time: sec(1700000000)},
		{Name: "cpu.idle", Tags: host, Value: 99, Time: sec(1700000000)},
		{Name: "mem.free", Value: 3, Time: sec(1700000001)},
		{Name: "disk.used", Value: 7, Time: sec(1700000002)},
	}
	if d := cmp.Diff(want, ts.sink.points()); d != "" {
		t.Errorf("points (-want +got):\n%s", d)
	}
	if got := ts.metric("values_ignored_total", map[string]string{"protocol": protoInflux}); got != 1 {
		t.Errorf("ignored %v, want 1 (the string field)", got)
	}

	// A body with a bad line: the good lines are stored, the answer is 400.
	code, body = post(t, ts, "/api/v2/write?precision=s", []byte("ok v=1 1700000003\nbad v=1 notatime\n"), nil)
	if code != http.StatusBadRequest || !strings.Contains(body, "partial write") || !strings.Contains(body, `"code"`) {
		t.Errorf("partial write: %d %s", code, body)
	}
	if got := ts.sink.byName("ok.v"); len(got) != 1 {
		t.Errorf("good line of a partial write not stored: %+v", got)
	}
	code, _ = post(t, ts, "/write?precision=h", []byte("x v=1 1\n"), nil)
	if code != http.StatusBadRequest {
		t.Errorf("precision h: %d, want 400", code)
	}
}

func remoteWriteBody(series []remotewrite.Series) []byte {
	return snappy.Encode(nil, remotewrite.AppendWriteRequest(nil, series))
}

func TestRemoteWrite(t *testing.T) {
	ts := startServer(t, nil, nil)
	body := remoteWriteBody([]remotewrite.Series{
		{Labels: []ingest.Tag{{Key: "__name__", Value: "http_requests_total"}, {Key: "code", Value: "200"}, {Key: "job", Value: "api"}},
			Samples: []remotewrite.Sample{{Value: 10, Time: 1700000000000}, {Value: 12, Time: 1700000015000}}},
		{Labels: []ingest.Tag{{Key: "__name__", Value: "up"}}, Samples: []remotewrite.Sample{{Value: 1, Time: 1700000000500}}},
	})
	code, resp := post(t, ts, "/api/v1/write", body, map[string]string{"Content-Encoding": "snappy",
		"Content-Type": "application/x-protobuf", "X-Prometheus-Remote-Write-Version": "0.1.0"})
	if code != http.StatusNoContent {
		t.Fatalf("remote write: %d %s", code, resp)
	}
	tags := []ingest.Tag{{Key: "code", Value: "200"}, {Key: "job", Value: "api"}}
	want := []ingest.Point{
		{Name: "http_requests_total", Tags: tags, Value: 10, Time: sec(1700000000)},
		{Name: "http_requests_total", Tags: tags, Value: 12, Time: sec(1700000015)},
		{Name: "up", Value: 1, Time: sec(1700000000) + 500_000},
	}
	if d := cmp.Diff(want, ts.sink.points()); d != "" {
		t.Errorf("points (-want +got):\n%s", d)
	}
}

func TestToken(t *testing.T) {
	ts := startServer(t, nil, func(c *Config) { c.HTTP.Token = "s3cret" })
	line := []byte("m v=1 1700000000\n")
	for _, c := range []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"none", nil, http.StatusUnauthorized},
		{"wrong", map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized},
		{"prefix", map[string]string{"Authorization": "Bearer s3cre"}, http.StatusUnauthorized},
		{"bearer", map[string]string{"Authorization": "Bearer s3cret"}, http.StatusNoContent},
		{"influx v2", map[string]string{"Authorization": "Token s3cret"}, http.StatusNoContent},
	} {
		if code, body := post(t, ts, "/write?precision=s", line, c.header); code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, code, body, c.want)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+ts.addrs.HTTP+"/write?precision=s", bytes.NewReader(line))
	req.SetBasicAuth("telegraf", "s3cret")
	if code, body := do(t, req); code != http.StatusNoContent {
		t.Errorf("basic auth: %d %s", code, body)
	}
	// Influx v1 clients (Telegraf's influxdb output, the influx CLI) may
	// send their credentials as the u and p query parameters.
	if code, body := post(t, ts, "/write?precision=s&u=telegraf&p=s3cret", line, nil); code != http.StatusNoContent {
		t.Errorf("influx v1 u/p: %d %s", code, body)
	}
	if code, body := post(t, ts, "/write?precision=s&u=telegraf&p=nope", line, nil); code != http.StatusUnauthorized {
		t.Errorf("influx v1 wrong p: %d %s, want 401", code, body)
	}
	if code, body := post(t, ts, "/api/v1/write?p=s3cret", remoteWriteBody(nil), map[string]string{"Content-Encoding": "snappy"}); code != http.StatusUnauthorized {
		t.Errorf("p on remote write: %d %s, want 401 (query credentials are Influx v1's only)", code, body)
	}
	if got := ts.sink.len(); got != 4 {
		t.Errorf("%d points stored, want 4 (one per authorised request)", got)
	}
	get := func(path string, header map[string]string) int {
		req, _ := http.NewRequest(http.MethodGet, "http://"+ts.addrs.HTTP+path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		code, _ := do(t, req)
		return code
	}
	if code := get("/healthz", nil); code != http.StatusOK {
		t.Errorf("/healthz without token: %d, want 200", code)
	}
	if code := get("/metrics", nil); code != http.StatusUnauthorized {
		t.Errorf("/metrics without token: %d, want 401", code)
	}
	if code := get("/metrics", map[string]string{"Authorization": "Bearer s3cret"}); code != http.StatusOK {
		t.Errorf("/metrics with token: %d, want 200", code)
	}
}

func TestMetricsEndpoint(t *testing.T) {
	ts := startServer(t, nil, nil)
	sendTCP(t, ts.addrs.GraphiteTCP, []byte("a.b 1 1700000000\n"))
	eventually(t, "1 point", func() bool { return ts.sink.len() == 1 })
	req, _ := http.NewRequest(http.MethodGet, "http://"+ts.addrs.HTTP+"/metrics", nil)
	code, body := do(t, req)
	if code != http.StatusOK || !strings.Contains(body, `pgts_serve_points_received_total{protocol="graphite_tcp"} 1`) {
		t.Errorf("/metrics: %d\n%s", code, body)
	}
}

func TestSetRules(t *testing.T) {
	ts := startServer(t, nil, nil)
	cfg := DefaultConfig()
	cfg.DS = []DSConfig{{Regexp: "^a", Step: "1m", RRAs: []string{"1m:1d"}}, {Regexp: ".", Step: "10s", Archives: []string{"10s:1h"}}}
	rules, err := cfg.Rules()
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.SetRules(rules); err != nil {
		t.Fatal(err)
	}
	if len(ts.sink.rules) != 1 || len(ts.sink.rules[0]) != 2 {
		t.Errorf("sink rules: %v", ts.sink.rules)
	}
	if got := ts.metric("rule_reloads_total", map[string]string{"result": "ok"}); got != 1 {
		t.Errorf("reloads %v", got)
	}
}

func TestListenersDisabled(t *testing.T) {
	ts := startServer(t, nil, func(c *Config) {
		c.Graphite.UDP, c.StatsD.UDP, c.StatsD.TCP, c.Pickle.TCP = "", "", "", ""
	})
	if ts.addrs.GraphiteUDP != "" || ts.addrs.StatsDUDP != "" || ts.addrs.Pickle != "" || ts.addrs.GraphiteTCP == "" {
		t.Errorf("addrs %+v", ts.addrs)
	}
	if err := ts.FlushStatsD(context.Background()); err != nil {
		t.Errorf("flush without statsd: %v", err)
	}
}

func TestExtraHandler(t *testing.T) {
	extra := http.NewServeMux()
	extra.HandleFunc("GET /render", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "[]") })
	sink := &memSink{}
	cfg := testConfig()
	cfg.HTTP.Token = "t"
	srv, err := New(cfg, sink, Options{Extra: extra})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	req, _ := http.NewRequest(http.MethodGet, "http://"+srv.Addrs().HTTP+"/render", nil)
	if code, _ := do(t, req); code != http.StatusUnauthorized {
		t.Errorf("/render without token: %d", code)
	}
	req.Header.Set("Authorization", "Bearer t")
	if code, body := do(t, req); code != http.StatusOK || body != "[]" {
		t.Errorf("/render: %d %q", code, body)
	}
}

// Defect 8: /healthz says when the storage is failing, and again when it
// recovers.
func TestHealthzStorage(t *testing.T) {
	sink := &memSink{}
	ts := startServer(t, sink, nil)
	get := func() (int, string) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+ts.addrs.HTTP+"/healthz", nil)
		return do(t, req)
	}
	if code, body := get(); code != http.StatusOK {
		t.Fatalf("/healthz: %d %s", code, body)
	}
	sink.mu.Lock()
	sink.health = errors.New("connection refused")
	sink.mu.Unlock()
	if code, body := get(); code != http.StatusServiceUnavailable || !strings.Contains(body, "storage failing: connection refused") {
		t.Errorf("/healthz with failing storage: %d %q", code, body)
	}
	sink.mu.Lock()
	sink.health = nil
	sink.mu.Unlock()
	if code, body := get(); code != http.StatusOK {
		t.Errorf("/healthz after recovery: %d %s", code, body)
	}
}

// Defect 6: StatsD flushes are dated at the end of their interval, a
// multiple of the flush interval, so each lands in its own archive slot
// whatever the timer's delay.
func TestStatsDFlushTime(t *testing.T) {
	iv := 10 * time.Second
	b := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct{ now, want time.Time }{
		{b, b},
		{b.Add(3 * time.Millisecond), b.Add(iv)},
		{b.Add(-time.Millisecond), b},
		{b.Add(9999 * time.Millisecond), b.Add(iv)},
	} {
		if got := intervalEnd(c.now, iv); !got.Equal(c.want) {
			t.Errorf("intervalEnd(%v) = %v, want %v", c.now, got, c.want)
		}
	}
}

// The last flush of an interval longer than the future tolerance allows
// is dated at the clock, so that the storage does not refuse it.
func TestStatsDFinalFlushLongInterval(t *testing.T) {
	cfg := testConfig()
	cfg.StatsD.FlushInterval = Duration(time.Hour)
	now := testNow.Add(time.Second)
	sink := &memSink{}
	srv, err := New(cfg, sink, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	srv.statsd.mu.Lock()
	err = srv.statsd.agg.Add(statsd.Metric{Name: "long.hits", Type: statsd.Counter, Value: 3, SampleRate: 1})
	srv.statsd.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.FlushStatsD(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := sink.byName("stats.counters.long.hits.count"); len(got) != 1 || got[0].Time != now.UnixMicro() {
		t.Errorf("flushed %+v, want one point at the clock %d", got, now.UnixMicro())
	}
}
