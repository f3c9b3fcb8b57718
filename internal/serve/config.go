package serve

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/ingest/statsd"
	"github.com/pgts/pgts/internal/rra"
)

// MemoryLimit is the Go memory limit (runtime/debug.SetMemoryLimit) the
// daemon runs under: max-memory, to which the storage holds its pending
// data and the state of its series (evicting the state of idle series
// above it), and a quarter more, at least 64 MiB, for what the storage
// does not account (receivers' and connections' buffers, render
// requests, a flush's transient memory). Under it the Go collector keeps
// the heap near the live heap instead of letting it grow to twice that
// (GOGC=100) before collecting.
func (c Config) MemoryLimit() int64 { return c.MemoryLimitFor(0) }

// MemoryLimitFor is MemoryLimit for a storage holding seriesBytes of
// series state: the state of series that all receive points is kept
// beyond max-memory (only idle series are evicted), and a limit below the
// live heap makes the collector run without pause.
func (c Config) MemoryLimitFor(seriesBytes int64) int64 {
	m := int64(c.MaxMemory) + max(seriesBytes, 0)
	return m + max(m/4, 64<<20)
}

// Config is the daemon's configuration file (TOML; see docs/serve.md for a
// full example). An empty listen address disables that listener. Sizes are
// bytes, durations Go duration strings. The zero value is not valid: start
// from DefaultConfig, or LoadConfig, which does.
type Config struct {
	// MaxMemory is the storage's memory budget for the points, slots and
	// updates not yet written to PostgreSQL; over it, Sink.Add blocks and
	// Sink.TryAdd refuses. Above it, the storage also evicts the state of
	// idle series (reloaded with their next point). Default 512MiB.
	MaxMemory Size `toml:"max-memory"`
	// MaxSeries bounds the distinct series the storage accepts (series
	// cardinality); points of new series beyond it are refused by the
	// sink. Default 1,000,000.
	MaxSeries int `toml:"max-series"`
	// FlushInterval is how often the storage writes its cache to
	// PostgreSQL. Default 10s.
	FlushInterval Duration `toml:"flush-interval"`
	// FlushWorkers is the number of connections the storage writes
	// with. Default DefaultFlushWorkers().
	FlushWorkers int `toml:"flush-workers"`
	// LogInterval is the period of the parse-error logs: the first
	// refusal of each receiver in a period is logged with its input,
	// the rest are counted and summed up in one line. Default 10s.
	LogInterval Duration `toml:"log-interval"`
	// ShutdownTimeout bounds the drain and final flush on SIGTERM.
	// Default 1m.
	ShutdownTimeout Duration `toml:"shutdown-timeout"`
	// FutureTolerance is how far past the daemon's clock a point may be
	// dated: later points are refused whole, counted and logged.
	// Default 10m.
	FutureTolerance Duration `toml:"future-tolerance"`
	// ReleaseMemoryAfter is how long the daemon must be quiet (no point
	// accepted, nothing waiting to be written) before it gives the
	// memory its heap holds beyond the live heap back to the system,
	// once per quiet period (QuietRelease). 0 disables it. Default 15s.
	ReleaseMemoryAfter Duration `toml:"release-memory-after"`

	Graphite GraphiteConfig `toml:"graphite"`
	Pickle   PickleConfig   `toml:"pickle"`
	StatsD   StatsDConfig   `toml:"statsd"`
	HTTP     HTTPConfig     `toml:"http"`
	Render   RenderConfig   `toml:"render"`
	Raw      RawConfig      `toml:"raw"`
	Limits   LimitsConfig   `toml:"limits"`
	// DS are the [[ds]] sections: which series get which round-robin
	// archives, tried in order, the first matching pattern winning.
	// Default: one catch-all section (regexp ".", step 10s, archives
	// 10s:6h, 1m:7d, 1h:1y). A file with [[ds]] sections replaces it;
	// "ds = []" keeps none (raw points only).
	DS []DSConfig `toml:"ds"`

	// file and lines locate keys in the file LoadConfig read, so that
	// Validate's errors name a line.
	file  string
	lines map[string]int
}

