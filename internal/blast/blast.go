// Package blast sends synthetic metric points to a daemon over a real
// protocol, at a target rate, to measure what the daemon sustains.
//
// Glossary:
//
//	protocol  graphite (plaintext over TCP), statsd (counters over UDP),
//	          influx (line protocol over HTTP /write), remote-write
//	          (Prometheus remote write v1 over HTTP, snappy + protobuf)
//	series    N distinct names, prefix.0000000 … prefix.N-1, written in
//	          turn so every series gets a point every N/rate seconds
//	sent      points written to the socket or request body
//	acked     points the daemon acknowledged: an HTTP 2xx for the HTTP
//	          protocols; for TCP, points whose write returned without
//	          error (TCP has no acknowledgement); for UDP, datagrams sent
//
// The rate is held by a token bucket (golang.org/x/time/rate) refilled at
// Rate points per second; points go out in batches of BatchSize, so the
// achieved rate is exact over any window longer than a batch interval.
//
// Timestamps follow a virtual clock: point i of the run is stamped
// start + i/Rate (microseconds; Graphite gets fractional seconds, Influx
// microseconds, remote write milliseconds), so a series' points are
// strictly increasing in time and never share a timestamp, whatever the
// batch size, as long as Series/Rate is over a millisecond for remote write
// and over a second for Graphite (the daemon, like carbon, truncates
// Graphite timestamps to whole seconds; a series sent more often has points
// that share a second, and only the first is consolidated).
package blast

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/snappy"
	"golang.org/x/time/rate"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/ingest/remotewrite"
)

// Protocols lists the protocols Run speaks.
var Protocols = []string{"graphite", "statsd", "influx", "remote-write"}

// Config is one blast. Zero fields take DefaultConfig's values.
type Config struct {
	Protocol  string
	Addr      string        // host:port of the daemon's listener (HTTP protocols: of its HTTP port)
	Rate      float64       // points per second, > 0
	Series    int           // distinct series, ≥ 1
	Duration  time.Duration // how long to send; 0 means until ctx ends
	BatchSize int           // points per write or request
	Prefix    string        // series name prefix
	Token     string        // bearer token for the HTTP protocols
	Now       func() time.Time
	Logger    *slog.Logger
}

// DefaultConfig sends graphite plaintext to 127.0.0.1:2003 at 10,000
// points/s over 1,000 series for a minute.
func DefaultConfig() Config {
	return Config{Protocol: "graphite", Addr: "127.0.0.1:2003", Rate: 10000, Series: 1000, Duration: time.Minute,
		BatchSize: 1000, Prefix: "blast"}
}

// Validate checks the config.
func (c *Config) Validate() error {
	known := false
	for _, p := range Protocols {
		known = known || p == c.Protocol
	}
	switch {
	case !known:
		return fmt.Errorf("protocol %q: choose graphite, statsd, influx or remote-write", c.Protocol)
	case c.Addr == "":
		return errors.New("no address to send to")
	case !(c.Rate > 0) || c.Rate > 1e8 || math.IsInf(c.Rate, 0):
		return fmt.Errorf("rate %v: must be between 1 and 100,000,000 points/s", c.Rate)
	case c.Series < 1 || c.Series > 100_000_000:
		return fmt.Errorf("series %d: must be between 1 and 100,000,000", c.Series)
	case c.Duration < 0:
		return fmt.Errorf("duration %v: must not be negative", c.Duration)
	case c.BatchSize < 1 || c.BatchSize > 100_000:
		return fmt.Errorf("batch size %d: must be between 1 and 100,000", c.BatchSize)
	case c.Prefix == "":
		return errors.New("empty series prefix")
	}
	return ingest.ValidName(c.Prefix+".0", ingest.DefaultLimits())
}

// Stats counts what a blast did so far; safe to read while it runs.
type Stats struct {
	Sent    int64         `json:"sent"`
	Acked   int64         `json:"acked"`
	Errors  int64         `json:"errors"` // failed writes or requests
	Elapsed time.Duration `json:"-"`
	Seconds float64       `json:"seconds"`
}

// Rate returns acknowledged points per second.
func (s Stats) Rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Acked) / s.Elapsed.Seconds()
}

