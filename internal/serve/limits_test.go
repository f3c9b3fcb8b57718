package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/ingest/remotewrite"
)

// TestMalformedGraphite sends a corpus of bad lines between good ones:
// every bad line is counted by kind, the good ones are stored, nothing
// crashes, and the log holds one line for the first refusal, not one per
// refusal.
func TestMalformedGraphite(t *testing.T) {
	ts := startServer(t, nil, func(c *Config) { c.Limits.MaxLine = 1 << 10 })
	corpus := strings.Join([]string{
		"",
		"   ",
		"a.b NaN 1700000000",
		"a.b 1e400 1700000000",
		"a.b inf",
		"a.b 1 notatime",
		"a.b 1 99999999999999999999",
		"a.b 1 253402300800",
		"a.b c d e",
		"lonely",
		"bad\x01name 1 1700000000",
		"good.one 1 1700000000",
		strings.Repeat("x", 5000) + " 1 1700000000", // over max-line
		"good.two 2 1700000001",
	}, "\n") + "\n"
	sendTCP(t, ts.addrs.GraphiteTCP, []byte(corpus))
	eventually(t, "connection served", func() bool {
		return ts.metric("points_received_total", map[string]string{"protocol": protoGraphiteTCP}) == 2 &&
			ts.metric("connections", map[string]string{"protocol": protoGraphiteTCP}) == 0
	})
	for kind, want := range map[string]float64{"value": 3, "timestamp": 3, "syntax": 2, "name": 1, "limit": 1} {
		if got := ts.metric("parse_errors_total", map[string]string{"protocol": protoGraphiteTCP, "kind": kind}); got != want {
			t.Errorf("%s errors: %v, want %v", kind, got, want)
		}
	}
	if got := ts.sink.points(); len(got) != 2 || got[0].Name != "good.one" || got[1].Name != "good.two" {
		t.Errorf("stored %+v", got)
	}
	if n := strings.Count(ts.logs.String(), `msg="refused input"`); n != 1 {
		t.Errorf("%d refusal log lines, want 1 (rate-limited):\n%s", n, ts.logs.String())
	}
	ts.stop()
	if !strings.Contains(ts.logs.String(), "count=9") {
		t.Errorf("no summary of the 9 refusals not logged one by one:\n%s", ts.logs.String())
	}
}

func TestMalformedPickle(t *testing.T) {
	ts := startServer(t, nil, nil)
	p := readPickle(t)
	frame := append(pickleFrame(p), p...)
	// A frame that runs code when Python loads it: os.system("echo").
	evil := []byte("cos\nsystem\n(S'echo'\ntR.")
	var stream []byte
	stream = append(stream, pickleFrame(p[:50])...) // truncated pickle
	stream = append(stream, p[:50]...)
	stream = append(stream, pickleFrame(evil)...)
	stream = append(stream, evil...)
	stream = append(stream, frame...)                     // still in sync: stored
	stream = binary.BigEndian.AppendUint32(stream, 1<<30) // over max-pickle-frame: closes
	stream = append(stream, frame...)                     // never read
	sendTCP(t, ts.addrs.Pickle, stream)
	eventually(t, "connection served", func() bool {
		return ts.metric("parse_errors_total", map[string]string{"protocol": protoPickle}) == 3 &&
			ts.metric("connections", map[string]string{"protocol": protoPickle}) == 0
	})
	for kind, want := range map[string]float64{"syntax": 1, "unsupported": 1, "limit": 1} {
		if got := ts.metric("parse_errors_total", map[string]string{"protocol": protoPickle, "kind": kind}); got != want {
			t.Errorf("%s errors: %v, want %v", kind, got, want)
		}
	}
	if got := ts.sink.len(); got != 4 {
		t.Errorf("%d points stored, want the 4 of the one good frame", got)
	}

	// A connection closed within a frame.
	sendTCP(t, ts.addrs.Pickle, frame[:len(frame)-3])
	eventually(t, "truncated frame counted", func() bool {
		return ts.metric("parse_errors_total", map[string]string{"protocol": protoPickle, "kind": "syntax"}) == 2
	})
}