// GraphiteConfig is the [graphite] section: the plaintext protocol.
type GraphiteConfig struct {
	// TCP and UDP are listen addresses. Default 127.0.0.1:2003 both.
	TCP string `toml:"tcp"`
	UDP string `toml:"udp"`
}

// PickleConfig is the [pickle] section: carbon's pickle protocol.
type PickleConfig struct {
	// TCP is the listen address. Default 127.0.0.1:2004.
	TCP string `toml:"tcp"`
}

// StatsDConfig is the [statsd] section. The field names follow the
// reference StatsD's configuration; see statsd.Config.
type StatsDConfig struct {
	// UDP and TCP are listen addresses. Default 127.0.0.1:8125 both.
	UDP string `toml:"udp"`
	TCP string `toml:"tcp"`
	// FlushInterval is the StatsD flush interval. Default 10s.
	FlushInterval Duration `toml:"flush-interval"`
	// Percentiles summarised for timers. Default [90].
	Percentiles []float64 `toml:"percentiles"`
	// Prefix, CounterPrefix, TimerPrefix, GaugePrefix, SetPrefix and
	// Suffix name the flushed series. Defaults "stats", "counters",
	// "timers", "gauges", "sets", "".
	Prefix        string `toml:"prefix"`
	CounterPrefix string `toml:"prefix-counter"`
	TimerPrefix   string `toml:"prefix-timer"`
	GaugePrefix   string `toml:"prefix-gauge"`
	SetPrefix     string `toml:"prefix-set"`
	Suffix        string `toml:"suffix"`
	// DeleteIdle forgets counters, timers, sets and gauges that received
	// nothing since the last flush instead of reporting zeros (or the
	// last gauge value) forever. Default false, as in the reference.
	DeleteIdle bool `toml:"delete-idle"`
	// MaxSeries and MaxSamples bound the aggregator; metrics beyond them
	// are dropped and counted. Defaults 100,000 and 4,194,304.
	MaxSeries  int `toml:"max-series"`
	MaxSamples int `toml:"max-samples"`
}

// HTTPConfig is the [http] section: Influx line protocol (/write,
// /api/v2/write), Prometheus remote write (/api/v1/write), /metrics and
// /healthz.
type HTTPConfig struct {
	// Addr is the listen address. Default 127.0.0.1:8080.
	Addr string `toml:"addr"`
	// Token, when set, is required on every endpoint but /healthz, as
	// "Authorization: Bearer TOKEN", "Authorization: Token TOKEN" (Influx
	// v2 clients), as the password of basic authentication or, on Influx
	// v1's /write, of the u and p query parameters (Influx v1 clients).
	// Default none.
	Token string `toml:"token"`
	// MaxConcurrent bounds the write requests decoded at once; more wait
	// for a slot. Default 4.
	MaxConcurrent int `toml:"max-concurrent"`
	// ReadTimeout bounds reading one request, headers and body. Default
	// 1m.
	ReadTimeout Duration `toml:"read-timeout"`
}

// RenderConfig is the [render] section: bounds on one request of the
// Graphite render API, which holds every point it fetches or computes in
// memory (8 bytes each) until it answers.
type RenderConfig struct {
	// MaxSeries bounds the series one request may fetch, over all its
	// targets. Default 10,000.
	MaxSeries int `toml:"max-series"`
	// MaxPoints bounds the points one request holds at once, fetched or
	// computed (aggregates folded while reading hold a batch and their
	// result); past it the request answers 400 asking for a shorter range. Default
	// 5,000,000 (40 MB of values); at most 1,000,000,000.
	MaxPoints int `toml:"max-points"`
}

// maxRenderPoints caps render.max-points: 8 GB of values per request.
const maxRenderPoints = 1_000_000_000

// RawConfig is the [raw] section: a series table keeping every point as
// received, besides the archives.
type RawConfig struct {
	// Table is the series table's name; empty keeps no raw points.
	// Default empty.
	Table string `toml:"table"`
	// Interval is the table's partition interval, a PostgreSQL interval.
	// Default "1 day".
	Interval string `toml:"interval"`
	// Retention drops partitions older than this PostgreSQL interval;
	// empty keeps them. Default empty.
	Retention string `toml:"retention"`
	// AcceptPast bounds how old a point kept raw may be, a PostgreSQL
	// interval: older points are not kept raw (counted, logged), so that
	// a timestamp of 0 or Influx seconds sent without precision never make
	// a 1970 partition. Default empty: the retention, or "1 year".
	AcceptPast string `toml:"accept-past"`
}

