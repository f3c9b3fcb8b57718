package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/ingest/statsd"
	"github.com/pgts/pgts/internal/rra"
)

// batchPoints is the most points a TCP connection parses before handing
// them to the sink, and so the most it holds while the sink applies
// backpressure.
const batchPoints = 1024

// Options are the services a Server uses besides its Config.
type Options struct {
	// Logger receives the daemon's logs; nil discards them.
	Logger *slog.Logger
	// Registerer receives the receivers' metrics; nil leaves them
	// unregistered.
	Registerer prometheus.Registerer
	// Gatherer is what /metrics serves; nil makes /metrics 404.
	Gatherer prometheus.Gatherer
	// Extra, when not nil, serves every HTTP path the daemon's own
	// endpoints do not take (the Graphite render API), behind the token.
	Extra http.Handler
	// Now is the clock of points sent without a time and of StatsD
	// flushes; nil is time.Now.
	Now func() time.Time
}

// Addrs are the addresses a started Server listens on, "" for a listener
// the configuration disables. With a port 0 in the configuration they tell
// the port the system chose.
type Addrs struct {
	GraphiteTCP, GraphiteUDP, Pickle, StatsDUDP, StatsDTCP, HTTP string
}

// Server runs the receivers of one Config, feeding one Sink. Start binds
// and starts them; Shutdown drains them, flushes StatsD and closes the
// sink. A Server runs once. Its methods are safe for concurrent use.
type Server struct {
	cfg     Config
	limits  ingest.Limits
	sink    Sink
	log     *slog.Logger
	now     func() time.Time
	m       *metrics
	gather  prometheus.Gatherer
	extra   http.Handler
	errLogs map[string]*errLog
	dropLog *errLog
	connLog *errLog        // senders waiting for max-connections
	statsd  *aggregator    // nil when no StatsD listener is configured
	slots   chan *httpSlot // free HTTP write slots
	// The parsers of the UDP receivers, each used by its socket's one
	// reading goroutine.
	udpGraphite *graphiteBatch
	udpStatsD   *statsdBatch

	// stopCtx is cancelled when Shutdown stops waiting for the drain:
	// receivers blocked in the sink give up then.
	stopCtx    context.Context
	stopCancel context.CancelFunc
	closing    chan struct{} // closed when Shutdown starts
	wg         sync.WaitGroup
	flushWG    sync.WaitGroup

	mu        sync.Mutex
	started   bool
	draining  bool
	drainFlag atomic.Bool // draining, for extendDeadline without the lock
	listeners []net.Listener
	packets   []net.PacketConn
	conns     map[net.Conn]string // protocol
	httpSrv   *http.Server
	// full[proto] is set while a sender waits for one of the protocol's
	// max-connections: its connections then time out after
	// full-read-timeout. Built by New, read-only after.
	full  map[string]*atomic.Bool
	addrs Addrs
}

// New returns a Server for cfg, which it validates, feeding sink. The
// Server owns sink from now on: Shutdown closes it.
func New(cfg Config, sink Sink, opt Options) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if sink == nil {
		return nil, errors.New("serve: no sink")
	}
	s := &Server{cfg: cfg, limits: cfg.IngestLimits(), sink: sink, log: opt.Logger, now: opt.Now, gather: opt.Gatherer, extra: opt.Extra,
		closing: make(chan struct{}), conns: map[net.Conn]string{}, errLogs: map[string]*errLog{}, full: map[string]*atomic.Bool{}}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.now == nil {
		s.now = time.Now
	}
	m, err := newMetrics(opt.Registerer)
	if err != nil {
		return nil, err
	}
	s.m = m
	period := time.Duration(cfg.LogInterval)
	for _, p := range allProtocols {
		s.errLogs[p] = newErrLog(s.log, p, "refused input", period, s.now)
		s.full[p] = &atomic.Bool{}
	}
	s.connLog = newErrLog(s.log, "all", "connection limit reached: a sender waits while idle connections close", period, s.now)
	s.dropLog = newErrLog(s.log, "all", "dropped points", period, s.now)
	if cfg.StatsD.UDP != "" || cfg.StatsD.TCP != "" {
		agg, err := statsd.NewAggregator(cfg.statsdConfig())
		if err != nil {
			return nil, fmt.Errorf("statsd: %w", err)
		}
		s.statsd = &aggregator{agg: agg}
	}
	s.udpGraphite = s.newGraphiteBatch(protoGraphiteUDP)
	s.udpStatsD = s.newStatsDBatch(protoStatsDUDP)
	s.slots = make(chan *httpSlot, cfg.HTTP.MaxConcurrent)
	for range cfg.HTTP.MaxConcurrent {
		s.slots <- &httpSlot{}
	}
	s.stopCtx, s.stopCancel = context.WithCancel(context.Background())
	return s, nil
}

