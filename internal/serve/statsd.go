package serve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pgts/pgts/internal/ingest/statsd"
)

// aggregator is the one StatsD aggregator all StatsD receivers share.
// Adding to it never waits on storage: its size is bounded by
// statsd.max-series and statsd.max-samples, and what exceeds them is
// dropped and counted.
type aggregator struct {
	mu  sync.Mutex
	agg *statsd.Aggregator
}

// aggregate adds the metrics of one datagram or line batch.
func (s *Server) aggregate(proto, from string, ms []statsd.Metric) {
	var full, bad int
	var firstBad, firstFull error
	s.statsd.mu.Lock()
	for i := range ms {
		err := s.statsd.agg.Add(ms[i])
		switch {
		case err == nil:
		case errors.Is(err, statsd.ErrFull):
			if full++; firstFull == nil {
				firstFull = err
			}
		default:
			if bad++; firstBad == nil {
				firstBad = err
			}
		}
	}
	s.statsd.mu.Unlock()
	s.m.received.WithLabelValues(proto).Add(float64(len(ms)))
	s.refuse(proto, from, firstBad, bad)
	if full > 0 {
		s.m.dropped.WithLabelValues(proto, "statsd_full").Add(float64(full))
		s.dropLog.report(from, firstFull, full)
	}
}

// FlushStatsD ends the current StatsD interval: it hands the derived series
// (statsd.Aggregator.Flush) to the sink, waiting while the sink applies
// backpressure; receivers keep aggregating the next interval meanwhile.
// The flush loop calls it every statsd.flush-interval and Shutdown once
// more at the end.
func (s *Server) FlushStatsD(ctx context.Context) error {
	if s.statsd == nil {
		return nil
	}
	start := time.Now()
	s.statsd.mu.Lock()
	pts := s.statsd.agg.Flush(s.now())
	s.statsd.mu.Unlock()
	s.m.flushes.Inc()
	s.m.flushPoints.Add(float64(len(pts)))
	// Flush returns a new slice each time and its tags are never modified,
	// so the sink may read them without holding the lock.
	err := s.add(ctx, "statsd", pts)
	s.m.flushTime.Observe(time.Since(start).Seconds())
	if err != nil {
		return fmt.Errorf("flushing statsd: %w", err)
	}
	return nil
}

// statsdLoop flushes StatsD every flush interval until Shutdown starts.
func (s *Server) statsdLoop() {
	defer s.flushWG.Done()
	t := time.NewTicker(time.Duration(s.cfg.StatsD.FlushInterval))
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-t.C:
			if err := s.FlushStatsD(s.stopCtx); err != nil {
				s.log.Error("statsd flush", "err", err)
			}
		}
	}
}
