package tsstore

import (
	"context"
	"testing"

	"github.com/pgts/pgts/internal/ingest"
)

// A raw table without retention still has an accepted window: a point
// dated 0 (a sender's unset clock), or Influx seconds read as nanoseconds
// (no precision), is refused for the raw table, counted, and makes no
// 1970 partition; the archives refuse it as too old, as whisper does.
func TestRawWindowRefusesEpoch(t *testing.T) {
	ctx := context.Background()
	var c clock
	cfg := testConfig(t, &c)
	cfg.Raw.Retention = nil
	s := open(t, newPool(t), cfg)
	secsAsNanos := int64(base) / 1e3 // base seconds read as nanoseconds, in micros
	mustAdd(t, s,
		pt("a.ok", 0, 1),
		ingest.Point{Name: "a.zero", Time: 0, Value: 1},
		ingest.Point{Name: "b.rawonly", Time: 0, Value: 1},
		ingest.Point{Name: "b.influx", Time: secsAsNanos, Value: 1},
	)
	mustFlush(t, s)
	var old, parts1970 int64
	if err := s.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM raw_points WHERE time < '2000-01-01'),
		(SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		 WHERE i.inhparent = 'raw_points'::regclass AND c.relname LIKE '%1970%')`).Scan(&old, &parts1970); err != nil {
		t.Fatal(err)
	}
	if old != 0 || parts1970 != 0 {
		t.Fatalf("%d raw points before 2000 stored, %d partitions of 1970 made", old, parts1970)
	}
	if st := s.Stats(); st.RawStored != 1 || st.RawRefused != 3 {
		t.Fatalf("raw points: %d stored, %d refused; want 1 and 3", st.RawStored, st.RawRefused)
	}
}
