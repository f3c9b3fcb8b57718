package serve

import (
	"log/slog"
	"sync"
	"time"
)

// errLog logs the parse errors of one receiver without flooding: the first
// refusal of each period is logged at once with its input and sender, the
// others are counted, and the count is logged when the next period starts
// (or at Close). It starts no goroutine. Safe for concurrent use.
type errLog struct {
	log      *slog.Logger
	receiver string
	msg      string
	period   time.Duration
	now      func() time.Time

	mu         sync.Mutex
	start      time.Time // of the current period; zero before the first error
	suppressed int64
}

func newErrLog(log *slog.Logger, receiver, msg string, period time.Duration, now func() time.Time) *errLog {
	return &errLog{log: log, receiver: receiver, msg: msg, period: period, now: now}
}

// report logs or counts n events (refusals, drops), err being the first;
// from names the sender.
func (l *errLog) report(from string, err error, n int) {
	if n <= 0 {
		return
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.start.IsZero() && now.Sub(l.start) < l.period {
		l.suppressed += int64(n)
		return
	}
	l.summaryLocked()
	l.start = now
	l.suppressed = int64(n - 1)
	l.log.Warn(l.msg, "receiver", l.receiver, "from", from, "count", n, "err", err)
}

// close logs the count of refusals not yet summed up.
func (l *errLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.summaryLocked()
}

func (l *errLog) summaryLocked() {
	if l.suppressed > 0 {
		l.log.Warn(l.msg+" (not logged one by one)", "receiver", l.receiver, "count", l.suppressed, "since", l.start)
	}
	l.suppressed = 0
}