func TestMalformedHTTP(t *testing.T) {
	ts := startServer(t, nil, func(c *Config) {
		c.Limits.MaxBody = 4 << 10
		c.Limits.MaxDecoded = 64 << 10
	})
	good := remoteWriteBody([]remotewrite.Series{{Labels: []ingest.Tag{{Key: "__name__", Value: "up"}},
		Samples: []remotewrite.Sample{{Value: 1, Time: 1700000000000}}}})
	// A snappy block announcing 1 GiB, in a few bytes.
	bomb := binary.AppendUvarint(nil, 1<<30)
	bomb = append(bomb, 0x00, 'x')
	for _, c := range []struct {
		name, path string
		body       []byte
		want       int
	}{
		{"not snappy", "/api/v1/write", []byte("hello"), http.StatusBadRequest},
		{"invalid protobuf", "/api/v1/write", snappy.Encode(nil, []byte{0xff, 0xff, 0xff}), http.StatusBadRequest},
		{"truncated", "/api/v1/write", good[:len(good)-2], http.StatusBadRequest},
		{"snappy bomb", "/api/v1/write", bomb, http.StatusRequestEntityTooLarge},
		{"oversized remote write", "/api/v1/write", bytes.Repeat([]byte{0}, 5<<10), http.StatusRequestEntityTooLarge},
		{"oversized influx", "/write", bytes.Repeat([]byte("m v=1\n"), 1<<10), http.StatusRequestEntityTooLarge},
		{"empty influx", "/write", nil, http.StatusNoContent},
		{"influx NaN", "/write?precision=s", []byte("m v=NaN 1\n"), http.StatusBadRequest},
		{"influx huge", "/write?precision=s", []byte("m v=1e400 1\nm v=9223372036854775808i 1\n"), http.StatusBadRequest},
		{"influx bad time", "/write?precision=s", []byte("m v=1 99999999999999999\n"), http.StatusBadRequest},
		{"good", "/api/v1/write", good, http.StatusNoContent},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		code, body := post(t, ts, c.path, c.body, nil)
		runtime.ReadMemStats(&after)
		if code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, code, body, c.want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
			t.Errorf("%s: %d bytes allocated", c.name, alloc)
		}
	}
	if got := ts.sink.len(); got != 1 {
		t.Errorf("%d points stored, want 1", got)
	}
	if got := ts.metric("parse_errors_total", map[string]string{"protocol": protoRemoteWrite, "kind": "limit"}); got != 2 {
		t.Errorf("remote-write limit refusals %v, want 2", got)
	}
	// The body is refused from its announced length, before it is read:
	// the request's head alone gets the answer (a client that went on
	// sending the gigabyte would see the connection close).
	c, err := net.Dial("tcp", ts.addrs.HTTP)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /write HTTP/1.1\r\nHost: pgts\r\nContent-Length: %d\r\n\r\n", 1<<30)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("announced 1 GiB: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("announced 1 GiB: %s", resp.Status)
	}
}

func TestOversizedDatagram(t *testing.T) {
	ts := startServer(t, nil, func(c *Config) { c.Limits.MaxDatagram = 100 })
	c := dial(t, "udp", ts.addrs.GraphiteUDP)
	c.Write([]byte(strings.Repeat("a.b 1 1700000000\n", 10))) // 170 bytes
	c.Write([]byte("a.b 1 1700000000\n"))
	eventually(t, "the small datagram", func() bool { return ts.sink.len() == 1 })
	if got := ts.metric("parse_errors_total", map[string]string{"protocol": protoGraphiteUDP, "kind": "limit"}); got != 1 {
		t.Errorf("limit refusals %v, want 1", got)
	}
}

// TestUDPDrops: a full sink refuses a datagram's points; they are dropped
// and counted, and the reader goes on.
func TestUDPDrops(t *testing.T) {
	sink := &memSink{full: true}
	ts := startServer(t, sink, nil)
	c := dial(t, "udp", ts.addrs.GraphiteUDP)
	for range 3 {
		if _, err := c.Write([]byte("a.b 1 1700000000\na.c 2 1700000000\n")); err != nil {
			t.Fatal(err)
		}
	}
	drops := map[string]string{"protocol": protoGraphiteUDP, "reason": "sink_full"}
	eventually(t, "6 drops", func() bool { return ts.metric("points_dropped_total", drops) == 6 })
	sink.mu.Lock()
	sink.full = false
	sink.mu.Unlock()
	c.Write([]byte("a.d 3 1700000000\n"))
	eventually(t, "1 point", func() bool { return sink.len() == 1 })
	if !strings.Contains(ts.logs.String(), "dropped points") {
		t.Errorf("drops not logged:\n%s", ts.logs.String())
	}
}

// TestBackpressure: while the sink blocks, the TCP reader stops reading,
// so the sender's writes stall and the daemon holds at most one batch;
// once the sink takes points again, everything read is stored.
func TestBackpressure(t *testing.T) {
	sink := &memSink{block: make(chan struct{}), entered: make(chan struct{}, 1)}
	ts := startServer(t, sink, nil)
	c := dial(t, "tcp", ts.addrs.GraphiteTCP)
	line := "bp.x 1 1700000000\n"
	data := []byte(strings.Repeat(line, (64<<20)/len(line)))
	writeErr := make(chan error, 1)
	var written int
	go func() {
		c.SetWriteDeadline(time.Now().Add(3 * time.Second))
		n, err := c.Write(data)
		written = n
		writeErr <- err
	}()
	<-sink.entered
	err := <-writeErr
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("writing 64 MiB to a blocked daemon: %v, want a timeout", err)
	}
	if written > 32<<20 {
		t.Errorf("%d bytes written: the daemon kept reading", written)
	}
	waiting := ts.metric("sink_waiting_points", map[string]string{"protocol": protoGraphiteTCP})
	received := ts.metric("points_received_total", map[string]string{"protocol": protoGraphiteTCP})
	if waiting == 0 || waiting > batchPoints || received > batchPoints {
		t.Errorf("blocked: %v points waiting, %v received; want at most one batch of %d", waiting, received, batchPoints)
	}
	close(sink.block)
	c.Close()
	eventually(t, "connection served", func() bool {
		return ts.metric("connections", map[string]string{"protocol": protoGraphiteTCP}) == 0
	})
	received = ts.metric("points_received_total", map[string]string{"protocol": protoGraphiteTCP})
	if got := sink.len(); float64(got) != received || got < written/len(line)-1 {
		t.Errorf("stored %d points, received %v, %d lines written", got, received, written/len(line))
	}
}

