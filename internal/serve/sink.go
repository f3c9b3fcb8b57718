package serve

import (
	"context"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/rra"
)

// Sink is the storage the receivers hand their points to. *tsstore.Store
// is the daemon's Sink.
//
// A Sink must be safe for concurrent use: every connection calls it from
// its own goroutine. It must not retain pts, nor the Tags slices of its
// points, after a call returns: the receivers reuse them.
type Sink interface {
	// Add stores pts, blocking while the sink is over its memory budget
	// (backpressure) until it has room or ctx is done.
	Add(ctx context.Context, pts []ingest.Point) error
	// TryAdd stores as many of pts as it has room for, from the first,
	// without blocking, and returns how many; the error says why it
	// stopped short.
	TryAdd(pts []ingest.Point) (accepted int, err error)
	// SetRules replaces the round-robin archive rules (the [[ds]]
	// sections) for series seen from now on.
	SetRules(rules []rra.Rule) error
	// Close flushes what the sink holds and releases it.
	Close(ctx context.Context) error
}
