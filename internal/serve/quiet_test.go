package serve

import (
	"testing"
	"time"
)

// TestQuietRelease: the memory goes back to the system once per quiet
// period (no point accepted and nothing pending for the configured
// time), never while points arrive or wait to be written, and again only
// after points arrived and the daemon was quiet again. Counted on an
// injected clock, not timed.
func TestQuietRelease(t *testing.T) {
	released := 0
	q := NewQuietRelease(15*time.Second, func() { released++ })
	t0 := time.Unix(1_700_000_000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	step := func(s int, added int64, pending bool, want int) {
		t.Helper()
		q.Observe(at(s), added, pending)
		if released != want {
			t.Fatalf("at %d s (added %d, pending %v): %d releases, want %d", s, added, pending, released, want)
		}
	}
	// Points arrive every second for a minute: never.
	for s := range 60 {
		step(s, int64(s*1000), true, 0)
	}
	// The last points are written at 62 s; nothing arrives after 59 s.
	step(61, 59000, true, 0)
	step(62, 59000, false, 0)
	// Quiet from 62 s: not before 77 s, once at 77 s, not again.
	step(70, 59000, false, 0)
	step(76, 59000, false, 0)
	step(77, 59000, false, 1)
	for s := 78; s < 300; s += 7 {
		step(s, 59000, false, 1)
	}
	if q.Releases() != 1 {
		t.Fatalf("Releases() = %d, want 1", q.Releases())
	}
	// Points again, then quiet again from 301 s: a second release at 316 s.
	step(300, 60000, false, 1)
	step(301, 60000, false, 1)
	step(315, 60000, false, 1)
	step(316, 60000, false, 2)
	// Pending data but no new point (a flush failing, say): not quiet.
	step(400, 61000, false, 2)
	step(401, 61000, true, 2)
	step(500, 61000, true, 2)
	step(501, 61000, false, 2)
	step(516, 61000, false, 3)

	// Disabled: never.
	off := NewQuietRelease(0, func() { t.Fatal("released while disabled") })
	off.Observe(at(0), 0, false)
	off.Observe(at(1000), 0, false)
}