// LimitsConfig is the [limits] section: what any single sender may make
// the daemon read or hold.
type LimitsConfig struct {
	// MaxLine bounds a Graphite plaintext or StatsD line. Default 64KiB.
	MaxLine Size `toml:"max-line"`
	// MaxDatagram bounds a UDP datagram; longer ones are refused whole.
	// Default 65535, the largest UDP payload.
	MaxDatagram Size `toml:"max-datagram"`
	// MaxPickleFrame bounds a pickle frame. Default 1MiB.
	MaxPickleFrame Size `toml:"max-pickle-frame"`
	// MaxBody bounds an HTTP request body as sent (and an Influx body
	// once gunzipped). Default 32MiB.
	MaxBody Size `toml:"max-body"`
	// MaxDecoded bounds a remote-write body once decompressed; a body
	// announcing more is refused before anything is allocated. Default
	// 32MiB.
	MaxDecoded Size `toml:"max-decoded"`
	// MaxPoints bounds the points of one pickle frame or HTTP request.
	// Default 1,048,576.
	MaxPoints int `toml:"max-points"`
	// MaxName, MaxTags and MaxTag bound a metric name, the tags of a
	// point and one tag key or value. Defaults 1KiB, 64, 4KiB.
	MaxName Size `toml:"max-name"`
	MaxTags int  `toml:"max-tags"`
	MaxTag  Size `toml:"max-tag"`
	// UTF8Names lets names and tag keys hold non-ASCII letters and
	// symbols; otherwise they are printable ASCII without spaces.
	// Default false.
	UTF8Names bool `toml:"utf8-names"`
	// ParserCache bounds each parser's caches of recent names and
	// series (every connection has its own parser). Default 256KiB.
	ParserCache Size `toml:"parser-cache"`
	// MaxConnections bounds the open connections of each TCP listener.
	// A sender beyond it is not closed: it waits to be served (its writes
	// held by the kernel, later senders queued in the listen backlog)
	// while the listener's idle connections are closed after
	// FullReadTimeout; each wait is counted and logged (rate-limited).
	// Default 1024, room for a fleet of senders that each keep a
	// connection open.
	MaxConnections int `toml:"max-connections"`
	// ReadTimeout closes a TCP connection idle for this long. Default 5m.
	ReadTimeout Duration `toml:"read-timeout"`
	// FullReadTimeout replaces ReadTimeout while a sender waits for one
	// of the listener's max-connections: idle connections make room
	// sooner. Default 10s.
	FullReadTimeout Duration `toml:"full-read-timeout"`
}

// DSConfig is one [[ds]] section: series whose name matches Regexp get
// the archives given, consolidated as Graphite's carbon and whisper do
// (the default: Aggregation and XFF are carbon's aggregationMethod and
// xFilesFactor) or, with Consolidation = "rrd", as RRDtool and Tgres do
// (time-weighted, with a Heartbeat). Archives may be spelled "archives"
// or, as in Tgres, "rras". See rra.RuleConfig.
type DSConfig struct {
	Regexp        string   `toml:"regexp"`
	Consolidation string   `toml:"consolidation"`
	Step          string   `toml:"step"`
	Heartbeat     string   `toml:"heartbeat"`
	Aggregation   string   `toml:"aggregation"`
	XFF           *float64 `toml:"xff"`
	Archives      []string `toml:"archives"`
	RRAs          []string `toml:"rras"`
}

// DefaultFlushWorkers is the default of flush-workers: half the
// processors the daemon may use (GOMAXPROCS), 1 to 4. Each flush
// connection keeps a PostgreSQL backend busy while it writes, on the
// daemon's machine in the usual set-up (the embedded cluster), and each
// busy one takes a processor from the receivers: at 1,000,000 series on
// 2 processors, 4 flush connections acknowledged 17–26% fewer points a
// second than 1 (docs/benchmarks.md, "The flush and the receivers").
func DefaultFlushWorkers() int {
	return min(4, max(1, runtime.GOMAXPROCS(0)/2))
}

