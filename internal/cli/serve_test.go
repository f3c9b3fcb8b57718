package cli

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/ingest/remotewrite"
	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/serve"
	"github.com/pgts/pgts/internal/tsstore"
)

func TestServeCheckConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	os.WriteFile(good, []byte("[graphite]\nudp = \"\"\n\n[[ds]]\nregexp = \".\"\nstep = \"10s\"\narchives = [\"10s:6h\"]\n"), 0o644)
	out, stderr, code := run(t, nil, "serve", "--config", good, "--check-config")
	if code != 0 || !strings.Contains(out, "ok") {
		t.Errorf("valid file: exit %d, %q %q", code, out, stderr)
	}
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("[statsd]\nflush-interval = \"0s\"\n\n[[ds]]\nregexp = \".\"\nstep = \"10s\"\narchives = [\"bogus\"]\n"), 0o644)
	_, stderr, code = run(t, nil, "serve", "--config", bad, "--check-config")
	if code != 2 || !strings.Contains(stderr, "bad.toml:2: statsd.flush-interval") || !strings.Contains(stderr, "bad.toml:4: ds[0]") {
		t.Errorf("invalid file: exit %d, %q", code, stderr)
	}
	_, stderr, code = run(t, nil, "serve", "--check-config", "--http", "nohostport")
	if code != 2 || !strings.Contains(stderr, "http.addr") {
		t.Errorf("bad --http: exit %d, %q", code, stderr)
	}
	_, _, code = run(t, nil, "serve", "--config", filepath.Join(dir, "missing.toml"), "--check-config")
	if code != 2 {
		t.Errorf("missing file: exit %d", code)
	}
}

