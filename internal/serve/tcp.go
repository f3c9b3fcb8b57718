package serve

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"time"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/ingest/graphite"
	"github.com/pgts/pgts/internal/ingest/statsd"
)

// acceptLoop accepts connections on ln until it is closed, serving each in
// its own goroutine with handle, at most max-connections at once. A
// connection beyond that waits, never closed: the loop accepts nothing
// more (later senders wait in the kernel's listen backlog, and see a slow
// connect) until a slot frees, the listener's connections time out after
// full-read-timeout meanwhile, and the wait is counted and logged.
func (s *Server) acceptLoop(ln net.Listener, proto string, handle func(net.Conn)) {
	defer s.wg.Done()
	slots := make(chan struct{}, s.cfg.Limits.MaxConnections)
	conns := s.m.conns.WithLabelValues(proto)
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors, say: wait a little rather than spin.
			s.log.Warn("accepting a connection", "receiver", proto, "err", err)
			t := time.NewTimer(100 * time.Millisecond)
			select {
			case <-t.C:
			case <-s.closing:
				t.Stop()
				return
			}
			continue
		}
		if !s.takeSlot(slots, proto, c) {
			c.Close()
			return
		}
		if !s.track(c, proto) {
			c.Close()
			<-slots
			continue
		}
		conns.Inc()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() {
				c.Close()
				s.untrack(c)
				conns.Dec()
				<-slots
			}()
			handle(c)
		}()
	}
}

// takeSlot takes one of slots for c, waiting while there is none: the
// protocol's connections then time out after full-read-timeout (see
// acceptLoop). It is false when Shutdown started meanwhile.
func (s *Server) takeSlot(slots chan struct{}, proto string, c net.Conn) bool {
	select {
	case slots <- struct{}{}:
		return true
	default:
	}
	s.m.connQueued.WithLabelValues(proto).Inc()
	s.connLog.report(c.RemoteAddr().String(), fmt.Errorf("%s has max-connections (%d) open; idle ones close after %v",
		proto, cap(slots), time.Duration(s.cfg.Limits.FullReadTimeout)), 1)
	full := s.full[proto]
	full.Store(true)
	defer full.Store(false)
	s.hurryIdle(proto)
	select {
	case slots <- struct{}{}:
		return true
	case <-s.closing:
		return false
	}
}

// lineBatch is what a line-protocol connection does with its lines: parse
// one into a batch, and hand the batch on.
type lineBatch interface {
	// parse parses one line, without its newline.
	parse(line []byte, from string)
	// size is the number of entries the batch holds.
	size() int
	// flush hands the batch on and empties it; an error ends the
	// connection.
	flush() error
}

// serveLines reads newline-separated lines from c into b. Lines over
// max-line are refused and skipped. The batch is handed on when it holds
// batchPoints entries and whenever the connection has nothing more
// buffered, so that a slow sender's points are not held back; while the
// sink blocks, nothing more is read from c (backpressure). A connection
// that sends nothing for read-timeout is closed.
func (s *Server) serveLines(c net.Conn, proto string, b lineBatch) {
	from := c.RemoteAddr().String()
	max := s.limits.MaxLineBytes
	br := bufio.NewReaderSize(deadlineReader{s, c, proto}, max+2) // the line, "\r\n"
	for {
		if br.Buffered() == 0 && b.size() > 0 && b.flush() != nil {
			return
		}
		line, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			b.parse(trimEOL(line), from)
		case errors.Is(err, bufio.ErrBufferFull):
			n := len(line)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				n += len(line)
			}
			s.refuse(proto, from, ingest.LimitError("line", n, max), 1)
			if err != nil {
				b.flush()
				return
			}
		default:
			// io.EOF ends a last line without its newline; a timeout
			// (idle, or draining) or a reset leaves an incomplete line,
			// which is not parsed.
			if errors.Is(err, io.EOF) && len(line) > 0 {
				b.parse(trimEOL(line), from)
			}
			b.flush()
			return
		}
		if b.size() >= batchPoints && b.flush() != nil {
			return
		}
	}
}

func trimEOL(line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'})
}