// Start binds every configured listener and starts serving. When a
// listener cannot be bound, it closes those already bound and returns the
// error; the Server cannot be started again, but Shutdown still closes the
// sink.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.draining {
		return errors.New("serve: started twice or after Shutdown")
	}
	s.started = true
	type tcpRecv struct {
		proto, addr string
		out         *string
		handle      func(net.Conn)
	}
	type udpRecv struct {
		proto, addr string
		out         *string
		handle      func(datagram []byte, from net.Addr)
	}
	tcps := []tcpRecv{
		{protoGraphiteTCP, s.cfg.Graphite.TCP, &s.addrs.GraphiteTCP, s.serveGraphiteConn},
		{protoPickle, s.cfg.Pickle.TCP, &s.addrs.Pickle, s.servePickleConn},
		{protoStatsDTCP, s.cfg.StatsD.TCP, &s.addrs.StatsDTCP, s.serveStatsDConn},
	}
	udps := []udpRecv{
		{protoGraphiteUDP, s.cfg.Graphite.UDP, &s.addrs.GraphiteUDP, s.handleGraphiteDatagram},
		{protoStatsDUDP, s.cfg.StatsD.UDP, &s.addrs.StatsDUDP, s.handleStatsDDatagram},
	}
	var lc net.ListenConfig
	fail := func(what, addr string, err error) error {
		for _, l := range s.listeners {
			l.Close()
		}
		for _, p := range s.packets {
			p.Close()
		}
		s.listeners, s.packets = nil, nil
		return fmt.Errorf("listening for %s on %q: %w", what, addr, err)
	}
	lns := make([]net.Listener, len(tcps))
	for i, r := range tcps {
		if r.addr == "" {
			continue
		}
		ln, err := lc.Listen(context.Background(), "tcp", r.addr)
		if err != nil {
			return fail(r.proto, r.addr, err)
		}
		lns[i] = ln
		s.listeners = append(s.listeners, ln)
		*r.out = ln.Addr().String()
	}
	pcs := make([]net.PacketConn, len(udps))
	for i, r := range udps {
		if r.addr == "" {
			continue
		}
		pc, err := lc.ListenPacket(context.Background(), "udp", r.addr)
		if err != nil {
			return fail(r.proto, r.addr, err)
		}
		pcs[i] = pc
		s.packets = append(s.packets, pc)
		*r.out = pc.LocalAddr().String()
	}
	var httpLn net.Listener
	if s.cfg.HTTP.Addr != "" {
		ln, err := lc.Listen(context.Background(), "tcp", s.cfg.HTTP.Addr)
		if err != nil {
			return fail("http", s.cfg.HTTP.Addr, err)
		}
		httpLn = ln
		s.addrs.HTTP = ln.Addr().String()
	}

	for i, r := range tcps {
		if lns[i] != nil {
			s.wg.Add(1)
			go s.acceptLoop(lns[i], r.proto, r.handle)
			s.log.Info("listening", "receiver", r.proto, "addr", lns[i].Addr().String())
		}
	}
	for i, r := range udps {
		if pcs[i] != nil {
			s.wg.Add(1)
			go s.readDatagrams(pcs[i], r.proto, r.handle)
			s.log.Info("listening", "receiver", r.proto, "addr", pcs[i].LocalAddr().String())
		}
	}
	if httpLn != nil {
		s.httpSrv = &http.Server{
			Handler:           s.httpHandler(),
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       time.Duration(s.cfg.HTTP.ReadTimeout),
			IdleTimeout:       2 * time.Minute,
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.httpSrv.Serve(httpLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("http server stopped", "err", err)
			}
		}()
		s.log.Info("listening", "receiver", "http", "addr", httpLn.Addr().String())
	}
	if s.statsd != nil {
		s.flushWG.Add(1)
		go s.statsdLoop()
	}
	return nil
}

// Addrs returns the addresses the Server listens on, once started.
func (s *Server) Addrs() Addrs {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addrs
}

// SetRules hands new [[ds]] rules to the sink (on SIGHUP); series seen
// from now on follow them.
func (s *Server) SetRules(rules []rra.Rule) error {
	if err := s.sink.SetRules(rules); err != nil {
		s.m.reloads.WithLabelValues("error").Inc()
		return fmt.Errorf("setting rules: %w", err)
	}
	s.m.reloads.WithLabelValues("ok").Inc()
	s.log.Info("rules reloaded", "rules", len(rules))
	return nil
}