// TestMaxConnectionsQueues: a sender beyond max-connections is not
// accepted and closed (its points lost): it waits, its writes held by the
// kernel, while idle connections are closed after full-read-timeout; then
// its points are stored. The wait is counted and logged.
func TestMaxConnectionsQueues(t *testing.T) {
	ts := startServer(t, nil, func(c *Config) {
		c.Limits.MaxConnections = 2
		c.Limits.FullReadTimeout = Duration(100 * time.Millisecond)
	})
	for i := range 2 {
		idle := dial(t, "tcp", ts.addrs.GraphiteTCP)
		fmt.Fprintf(idle, "idle.c%d 1 1700000000\n", i)
	}
	eventually(t, "idle connections served", func() bool { return ts.sink.len() == 2 })
	late := dial(t, "tcp", ts.addrs.GraphiteTCP)
	if _, err := late.Write([]byte("late.c 1 1700000000\n")); err != nil {
		t.Fatal(err)
	}
	late.(*net.TCPConn).CloseWrite()
	eventually(t, "the waiting sender's point stored", func() bool { return len(ts.sink.byName("late.c")) == 1 })
	if got := ts.metric("connections_queued_total", map[string]string{"protocol": protoGraphiteTCP}); got != 1 {
		t.Errorf("queued %v, want 1", got)
	}
	ts.stop()
	if !strings.Contains(ts.logs.String(), "connection limit reached") {
		t.Errorf("the wait was not logged:\n%s", ts.logs.String())
	}
}

// TestShutdownDrains: Shutdown ends idle connections at once, stores what
// they sent, flushes StatsD and closes the sink.
func TestShutdownDrains(t *testing.T) {
	ts := startServer(t, nil, nil)
	g := dial(t, "tcp", ts.addrs.GraphiteTCP)
	g.Write([]byte("a.b 1 1700000000\n"))
	s := dial(t, "tcp", ts.addrs.StatsDTCP)
	s.Write([]byte("hits:7|c\n"))
	eventually(t, "both read", func() bool {
		return ts.sink.len() == 1 && ts.metric("points_received_total", map[string]string{"protocol": protoStatsDTCP}) == 1
	})
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := ts.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	ts.once.Do(func() {})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown took %v with idle connections open", d)
	}
	if got := ts.sink.byName("stats.counters.hits.count"); len(got) != 1 || got[0].Value != 7 {
		t.Errorf("statsd not flushed at shutdown: %+v", got)
	}
	if !ts.sink.closed {
		t.Error("sink not closed")
	}
	g.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := g.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("connection after shutdown: %v, want EOF", err)
	}
	if _, err := net.Dial("tcp", ts.addrs.GraphiteTCP); err == nil {
		t.Error("still accepting after shutdown")
	}
}

// TestShutdownTimeout: a sink that never takes the points makes Shutdown
// give up when its context ends, counting them as dropped.
func TestShutdownTimeout(t *testing.T) {
	sink := &memSink{block: make(chan struct{}), entered: make(chan struct{}, 1)}
	ts := startServer(t, sink, func(c *Config) { c.StatsD.TCP, c.StatsD.UDP = "", "" })
	c := dial(t, "tcp", ts.addrs.GraphiteTCP)
	c.Write([]byte("a.b 1 1700000000\n"))
	<-sink.entered
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := ts.Shutdown(ctx)
	ts.once.Do(func() {})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("shutdown: %v, want a deadline error", err)
	}
	if got := ts.metric("points_dropped_total", map[string]string{"reason": "sink_error"}); got != 1 {
		t.Errorf("dropped %v, want 1", got)
	}
}

func TestStartFailsOnBusyPort(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cfg := testConfig()
	cfg.Pickle.TCP = busy.Addr().String()
	srv, err := New(cfg, &memSink{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err == nil || !strings.Contains(err.Error(), "pickle") {
		t.Errorf("start on a busy port: %v", err)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

func TestIdleTimeout(t *testing.T) {
	ts := startServer(t, nil, func(c *Config) { c.Limits.ReadTimeout = Duration(100 * time.Millisecond) })
	c := dial(t, "tcp", ts.addrs.GraphiteTCP)
	c.Write([]byte("a.b 1 1700000000\n"))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("idle connection: %v, want EOF (closed by the daemon)", err)
	}
	if got := ts.sink.len(); got != 1 {
		t.Errorf("%d points stored, want 1", got)
	}
}