// TestServeEndToEnd runs the daemon against PostgreSQL, sends points over
// every protocol, stops it as SIGTERM does, and reads the points back from
// the raw table and, after a restart of the storage, from the archives.
func TestServeEndToEnd(t *testing.T) {
	db := pgtest.DB(t)
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "pgts.toml")
	err := os.WriteFile(cfgFile, []byte(`
flush-interval = "1h"
[graphite]
tcp = "127.0.0.1:0"
udp = "127.0.0.1:0"
[pickle]
tcp = "127.0.0.1:0"
[statsd]
udp = "127.0.0.1:0"
tcp = "127.0.0.1:0"
flush-interval = "1h"
[http]
addr = "127.0.0.1:0"
[raw]
table = "metrics_raw"
interval = "1 day"
[[ds]]
regexp = '^servers\.'
step = "10s"
archives = ["10s:1h", "1m:1d"]
[[ds]]
regexp = "."
step = "10s"
archives = ["10s:1h"]
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	ad, logs, cancel, done := startServe(t, db, serveFlags{config: cfgFile})
	defer cancel()

	base := time.Now().Add(-10*time.Minute).Unix() / 60 * 60
	var lines strings.Builder
	for i := range 6 {
		fmt.Fprintf(&lines, "servers.web1.cpu %d %d\n", i+1, base+int64(10*i))
	}
	fmt.Fprintf(&lines, "servers.web1.cpu 7 %d\n", base+110) // after a gap over the heartbeat
	sendTo(t, "tcp", ad.GraphiteTCP, []byte(lines.String()))

	pk := []byte(fmt.Sprintf("(l(S'pickle.metric'\n(I%d\nF1.5\ntta.", base))
	sendTo(t, "tcp", ad.Pickle, append(binary.BigEndian.AppendUint32(nil, uint32(len(pk))), pk...))
	sendTo(t, "udp", ad.StatsDUDP, []byte("hits:5|c\n"))

	httpPost(t, "http://"+ad.HTTP+"/write?precision=s", nil, []byte(fmt.Sprintf("cpu,host=a usage=0.5 %d\n", base)))
	rw := snappy.Encode(nil, remotewrite.AppendWriteRequest(nil, []remotewrite.Series{{
		Labels: []ingest.Tag{{Key: "__name__", Value: "up"}, {Key: "job", Value: "api"}}, Samples: []remotewrite.Sample{{Value: 1, Time: base * 1000}}}}))
	httpPost(t, "http://"+ad.HTTP+"/api/v1/write", map[string]string{"Content-Encoding": "snappy"}, rw)

	// Wait until the socket receivers have read everything, as /metrics says.
	want := map[string]int{"graphite_tcp": 7, "pickle": 1, "statsd_udp": 1}
	deadline := time.Now().Add(20 * time.Second)
	for !receivedAll(t, ad.HTTP, want) {
		if time.Now().After(deadline) {
			t.Fatalf("points not received; logs:\n%s", logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}

	// SIGHUP reloads the [[ds]] sections.
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(logs.String(), "rules reloaded") {
		if time.Now().After(deadline) {
			t.Fatalf("SIGHUP: rules not reloaded; logs:\n%s", logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	checkRender(t, ad.HTTP, base)
	cancel() // SIGTERM
	if err := <-done; err != nil {
		t.Fatalf("serve: %v\n%s", err, logs.String())
	}

	pool := pgtest.PoolFor(t, db)
	var raw int
	if err := pool.QueryRow(context.Background(), "select count(*) from metrics_raw").Scan(&raw); err != nil {
		t.Fatal(err)
	}
	// 7 graphite, 1 pickle, 1 influx, 1 remote write, 2 statsd (count, rate).
	if raw != 12 {
		t.Errorf("%d raw points stored, want 12", raw)
	}

	// Restart the storage: what was accepted before the stop is readable.
	cfg, err := serve.LoadConfig(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	rules, _ := cfg.Rules()
	scfg, err := storeConfig(context.Background(), pool, cfg, rules)
	if err != nil {
		t.Fatal(err)
	}
	store, err := tsstore.Open(context.Background(), pool, scfg)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(context.Background())
	got, err := store.Fetch(context.Background(), []string{"servers.web1.cpu"}, base-10, base+110, 1000)
	if err != nil || len(got) != 1 {
		t.Fatalf("fetch: %v %+v", err, got)
	}
	// As whisper stores them: every point in the slot starting at its
	// time, the first one included, the one after the gap too.
	golden := map[int64]float64{base: 1, base + 10: 2, base + 20: 3, base + 30: 4, base + 40: 5, base + 50: 6, base + 110: 7}
	s := got[0]
	seen := 0
	for i, v := range s.Values {
		ts := s.Start + int64(i)*s.Step
		if ts < base || ts > base+110 {
			continue
		}
		seen++
		w, known := golden[ts]
		if known && v != w || !known && !math.IsNaN(v) {
			t.Errorf("slot %d (base+%d): %v, want %v", ts, ts-base, v, w)
		}
	}
	if s.Step != 10 || seen != 12 {
		t.Errorf("step %d, %d slots in range: %+v", s.Step, seen, s)
	}
}

// serveLogs is a log destination safe for concurrent writes.
type serveLogs struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *serveLogs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *serveLogs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func sendTo(t *testing.T, network, addr string, data []byte) {
	t.Helper()
	c, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(data); err != nil {
		t.Fatal(err)
	}
}

func httpPost(t *testing.T, url string, header map[string]string, body []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %d %s", url, resp.StatusCode, b)
	}
}

var receivedRE = regexp.MustCompile(`(?m)^pgts_serve_points_received_total\{protocol="(\w+)"\} (\d+)$`)

func receivedAll(t *testing.T, addr string, want map[string]int) bool {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	got := map[string]int{}
	for _, m := range receivedRE.FindAllStringSubmatch(string(b), -1) {
		got[m[1]], _ = strconv.Atoi(m[2])
	}
	for p, n := range want {
		if got[p] < n {
			return false
		}
	}
	return true
}

// checkRender reads the points back through the Graphite API, as Grafana
// does (POST /render, GET /metrics/find), while they are still in the
// write-back cache. Graphite labels a value by the start of its interval.
func checkRender(t *testing.T, addr string, base int64) {
	t.Helper()
	form := url.Values{"target": {"servers.web1.cpu"}, "from": {fmt.Sprint(base)}, "until": {fmt.Sprint(base + 60)},
		"format": {"json"}, "maxDataPoints": {"1000"}}
	resp, err := http.PostForm("http://"+addr+"/render", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []struct {
		Target     string        `json:"target"`
		Datapoints [][2]*float64 `json:"datapoints"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 || len(out) != 1 {
		t.Fatalf("render: %s, %v, %+v", resp.Status, err, out)
	}
	got := map[int64]float64{}
	for _, dp := range out[0].Datapoints {
		if dp[0] != nil && dp[1] != nil {
			got[int64(*dp[1])] = *dp[0]
		}
	}
	// graphite-web's window for from=base, until=base+60 is base+10 to
	// base+60, each value at the start of its slot (the point sent at
	// base+10 at base+10).
	want := map[int64]float64{base + 10: 2, base + 20: 3, base + 30: 4, base + 40: 5, base + 50: 6}
	if _, ok := got[base]; ok || len(got) != len(want) {
		t.Errorf("render %s: %v, want %v", out[0].Target, got, want)
	}
	for ts, v := range want {
		if got[ts] != v {
			t.Errorf("render %s at base+%d = %v, want %v (all: %v)", out[0].Target, ts-base, got[ts], v, got)
		}
	}
	resp2, err := http.Get("http://" + addr + "/metrics/find?query=servers.*")
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	var nodes []struct {
		Text string `json:"text"`
		Leaf int    `json:"leaf"`
	}
	if err := json.NewDecoder(resp2.Body).Decode(&nodes); err != nil || len(nodes) != 1 || nodes[0].Text != "web1" || nodes[0].Leaf != 0 {
		t.Fatalf("find servers.*: %v %+v", err, nodes)
	}
}

// TestServeBlaster drives the daemon's own load generator over HTTP.
func TestServeBlaster(t *testing.T) {
	db := pgtest.DB(t)
	cfgFile := loopbackConfig(t, "")
	ad, logs, cancel, done := startServe(t, db, serveFlags{config: cfgFile, blaster: true})
	defer cancel()
	set := func(q string) blasterState {
		resp, err := http.Get("http://" + ad.HTTP + "/blaster/set?" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st blasterState
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("/blaster/set?%s: %s %s", q, resp.Status, b)
		}
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := set("rate=2000&n=50"); st.Rate != 2000 || st.Series != 50 {
		t.Fatalf("state %+v", st)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !receivedAll(t, ad.HTTP, map[string]int{"graphite_tcp": 200}) {
		if time.Now().After(deadline) {
			t.Fatalf("the blaster's points did not arrive; logs:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := set("rate=0"); st.Rate != 0 {
		t.Fatalf("state after stop %+v", st)
	}
	resp, err := http.Get("http://" + ad.HTTP + "/blaster/set?rate=-1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("rate=-1: %s", resp.Status)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	pool := pgtest.PoolFor(t, db)
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM pgts.metric").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 50 {
		t.Fatalf("%d series registered, want 50", n)
	}
}

// startServe runs the daemon in-process on database db until cancel is
// called; done yields runServe's result.
func startServe(t *testing.T, db string, f serveFlags) (serve.Addrs, *serveLogs, context.CancelFunc, <-chan error) {
	t.Helper()
	return startServeEnv(t, map[string]string{"DATABASE_URL": db}, f)
}

// startServeEnv is startServe with the environment env.
func startServeEnv(t *testing.T, env map[string]string, f serveFlags) (serve.Addrs, *serveLogs, context.CancelFunc, <-chan error) {
	t.Helper()
	logs := &serveLogs{}
	a := &app{env: Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: logs,
		Getenv: func(k string) string { return env[k] }, IsTerminal: func() bool { return false }}}
	a.log = slog.New(newLogHandler(logs, &a.logLevel))
	ctx, cancel := context.WithCancel(context.Background())
	addrsc := make(chan serve.Addrs, 1)
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, a, nil, f, func(ad serve.Addrs) { addrsc <- ad })
	}()
	select {
	case ad := <-addrsc:
		return ad, logs, cancel, done
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v\n%s", err, logs.String())
	}
	panic("unreachable")
}

// TestServeMemoryLimit: the daemon runs under a Go memory limit derived
// from max-memory (a quarter more, at least 64 MiB more), so that its heap
// does not grow to twice the live heap; GOMEMLIMIT in its environment
// wins. The previous limit is back when it returns.
func TestServeMemoryLimit(t *testing.T) {
	db := pgtest.DB(t)
	cfgFile := loopbackConfig(t, `max-memory = "512MiB"`+"\n")
	before := debug.SetMemoryLimit(-1)
	for _, c := range []struct {
		env  string
		want int64
	}{
		{"", 640 << 20},
		{"3GiB", before},
	} {
		env := map[string]string{"DATABASE_URL": db, "GOMEMLIMIT": c.env}
		_, logs, cancel, done := startServeEnv(t, env, serveFlags{config: cfgFile})
		got := debug.SetMemoryLimit(-1)
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("serve: %v\n%s", err, logs.String())
		}
		if got != c.want {
			t.Errorf("GOMEMLIMIT=%q: memory limit %d while serving, want %d", c.env, got, c.want)
		}
		if !strings.Contains(logs.String(), "memory limit") {
			t.Errorf("GOMEMLIMIT=%q: the memory limit is not logged:\n%s", c.env, logs.String())
		}
		if after := debug.SetMemoryLimit(-1); after != before {
			t.Errorf("GOMEMLIMIT=%q: memory limit %d after serving, want %d as before", c.env, after, before)
		}
	}
}

// TestMemoryLimitFollowsSeriesState: the state of series that all receive
// points is kept beyond max-memory, so a limit of max-memory and a quarter
// alone put the collector in a loop at a million series (80,320 points/s
// acked at 1 M series and 512 MiB, against 160,623 without a limit). The
// limit grows with the series state the store accounts.
func TestMemoryLimitFollowsSeriesState(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	cfg := serve.DefaultConfig()
	cfg.MaxMemory = 512 << 20
	a := &app{env: Env{Getenv: func(string) string { return "" }}, log: slog.New(slog.DiscardHandler)}
	update, restore := setMemoryLimit(a, cfg)
	if got := debug.SetMemoryLimit(-1); got != 640<<20 {
		t.Errorf("at start: memory limit %d, want %d", got, 640<<20)
	}
	update(400 << 20)
	if got, want := debug.SetMemoryLimit(-1), cfg.MemoryLimitFor(400<<20); got != want || want != (512+400)<<20*5/4 {
		t.Errorf("with 400 MiB of series state: memory limit %d, want %d", got, want)
	}
	update(0)
	if got := debug.SetMemoryLimit(-1); got != 640<<20 {
		t.Errorf("series state gone: memory limit %d, want %d", got, 640<<20)
	}
	restore()
	if after := debug.SetMemoryLimit(-1); after != before {
		t.Errorf("after: memory limit %d, want %d as before", after, before)
	}
	a.env.Getenv = func(k string) string {
		if k == "GOMEMLIMIT" {
			return "3GiB"
		}
		return ""
	}
	update, restore = setMemoryLimit(a, cfg)
	update(400 << 20)
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("GOMEMLIMIT set: memory limit %d changed, want %d", got, before)
	}
	restore()
}

