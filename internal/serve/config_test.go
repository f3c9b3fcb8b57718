package serve

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestDefaultConfigValid(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, addr := range map[string]string{"graphite.tcp": c.Graphite.TCP, "graphite.udp": c.Graphite.UDP,
		"pickle.tcp": c.Pickle.TCP, "statsd.udp": c.StatsD.UDP, "statsd.tcp": c.StatsD.TCP, "http.addr": c.HTTP.Addr} {
		if !strings.HasPrefix(addr, "127.0.0.1:") {
			t.Errorf("%s = %q: listeners bind to 127.0.0.1 by default", name, addr)
		}
	}
	if rules, err := c.Rules(); err != nil || len(rules) != 1 {
		t.Errorf("default rules: %v %v", rules, err)
	}
}

// TestDocExample parses the example pgts.toml of docs/serve.md, so that the
// documentation cannot drift from the code.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/serve.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := bytes.Cut(doc, []byte("```toml\n"))
	example, _, ok2 := bytes.Cut(rest, []byte("```"))
	if !ok || !ok2 {
		t.Fatal("no ```toml block in docs/serve.md")
	}
	c, err := ParseConfig("serve.md", example)
	if err != nil {
		t.Fatal(err)
	}
	if c.Raw.Table == "" || len(c.DS) < 2 || c.HTTP.Token == "" || time.Duration(c.StatsD.FlushInterval) != 10*time.Second {
		t.Errorf("example not read as expected: %+v", c)
	}
	if len(c.DS[0].RRAs) != 0 || len(c.DS[0].Archives) != 4 {
		t.Errorf("[[ds]] merged with the default: %+v", c.DS[0])
	}
	if c.MaxMemory != 1<<30 || c.Limits.MaxLine != 64<<10 {
		t.Errorf("sizes: max-memory %d, max-line %d", c.MaxMemory, c.Limits.MaxLine)
	}
}

func TestConfigErrorsNameLines(t *testing.T) {
	const file = `max-memory = "1GiB"
flush-workers = 0

[graphite]
tcp = "nohostport"

[statsd]
flush-interval = "0s"

[limits]
max-datagram = 70000

[[ds]]
regexp = "("
step = "10s"
archives = ["10s:6h"]

[[ds]]
regexp = "."
step = "10s"
rras = ["10s:6h"]
archives = ["1m:1d"]
colour = "blue"
`
	_, err := ParseConfig("pgts.toml", []byte(file))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"pgts.toml:2: flush-workers: must be positive",
		`pgts.toml:5: graphite.tcp: address "nohostport"`,
		"pgts.toml:8: statsd.flush-interval: must be positive",
		"pgts.toml:11: limits.max-datagram: 70000 is over 65535",
		"pgts.toml:13: ds[0]: ",
		"pgts.toml:18: ds[1]: give archives or rras, not both",
		"pgts.toml:23: ds[1].colour: unknown key",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Errorf("%T is no *ConfigError", err)
	}

	for _, c := range []struct{ text, want string }{
		{"max-memory = \"12XB\"\n", `pgts.toml:1`},
		{"[http]\nmax-concurrent = \"many\"\n", `pgts.toml:2: http.max-concurrent: incompatible types`},
		{"[http\n", "pgts.toml:2: expected '.' or ']'"},
		{"log-interval = \"soon\"\n", `pgts.toml:1`},
		{"ds = []\n", "nothing would store points"},
		{"[[ds]]\nregexp = \".\"\nstep = \"10s\"\nrras = [\"10s:1\"]\n", "pgts.toml:1: ds[0]: "},
	} {
		_, err := ParseConfig("pgts.toml", []byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.text, err, c.want)
		}
	}
}