// Blaster runs one blast; Stats may be called from other goroutines.
type Blaster struct {
	cfg                  Config
	sent, acked, errs    atomic.Int64
	startNanos           atomic.Int64 // when Run started, Unix nanoseconds; 0 before
	next                 int          // next series index
	idx                  int64        // points encoded so far: the virtual clock
	t0                   int64        // start of the virtual clock, micros
	send                 func(ctx context.Context, batch []byte, n int) error
	closeFn              func() error
	buf                  []byte
	client               *http.Client
	conn                 net.Conn
	bw                   *bufio.Writer
	rwSeries             []remotewrite.Series
	rwBuf, rwCompressBuf []byte
}

// New checks cfg and prepares a blaster (it connects in Run).
func New(cfg Config) (*Blaster, error) {
	def := DefaultConfig()
	if cfg.BatchSize == 0 {
		cfg.BatchSize = def.BatchSize
	}
	if cfg.Prefix == "" {
		cfg.Prefix = def.Prefix
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Blaster{cfg: cfg}, nil
}

// Stats returns the counts so far.
func (b *Blaster) Stats() Stats {
	s := Stats{Sent: b.sent.Load(), Acked: b.acked.Load(), Errors: b.errs.Load()}
	if ns := b.startNanos.Load(); ns != 0 {
		s.Elapsed = time.Since(time.Unix(0, ns))
		s.Seconds = s.Elapsed.Seconds()
	}
	return s
}

// Run sends until the duration has passed or ctx ends (not an error), and
// returns the final counts. The send in flight when the duration ends is
// finished, so every point sent is either acknowledged or counted in a
// failed send. A connection that fails is re-dialled; Run gives up when ten
// sends in a row fail.
func (b *Blaster) Run(ctx context.Context) (Stats, error) {
	pace := ctx // ends the loop; sends use ctx
	if b.cfg.Duration > 0 {
		var cancel context.CancelFunc
		pace, cancel = context.WithTimeout(ctx, b.cfg.Duration)
		defer cancel()
	}
	if err := b.open(ctx); err != nil {
		return b.Stats(), err
	}
	defer b.closeFn() //nolint:errcheck // best effort at the end
	lim := rate.NewLimiter(rate.Limit(b.cfg.Rate), b.cfg.BatchSize)
	b.startNanos.Store(time.Now().UnixNano())
	b.t0 = b.cfg.Now().UnixMicro()
	failures := 0
	for {
		n := b.cfg.BatchSize
		if err := lim.WaitN(pace, n); err != nil {
			break // the duration is over or ctx ended
		}
		batch := b.encode(n)
		b.sent.Add(int64(n))
		if err := b.send(ctx, batch, n); err != nil {
			if ctx.Err() != nil {
				break
			}
			b.errs.Add(1)
			failures++
			b.cfg.Logger.Warn("send failed", "protocol", b.cfg.Protocol, "err", err)
			if failures >= 10 {
				return b.Stats(), fmt.Errorf("ten sends in a row failed; the last: %w", err)
			}
			continue
		}
		failures = 0
		b.acked.Add(int64(n))
	}
	if b.bw != nil {
		if err := b.bw.Flush(); err != nil {
			b.errs.Add(1)
		}
	}
	return b.Stats(), nil
}

func (b *Blaster) open(ctx context.Context) error {
	switch b.cfg.Protocol {
	case "graphite":
		b.send, b.closeFn = b.sendTCP, func() error {
			if b.conn != nil {
				return b.conn.Close()
			}
			return nil
		}
		return b.dial(ctx, "tcp")
	case "statsd":
		b.send, b.closeFn = b.sendUDP, func() error { return b.conn.Close() }
		return b.dial(ctx, "udp")
	default:
		b.client = &http.Client{Timeout: 30 * time.Second}
		b.send, b.closeFn = b.sendHTTP, func() error { b.client.CloseIdleConnections(); return nil }
		return nil
	}
}

func (b *Blaster) dial(ctx context.Context, network string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, b.cfg.Addr)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", b.cfg.Addr, err)
	}
	b.conn = c
	if network == "tcp" {
		b.bw = bufio.NewWriterSize(c, 64<<10)
	}
	return nil
}