// Shutdown stops the Server: it closes the listeners, makes open
// connections stop reading, waits until what they had read is in the sink,
// flushes StatsD a last time and closes the sink. When ctx is done before
// the drain ends, receivers still waiting on the sink give up (their points
// are counted as dropped) and Shutdown returns ctx's error along with any
// other. Shutdown returns once every goroutine of the Server has ended.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.draining {
		s.mu.Unlock()
		return errors.New("serve: shut down twice")
	}
	s.draining = true
	s.drainFlag.Store(true)
	close(s.closing)
	for _, l := range s.listeners {
		l.Close()
	}
	for _, p := range s.packets {
		p.Close()
	}
	past := time.Unix(1, 0)
	for c := range s.conns {
		c.SetReadDeadline(past)
	}
	httpSrv := s.httpSrv
	s.mu.Unlock()

	var errs []error
	if httpSrv != nil {
		if err := httpSrv.Shutdown(ctx); err != nil {
			s.stopCancel()
			httpSrv.Close()
			errs = append(errs, fmt.Errorf("stopping http: %w", err))
		}
	}
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		s.stopCancel()
		<-done
		errs = append(errs, fmt.Errorf("draining receivers: %w", ctx.Err()))
	}
	s.flushWG.Wait()
	if s.statsd != nil {
		if err := s.FlushStatsD(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	for _, l := range s.errLogs {
		l.close()
	}
	s.dropLog.close()
	s.connLog.close()
	if err := s.sink.Close(ctx); err != nil {
		errs = append(errs, fmt.Errorf("closing storage: %w", err))
	}
	s.stopCancel()
	return errors.Join(errs...)
}

// add hands pts to the sink, waiting while it applies backpressure. On
// failure the points are counted as dropped and the error returned: the
// caller closes its connection or fails its request.
func (s *Server) add(ctx context.Context, proto string, pts []ingest.Point) error {
	if len(pts) == 0 {
		return nil
	}
	w := s.m.waiting.WithLabelValues(proto)
	w.Add(float64(len(pts)))
	err := s.sink.Add(ctx, pts)
	w.Sub(float64(len(pts)))
	if err != nil {
		s.m.dropped.WithLabelValues(proto, "sink_error").Add(float64(len(pts)))
		s.dropLog.report(proto, fmt.Errorf("storing points: %w", err), len(pts))
		return err
	}
	return nil
}

// tryAdd hands pts to the sink without waiting; what it refuses is
// dropped and counted.
func (s *Server) tryAdd(proto string, pts []ingest.Point) {
	if len(pts) == 0 {
		return
	}
	n, err := s.sink.TryAdd(pts)
	if n < len(pts) {
		s.m.dropped.WithLabelValues(proto, "sink_full").Add(float64(len(pts) - n))
		if err == nil {
			err = errors.New("storage accepted only part of a datagram")
		}
		s.dropLog.report(proto, err, len(pts)-n)
	}
}

// refuse counts n refusals by a parser, err being the first, and logs
// them under the rate limit.
func (s *Server) refuse(proto, from string, err error, n int) {
	if n <= 0 {
		return
	}
	s.m.refused.WithLabelValues(proto, kindLabel(err)).Add(float64(n))
	s.errLogs[proto].report(from, err, n)
}

// track registers an accepted connection so that Shutdown can stop it; it
// is false once Shutdown has started.
func (s *Server) track(c net.Conn, proto string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return false
	}
	s.conns[c] = proto
	return true
}

// hurryIdle gives every connection of proto at most full-read-timeout to
// send something (a busy one's next read gives it the same while the
// protocol is full): a waiting sender gets an idle connection's slot.
func (s *Server) hurryIdle(proto string) {
	d := time.Now().Add(time.Duration(s.cfg.Limits.FullReadTimeout))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.draining {
		return
	}
	for c, p := range s.conns {
		if p == proto {
			c.SetReadDeadline(d)
		}
	}
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// extendDeadline gives c another read timeout, unless the Server is
// draining, in which case reads fail at once. Shutdown sets draining before
// it sets the past deadline of every connection, so whichever of the two
// writes comes last, the connection ends up with a past deadline.
func (s *Server) extendDeadline(c net.Conn, proto string) {
	timeout := s.cfg.Limits.ReadTimeout
	if s.full[proto].Load() {
		timeout = min(timeout, s.cfg.Limits.FullReadTimeout)
	}
	c.SetReadDeadline(time.Now().Add(time.Duration(timeout)))
	if s.drainFlag.Load() {
		c.SetReadDeadline(time.Unix(1, 0))
	}
}

// deadlineReader reads from a connection, giving it a fresh read timeout
// before each read, so that a connection is closed after read-timeout
// without data, however long it has been streaming.
type deadlineReader struct {
	s     *Server
	c     net.Conn
	proto string
}

func (r deadlineReader) Read(p []byte) (int, error) {
	r.s.extendDeadline(r.c, r.proto)
	return r.c.Read(p)
}
