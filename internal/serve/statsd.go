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
// The points are dated at the end of the interval they cover: the next
// multiple of statsd.flush-interval from the clock (the clock itself when
// it is on one), or the clock when that end is more than half of
// future-tolerance away (the storage would refuse it). Shutdown calls it
// once more at the end. Not dated at the flush time, as the etsy daemon
// dates its flushes: a partial interval would then fall in the previous
// flush's slot and replace it (docs/serve.md, "Graphite consolidation").
func (s *Server) FlushStatsD(ctx context.Context) error {
	now := s.now()
	at := intervalEnd(now, time.Duration(s.cfg.StatsD.FlushInterval))
	if at.Sub(now) > time.Duration(s.cfg.FutureTolerance)/2 {
		at = now
	}
	return s.flushStatsD(ctx, at)
}

// intervalEnd is the first multiple of iv (since the epoch) at or after t.
func intervalEnd(t time.Time, iv time.Duration) time.Time {
	if iv <= 0 {
		return t
	}
	e := t.Truncate(iv)
	if e.Before(t) {
		e = e.Add(iv)
	}
	return e
}

// flushStatsD is FlushStatsD with the points dated at.
func (s *Server) flushStatsD(ctx context.Context, at time.Time) error {
	if s.statsd == nil {
		return nil
	}
	start := time.Now()
	s.statsd.mu.Lock()
	pts := s.statsd.agg.Flush(at)
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

// statsdLoop flushes StatsD at every multiple of the flush interval (on
// the wall clock) until Shutdown starts, dating each flush's points at
// that multiple, so that consecutive flushes fill consecutive archive
// slots whatever the timer's delay: a burst of counts is stored as its
// counts, one slot per interval, as the etsy daemon feeding carbon does.
func (s *Server) statsdLoop() {
	defer s.flushWG.Done()
	iv := time.Duration(s.cfg.StatsD.FlushInterval)
	next := time.Now().Truncate(iv).Add(iv)
	t := time.NewTimer(time.Until(next))
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-t.C:
			if err := s.flushStatsD(s.stopCtx, next); err != nil {
				s.log.Error("statsd flush", "err", err)
			}
			// Skip the multiples a slow flush overran.
			for next = next.Add(iv); !next.After(time.Now()); next = next.Add(iv) {
			}
			t.Reset(time.Until(next))
		}
	}
}