// PoolSize is the number of database connections the daemon opens: the
// flush's, and two more, at least six in all, which the render API's
// reads share (a request reads on up to three at once) with the
// registry's and the states' reads.
func (c Config) PoolSize() int32 {
	return int32(max(c.FlushWorkers, 4) + 2)
}

// DefaultConfig returns the defaults described on each field.
func DefaultConfig() Config {
	return Config{
		MaxMemory:          512 << 20,
		MaxSeries:          1_000_000,
		FlushInterval:      Duration(10 * time.Second),
		FlushWorkers:       DefaultFlushWorkers(),
		LogInterval:        Duration(10 * time.Second),
		ShutdownTimeout:    Duration(time.Minute),
		FutureTolerance:    Duration(10 * time.Minute),
		ReleaseMemoryAfter: Duration(15 * time.Second),
		Graphite:           GraphiteConfig{TCP: "127.0.0.1:2003", UDP: "127.0.0.1:2003"},
		Pickle:             PickleConfig{TCP: "127.0.0.1:2004"},
		StatsD: StatsDConfig{UDP: "127.0.0.1:8125", TCP: "127.0.0.1:8125",
			FlushInterval: Duration(10 * time.Second), Percentiles: []float64{90},
			Prefix: "stats", CounterPrefix: "counters", TimerPrefix: "timers", GaugePrefix: "gauges", SetPrefix: "sets",
			MaxSeries: 100_000, MaxSamples: 4 << 20},
		HTTP:   HTTPConfig{Addr: "127.0.0.1:8080", MaxConcurrent: 4, ReadTimeout: Duration(time.Minute)},
		Render: RenderConfig{MaxSeries: 10_000, MaxPoints: 5_000_000},
		Raw:    RawConfig{Interval: "1 day"},
		Limits: LimitsConfig{MaxLine: 64 << 10, MaxDatagram: 65535, MaxPickleFrame: 1 << 20, MaxBody: 32 << 20,
			MaxDecoded: 32 << 20, MaxPoints: 1 << 20, MaxName: 1 << 10, MaxTags: 64, MaxTag: 4 << 10,
			ParserCache: 256 << 10, MaxConnections: 1024, ReadTimeout: Duration(5 * time.Minute),
			FullReadTimeout: Duration(10 * time.Second)},
		DS: []DSConfig{{Regexp: ".", Step: "10s", Archives: []string{"10s:6h", "1m:7d", "1h:1y"}}},
	}
}

// ConfigError is one thing wrong with a configuration: the key at fault
// (as "statsd.flush-interval" or "ds[1].step") and, for a Config read by
// LoadConfig, the file and line where it is set.
type ConfigError struct {
	File string
	Line int // 1-based; 0 when unknown
	Key  string
	Err  error
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// LoadConfig reads the configuration file name over DefaultConfig and
// validates it. Unknown keys are errors, so that a misspelt setting is not
// silently ignored. Every error is a *ConfigError naming the line; several
// are joined with errors.Join.
func LoadConfig(name string) (Config, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return Config{}, fmt.Errorf("reading configuration: %w", err)
	}
	return ParseConfig(name, data)
}

// ParseConfig is LoadConfig for the contents of a file; name is used in
// errors only.
func ParseConfig(name string, data []byte) (Config, error) {
	c := DefaultConfig()
	defaultDS := c.DS
	// Decoding [[ds]] sections over the default one would merge them.
	c.DS = nil
	c.file, c.lines = name, keyLines(data)
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&c)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return Config{}, &ConfigError{File: name, Line: pe.Position.Line, Key: pe.LastKey, Err: errors.New(pe.Message)}
		}
		// Type mismatches come as "toml: line N (last key "k"): message".
		if m := decodeErrRE.FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			return Config{}, &ConfigError{File: name, Line: line, Key: m[2], Err: errors.New(m[3])}
		}
		return Config{}, &ConfigError{File: name, Err: err}
	}
	if !md.IsDefined("ds") {
		c.DS = defaultDS
	}
	var errs []error
	seen := map[string]bool{}
	for _, k := range md.Undecoded() {
		key := configKey(k)
		if seen[key] {
			continue
		}
		seen[key] = true
		// Keys of [[ds]] come without their section's index: find each
		// occurrence in the file.
		var found []string
		for lk := range c.lines {
			if stripIndexes(lk) == key {
				found = append(found, lk)
			}
		}
		if len(found) == 0 {
			found = append(found, key)
		}
		slices.Sort(found)
		for _, f := range found {
			errs = append(errs, c.errorf(f, "unknown key"))
		}
	}
	if err := c.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return c, nil
}