// name appends the series name of index i.
func (b *Blaster) name(dst []byte, i int) []byte {
	dst = append(dst, b.cfg.Prefix...)
	dst = append(dst, '.')
	s := strconv.Itoa(i)
	for k := len(s); k < 7; k++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// value is a deterministic, varying value for series i at time t.
func value(i int, t int64) float64 { return float64((int64(i)*7+t)%1000) / 10 }

// encode renders the next n points in the protocol's wire form.
func (b *Blaster) encode(n int) []byte {
	buf := b.buf[:0]
	if b.cfg.Protocol == "remote-write" {
		b.rwSeries = b.rwSeries[:0]
	}
	for k := 0; k < n; k++ {
		i := b.next
		b.next = (b.next + 1) % b.cfg.Series
		us := b.t0 + int64(float64(b.idx)*1e6/b.cfg.Rate)
		b.idx++
		v := value(i, us/1e6)
		switch b.cfg.Protocol {
		case "graphite": // path value seconds.micros
			buf = b.name(buf, i)
			buf = append(buf, ' ')
			buf = strconv.AppendFloat(buf, v, 'f', -1, 64)
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, us/1e6, 10)
			buf = append(buf, '.')
			frac := strconv.AppendInt(nil, 1e6+us%1e6, 10)
			buf = append(buf, frac[1:]...)
			buf = append(buf, '\n')
		case "statsd": // name:1|c, one per line, datagrams split in sendUDP
			buf = b.name(buf, i)
			buf = append(buf, ":1|c\n"...)
		case "influx": // measurement,series=name value=v microseconds
			buf = append(buf, b.cfg.Prefix...)
			buf = append(buf, ",series="...)
			buf = b.name(buf, i)
			buf = append(buf, " value="...)
			buf = strconv.AppendFloat(buf, v, 'f', -1, 64)
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, us, 10)
			buf = append(buf, '\n')
		case "remote-write":
			name := string(b.name(nil, i))
			b.rwSeries = append(b.rwSeries, remotewrite.Series{
				Labels:  []ingest.Tag{{Key: "__name__", Value: "blast"}, {Key: "series", Value: name}},
				Samples: []remotewrite.Sample{{Value: v, Time: us / 1000}},
			})
		}
	}
	if b.cfg.Protocol == "remote-write" {
		b.rwBuf = remotewrite.AppendWriteRequest(b.rwBuf[:0], b.rwSeries)
		b.rwCompressBuf = snappy.Encode(b.rwCompressBuf[:cap(b.rwCompressBuf)], b.rwBuf)
		return b.rwCompressBuf
	}
	b.buf = buf
	return buf
}

func (b *Blaster) sendTCP(ctx context.Context, batch []byte, _ int) error {
	if b.conn == nil {
		if err := b.dial(ctx, "tcp"); err != nil {
			return err
		}
	}
	if dl, ok := ctx.Deadline(); ok {
		b.conn.SetWriteDeadline(dl) //nolint:errcheck // a failed deadline shows as a failed write
	}
	if _, err := b.bw.Write(batch); err != nil {
		b.conn.Close()
		b.conn, b.bw = nil, nil
		return err
	}
	return nil
}

// maxDatagram keeps StatsD datagrams under a typical MTU.
const maxDatagram = 1400

func (b *Blaster) sendUDP(_ context.Context, batch []byte, _ int) error {
	for len(batch) > 0 {
		cut := len(batch)
		if cut > maxDatagram {
			cut = bytes.LastIndexByte(batch[:maxDatagram], '\n') + 1
			if cut <= 0 {
				return errors.New("a statsd line longer than a datagram")
			}
		}
		if _, err := b.conn.Write(bytes.TrimSuffix(batch[:cut], []byte{'\n'})); err != nil {
			return err
		}
		batch = batch[cut:]
	}
	return nil
}

func (b *Blaster) sendHTTP(ctx context.Context, batch []byte, _ int) error {
	url := "http://" + b.cfg.Addr + "/write?precision=us"
	if b.cfg.Protocol == "remote-write" {
		url = "http://" + b.cfg.Addr + "/api/v1/write"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(batch))
	if err != nil {
		return err
	}
	if b.cfg.Protocol == "remote-write" {
		req.Header.Set("Content-Encoding", "snappy")
		req.Header.Set("Content-Type", "application/x-protobuf")
		req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	} else {
		req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	}
	if b.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+b.cfg.Token)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s %s", url, resp.Status, bytes.TrimSpace(body))
	}
	return nil
}