// loopbackConfig writes a daemon configuration with the Graphite TCP
// and HTTP listeners on loopback ports the system chooses and the others
// off, after the top-level keys of head; it returns its path.
func loopbackConfig(t *testing.T, head string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pgts.toml")
	if err := os.WriteFile(p, []byte(head+`
[graphite]
tcp = "127.0.0.1:0"
udp = ""
[pickle]
tcp = ""
[statsd]
udp = ""
tcp = ""
[http]
addr = "127.0.0.1:0"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestServeReleasesMemoryWhenQuiet: once points stopped and were
// written, the daemon gives its free heap back to the system and says
// so; the profiles are served only with --pprof.
func TestServeReleasesMemoryWhenQuiet(t *testing.T) {
	db := pgtest.DB(t)
	cfgFile := loopbackConfig(t, "flush-interval = \"1s\"\nrelease-memory-after = \"1s\"\n")
	ad, logs, cancel, done := startServe(t, db, serveFlags{config: cfgFile, pprof: true})
	defer cancel()
	sendTo(t, "tcp", ad.GraphiteTCP, []byte(fmt.Sprintf("quiet.a 1 %d\n", time.Now().Unix())))
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), "memory released to the system") {
		if time.Now().After(deadline) {
			t.Fatalf("no release logged after the points were written; logs:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := http.Get("http://" + ad.HTTP + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/debug/pprof/heap with --pprof: %s", resp.Status)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}

	// Without --pprof, no profiles.
	ad, _, cancel2, done2 := startServe(t, db, serveFlags{config: loopbackConfig(t, "")})
	defer cancel2()
	resp, err = http.Get("http://" + ad.HTTP + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Errorf("/debug/pprof/heap without --pprof: %s", resp.Status)
	}
	cancel2()
	if err := <-done2; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
