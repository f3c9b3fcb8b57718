package serve

import (
	"bytes"
	"errors"
	"net"
	"time"

	"github.com/pgts/pgts/internal/ingest"
)

// readDatagrams reads datagrams from pc until it is closed and hands each
// to handle, which must not retain it. A datagram over max-datagram is
// refused whole (the buffer is one byte longer, so the kernel's truncation
// shows). One goroutine reads each socket: UDP senders cannot be slowed
// down, so handlers never wait on the sink (they use TryAdd and count what
// it refuses).
func (s *Server) readDatagrams(pc net.PacketConn, proto string, handle func(datagram []byte, from net.Addr)) {
	defer s.wg.Done()
	max := int(s.cfg.Limits.MaxDatagram)
	buf := make([]byte, max+1)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Warn("reading a datagram", "receiver", proto, "err", err)
			t := time.NewTimer(10 * time.Millisecond)
			select {
			case <-t.C:
			case <-s.closing:
				t.Stop()
				return
			}
			continue
		}
		if n > max {
			s.refuse(proto, addrString(from), ingest.LimitError("datagram", n, max), 1)
			continue
		}
		handle(buf[:n], from)
	}
}

func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}

// forEachLine calls f with each line of a datagram, without its "\r\n".
func forEachLine(d []byte, f func(line []byte)) {
	for len(d) > 0 {
		line, rest, _ := bytes.Cut(d, []byte{'\n'})
		f(bytes.TrimSuffix(line, []byte{'\r'}))
		d = rest
	}
}

func (s *Server) handleGraphiteDatagram(d []byte, from net.Addr) {
	g := s.udpGraphite
	forEachLine(d, func(line []byte) {
		var err error
		if g.pts, err = g.p.AppendLine(g.pts, line); err != nil {
			s.refuse(protoGraphiteUDP, addrString(from), err, 1)
		}
	})
	s.m.received.WithLabelValues(protoGraphiteUDP).Add(float64(len(g.pts)))
	s.tryAdd(protoGraphiteUDP, g.pts)
	g.pts = g.pts[:0]
}

func (s *Server) handleStatsDDatagram(d []byte, from net.Addr) {
	b := s.udpStatsD
	forEachLine(d, func(line []byte) {
		var err error
		if b.ms, err = b.p.AppendLine(b.ms, line); err != nil {
			s.refuse(protoStatsDUDP, addrString(from), err, 1)
		}
	})
	if len(b.ms) > 0 {
		s.aggregate(protoStatsDUDP, addrString(from), b.ms)
	}
	b.ms = b.ms[:0]
}