func TestSizes(t *testing.T) {
	for in, want := range map[string]int64{"65536": 65536, "64KiB": 64 << 10, "64kB": 64 << 10, "32MB": 32 << 20, "1GiB": 1 << 30, "10 B": 10} {
		got, err := parseSize(in)
		if err != nil || got != want {
			t.Errorf("%q: %d %v, want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "1TB", "-1", "99999999999GiB"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
	c, err := ParseConfig("x", []byte("max-memory = 1048576\n[limits]\nmax-body = \"2MiB\"\n"))
	if err != nil || c.MaxMemory != 1<<20 || c.Limits.MaxBody != 2<<20 {
		t.Errorf("sizes: %v %v %v", c.MaxMemory, c.Limits.MaxBody, err)
	}
}

func TestErrLogRateLimit(t *testing.T) {
	var logs syncBuffer
	now := testNow
	l := newErrLog(newTestLogger(&logs), "graphite_tcp", "refused input", 10*time.Second, func() time.Time { return now })
	e := errors.New("bad line")
	l.report("a", e, 1)
	l.report("a", e, 1)
	l.report("b", e, 5)
	if n := strings.Count(logs.String(), "refused input"); n != 1 {
		t.Fatalf("%d lines in the first period:\n%s", n, logs.String())
	}
	now = now.Add(11 * time.Second)
	l.report("c", e, 1)
	out := logs.String()
	if !strings.Contains(out, "count=6") || strings.Count(out, `msg="refused input"`) != 2 {
		t.Errorf("next period:\n%s", out)
	}
	l.close()
	if strings.Count(logs.String(), "not logged one by one") != 1 {
		t.Errorf("close logged a summary of nothing:\n%s", logs.String())
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte("max-memory = \"1GiB\"\n[statsd]\nflush-interval = \"5s\"\n[[ds]]\nregexp = \".\"\nstep = \"10s\"\narchives = [\n  \"10s:1h\",\n]\n"))
	f.Add([]byte("[[ds]]\nregexp = '''\n[x'''\n[limits]\nmax-line = 10\n"))
	f.Add([]byte("a = [\"]\" # ]\n[b.\"c.d\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig("f.toml", data)
		if err == nil {
			if verr := c.Validate(); verr != nil {
				t.Fatalf("ParseConfig accepted what Validate refuses: %v", verr)
			}
		}
	})
}

// The render API's request limits are settings: a site that renders
// sumSeries over tens of thousands of series raises them, as graphite-web
// has no such limit; nonsense values are refused with the key.
func TestRenderLimits(t *testing.T) {
	c, err := ParseConfig("t.toml", []byte("[render]\nmax-series = 50000\nmax-points = 200000000\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Render.MaxSeries != 50000 || c.Render.MaxPoints != 200_000_000 {
		t.Errorf("render limits read as %+v", c.Render)
	}
	d := DefaultConfig()
	if d.Render.MaxSeries != 10_000 || d.Render.MaxPoints != 5_000_000 {
		t.Errorf("default render limits %+v", d.Render)
	}
	for _, bad := range []string{"[render]\nmax-series = 0\n", "[render]\nmax-points = -1\n", "[render]\nmax-points = 20000000000\n"} {
		if _, err := ParseConfig("t.toml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "render.max-") {
			t.Errorf("%q: error %v, want one naming render.max-…", bad, err)
		}
	}
}

// TestDefaultFlushWorkers: half the processors, 1 to 4, and the pool
// keeps room for the render API's reads whatever the flush takes.
func TestDefaultFlushWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for procs, want := range map[int]int{1: 1, 2: 1, 3: 1, 4: 2, 6: 3, 8: 4, 64: 4} {
		runtime.GOMAXPROCS(procs)
		if got := DefaultFlushWorkers(); got != want {
			t.Errorf("%d processors: %d flush workers, want %d", procs, got, want)
		}
		if got := DefaultConfig().FlushWorkers; got != want {
			t.Errorf("%d processors: DefaultConfig has %d flush workers, want %d", procs, got, want)
		}
	}
	for workers, want := range map[int]int32{1: 6, 4: 6, 8: 10} {
		c := DefaultConfig()
		c.FlushWorkers = workers
		if got := c.PoolSize(); got != want {
			t.Errorf("%d flush workers: a pool of %d, want %d", workers, got, want)
		}
	}
}