// graphiteBatch parses Graphite plaintext lines into points for the sink.
type graphiteBatch struct {
	s     *Server
	proto string
	p     *graphite.Parser
	pts   []ingest.Point
}

func (s *Server) newGraphiteBatch(proto string) *graphiteBatch {
	p, err := graphite.NewParser(s.limits, s.now)
	if err != nil {
		panic(err) // the limits were validated by New
	}
	return &graphiteBatch{s: s, proto: proto, p: p}
}

func (g *graphiteBatch) parse(line []byte, from string) {
	var err error
	if g.pts, err = g.p.AppendLine(g.pts, line); err != nil {
		g.s.refuse(g.proto, from, err, 1)
	}
}

func (g *graphiteBatch) size() int { return len(g.pts) }

func (g *graphiteBatch) flush() error {
	g.s.m.received.WithLabelValues(g.proto).Add(float64(len(g.pts)))
	err := g.s.add(g.s.stopCtx, g.proto, g.pts)
	g.pts = g.pts[:0]
	return err
}

func (s *Server) serveGraphiteConn(c net.Conn) {
	s.serveLines(c, protoGraphiteTCP, s.newGraphiteBatch(protoGraphiteTCP))
}

// statsdBatch parses StatsD lines into metrics for the aggregator.
type statsdBatch struct {
	s     *Server
	proto string
	p     *statsd.Parser
	ms    []statsd.Metric
	from  string
}

func (s *Server) newStatsDBatch(proto string) *statsdBatch {
	p, err := statsd.NewParser(s.limits)
	if err != nil {
		panic(err) // the limits were validated by New
	}
	return &statsdBatch{s: s, proto: proto, p: p}
}

func (b *statsdBatch) parse(line []byte, from string) {
	var err error
	b.from = from
	if b.ms, err = b.p.AppendLine(b.ms, line); err != nil {
		b.s.refuse(b.proto, from, err, 1)
	}
}

func (b *statsdBatch) size() int { return len(b.ms) }

func (b *statsdBatch) flush() error {
	b.s.aggregate(b.proto, b.from, b.ms)
	b.ms = b.ms[:0]
	return nil
}

func (s *Server) serveStatsDConn(c net.Conn) {
	s.serveLines(c, protoStatsDTCP, s.newStatsDBatch(protoStatsDTCP))
}

// servePickleConn reads carbon pickle frames from c: a 4-byte length, then
// the pickle. A length over max-pickle-frame ends the connection before the
// frame is read, since the stream cannot be resynchronised; a frame the
// decoder refuses is skipped.
func (s *Server) servePickleConn(c net.Conn) {
	const proto = protoPickle
	from := c.RemoteAddr().String()
	dec, err := graphite.NewPickleDecoder(s.limits, s.now)
	if err != nil {
		panic(err) // the limits were validated by New
	}
	received := s.m.received.WithLabelValues(proto)
	var hdr [graphite.FrameHeaderBytes]byte
	var frame []byte
	var pts []ingest.Point
	r := deadlineReader{s, c, proto}
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				s.refuse(proto, from, truncated("frame header"), 1)
			}
			return
		}
		n, err := graphite.FrameLength(hdr[:], s.limits)
		if err != nil {
			s.refuse(proto, from, err, 1)
			return
		}
		frame = slices.Grow(frame[:0], n)[:n]
		if _, err := io.ReadFull(r, frame); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				s.refuse(proto, from, truncated("frame"), 1)
			}
			return
		}
		var st ingest.Stats
		pts, st, err = dec.Decode(pts[:0], frame)
		if err != nil {
			s.refuse(proto, from, err, 1)
			continue
		}
		s.refuse(proto, from, st.FirstErr, st.Rejected)
		s.m.ignored.WithLabelValues(proto).Add(float64(st.Ignored))
		received.Add(float64(len(pts)))
		if s.add(s.stopCtx, proto, pts) != nil {
			return
		}
		if cap(pts) > 4*batchPoints {
			pts = nil // a huge frame's points are not kept for the next
		}
	}
}

func truncated(what string) error {
	return fmt.Errorf("%w: connection closed within a pickle %s", ingest.ErrSyntax, what)
}
