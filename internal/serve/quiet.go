package serve

import "time"

// QuietRelease gives the memory the Go runtime holds to the system once
// the daemon has been quiet for a while: no point accepted and nothing
// pending for its period. Under load the heap grows to what the collector
// allows (twice the live heap, or the memory limit), and the runtime
// returns freed pages only slowly; a daemon at rest then keeps that peak
// as RSS. One release (a collection and debug.FreeOSMemory, about one
// collection of the live heap in CPU) per quiet period brings the RSS near
// the live heap; the next waits for points and quiet again.
//
// A QuietRelease is not safe for concurrent use: one goroutine calls
// Observe (the daemon's once-a-second storage follower).
type QuietRelease struct {
	period  time.Duration
	release func()

	seen      bool
	added     int64     // accepted points at the last Observe
	quiet     bool      // the last Observe found the daemon quiet
	since     time.Time // the first Observe of the current quiet stretch
	done      bool      // released in this quiet stretch
	nReleased int64
}

// NewQuietRelease returns a QuietRelease calling release after period
// of quiet; a period of 0 disables it.
func NewQuietRelease(period time.Duration, release func()) *QuietRelease {
	return &QuietRelease{period: period, release: release}
}

// Observe tells the clock, the points accepted since the start and
// whether any data waits to be written; it calls release when the daemon
// has been quiet for the period since it was last busy, once.
func (q *QuietRelease) Observe(now time.Time, added int64, pending bool) {
	if q.period <= 0 {
		return
	}
	busy := !q.seen || added != q.added || pending
	q.seen, q.added = true, added
	if busy {
		q.quiet, q.done = false, false
		return
	}
	if !q.quiet {
		q.quiet, q.since = true, now
	}
	if q.done || now.Sub(q.since) < q.period {
		return
	}
	q.done = true
	q.nReleased++
	q.release()
}

// Releases returns how many times the memory was released.
func (q *QuietRelease) Releases() int64 { return q.nReleased }