var decodeErrRE = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)

// configKey spells a TOML key path as Validate does: ds[1].step.
func configKey(k toml.Key) string {
	var b strings.Builder
	for i, p := range k {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// stripIndexes removes the "[n]" of array-of-tables keys: ds[1].step is
// ds.step.
func stripIndexes(k string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(k, '[')
		if i < 0 {
			return b.String() + k
		}
		b.WriteString(k[:i])
		j := strings.IndexByte(k[i:], ']')
		if j < 0 {
			return b.String() + k[i:]
		}
		k = k[i+j+1:]
	}
}

func (c *Config) errorf(key, format string, args ...any) error {
	line := c.lines[key]
	for k := key; line == 0 && k != ""; {
		// A key left at its default has no line; name its section's.
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
		line = c.lines[k]
	}
	return &ConfigError{File: c.file, Line: line, Key: key, Err: fmt.Errorf(format, args...)}
}

// Validate reports everything wrong with c, each a *ConfigError, joined
// with errors.Join. It does not ask PostgreSQL whether the [raw] intervals
// are well spelt: the daemon checks them when it connects.
func (c *Config) Validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	positive := func(key string, v int64) {
		if v <= 0 {
			add(c.errorf(key, "must be positive, got %d", v))
		}
	}
	addr := func(key, a string) {
		if a == "" {
			return
		}
		if _, _, err := net.SplitHostPort(a); err != nil {
			add(c.errorf(key, "address %q: want host:port, as 127.0.0.1:2003 (an empty address disables the listener)", a))
		}
	}
	positive("max-memory", int64(c.MaxMemory))
	positive("max-series", int64(c.MaxSeries))
	positive("flush-interval", int64(c.FlushInterval))
	positive("flush-workers", int64(c.FlushWorkers))
	positive("log-interval", int64(c.LogInterval))
	positive("shutdown-timeout", int64(c.ShutdownTimeout))
	if c.FutureTolerance < 0 {
		add(c.errorf("future-tolerance", "must not be negative"))
	}
	if c.ReleaseMemoryAfter < 0 {
		add(c.errorf("release-memory-after", "must not be negative"))
	}
	addr("graphite.tcp", c.Graphite.TCP)
	addr("graphite.udp", c.Graphite.UDP)
	addr("pickle.tcp", c.Pickle.TCP)
	addr("statsd.udp", c.StatsD.UDP)
	addr("statsd.tcp", c.StatsD.TCP)
	addr("http.addr", c.HTTP.Addr)
	positive("statsd.flush-interval", int64(c.StatsD.FlushInterval))
	if err := c.statsdConfig().Validate(); err != nil && c.StatsD.FlushInterval > 0 {
		add(c.errorf("statsd", "%v", err))
	}
	positive("http.max-concurrent", int64(c.HTTP.MaxConcurrent))
	positive("http.read-timeout", int64(c.HTTP.ReadTimeout))
	positive("render.max-series", int64(c.Render.MaxSeries))
	positive("render.max-points", int64(c.Render.MaxPoints))
	if c.Render.MaxPoints > maxRenderPoints {
		add(c.errorf("render.max-points", "at most %d (8 bytes each, held in memory per request), got %d", maxRenderPoints, c.Render.MaxPoints))
	}
	if strings.ContainsAny(c.HTTP.Token, " \t\r\n") {
		add(c.errorf("http.token", "must not contain white space"))
	}
	if c.Raw.Table != "" && c.Raw.Interval == "" {
		add(c.errorf("raw.interval", "needed with raw.table"))
	}
	if c.Limits.MaxDatagram > 65535 {
		add(c.errorf("limits.max-datagram", "%d is over 65535, the largest UDP payload", c.Limits.MaxDatagram))
	}
	positive("limits.max-connections", int64(c.Limits.MaxConnections))
	positive("limits.read-timeout", int64(c.Limits.ReadTimeout))
	positive("limits.full-read-timeout", int64(c.Limits.FullReadTimeout))
	positive("limits.max-datagram", int64(c.Limits.MaxDatagram))
	if err := c.IngestLimits().Validate(); err != nil {
		add(c.errorf("limits", "%v", err))
	}
	for i, d := range c.DS {
		key := fmt.Sprintf("ds[%d]", i)
		rc, err := d.ruleConfig()
		if err != nil {
			add(c.errorf(key, "%v", err))
			continue
		}
		if _, err := rra.ParseRule(rc); err != nil {
			add(c.errorf(key, "%v", err))
		}
	}
	if c.Raw.Table == "" && len(c.DS) == 0 {
		add(c.errorf("ds", "nothing would store points: give [[ds]] sections or a [raw] table"))
	}
	return errors.Join(errs...)
}

// Rules parses the [[ds]] sections into the rules the sink applies.
func (c *Config) Rules() ([]rra.Rule, error) {
	rcs := make([]rra.RuleConfig, len(c.DS))
	for i, d := range c.DS {
		rc, err := d.ruleConfig()
		if err != nil {
			return nil, c.errorf(fmt.Sprintf("ds[%d]", i), "%v", err)
		}
		rcs[i] = rc
	}
	rules, err := rra.ParseRules(rcs)
	if err != nil {
		return nil, c.errorf("ds", "%v", err)
	}
	return rules, nil
}

func (d DSConfig) ruleConfig() (rra.RuleConfig, error) {
	if len(d.Archives) > 0 && len(d.RRAs) > 0 {
		return rra.RuleConfig{}, errors.New("give archives or rras, not both")
	}
	rc := rra.RuleConfig{Regexp: d.Regexp, Consolidation: d.Consolidation, Step: d.Step, Heartbeat: d.Heartbeat,
		Aggregation: d.Aggregation, XFF: d.XFF, RRAs: d.Archives}
	if len(d.RRAs) > 0 {
		rc.RRAs = d.RRAs
	}
	return rc, nil
}

// IngestLimits returns the parser limits of c's [limits] section.
func (c *Config) IngestLimits() ingest.Limits {
	l := ingest.DefaultLimits()
	l.MaxLineBytes = int(min(c.Limits.MaxLine, 1<<40))
	l.MaxNameBytes = int(min(c.Limits.MaxName, 1<<40))
	l.MaxTags = c.Limits.MaxTags
	l.MaxTagBytes = int(min(c.Limits.MaxTag, 1<<40))
	l.MaxPoints = c.Limits.MaxPoints
	l.MaxFrameBytes = int(min(c.Limits.MaxPickleFrame, 1<<40))
	l.MaxBodyBytes = int(min(c.Limits.MaxBody, 1<<40))
	l.MaxDecodedBytes = int(min(c.Limits.MaxDecoded, 1<<40))
	l.MaxInternBytes = int(min(c.Limits.ParserCache, 1<<40))
	l.AllowUTF8 = c.Limits.UTF8Names
	return l
}

// statsdConfig maps the [statsd] section to the aggregator's Config.
func (c *Config) statsdConfig() statsd.Config {
	s := statsd.DefaultConfig()
	sc := c.StatsD
	s.FlushInterval = time.Duration(sc.FlushInterval)
	s.Percentiles = sc.Percentiles
	s.Prefix, s.CounterPrefix, s.TimerPrefix, s.GaugePrefix, s.SetPrefix, s.Suffix =
		sc.Prefix, sc.CounterPrefix, sc.TimerPrefix, sc.GaugePrefix, sc.SetPrefix, sc.Suffix
	s.DeleteCounters, s.DeleteTimers, s.DeleteSets, s.DeleteGauges = sc.DeleteIdle, sc.DeleteIdle, sc.DeleteIdle, sc.DeleteIdle
	s.MaxSeries, s.MaxSamples = sc.MaxSeries, sc.MaxSamples
	return s
}
