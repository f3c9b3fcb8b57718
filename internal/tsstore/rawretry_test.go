package tsstore

import (
	"context"
	"fmt"
	"testing"

	"github.com/pgts/pgts/internal/ingest"
)

// TestRawWriteExactlyOnce fails a raw points write part-way (a trigger
// refuses every row after the first 10,000, so the first batch commits and
// the second fails), then lets the next
// flush retry it: every point is stored once, none twice, and the ledger
// of the write is gone.
func TestRawWriteExactlyOnce(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t)
	cfg := testConfig(t, &clock{})
	cfg.FlushWorkers = 1 // batches commit in input order
	s := open(t, pool, cfg)
	// Three batches of 10,000 raw points (b.* matches no rule: raw only),
	// 1 ms apart, values 0 to 29,999.
	const n = 30_000
	for i := 0; i < n; i += 1000 {
		pts := make([]ingest.Point, 0, 1000)
		for j := i; j < i+1000; j++ {
			pts = append(pts, pt(fmt.Sprintf("b.s%d", j%10), float64(j)/1000, float64(j)))
		}
		mustAdd(t, s, pts...)
	}
	// Refuse every row after the first 10,000 while the flag is set.
	if _, err := pool.Exec(ctx, `
		CREATE TABLE fail_flag (on_ boolean);
		INSERT INTO fail_flag VALUES (true);
		CREATE SEQUENCE rows_seen;
		CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF (SELECT on_ FROM fail_flag) AND nextval('rows_seen') > 10000 THEN RAISE EXCEPTION 'injected failure'; END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER refuse BEFORE INSERT ON raw_points FOR EACH ROW EXECUTE FUNCTION refuse();`); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err == nil {
		t.Fatal("the flush with a failing batch succeeded")
	}
	var stored int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM raw_points`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != 10_000 {
		t.Fatalf("%d rows stored by the failing flush; want the first batch", stored)
	}
	if _, err := pool.Exec(ctx, `UPDATE fail_flag SET on_ = false`); err != nil {
		t.Fatal(err)
	}
	mustFlush(t, s)
	var rows, distinct, ledger int64
	if err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT value), (SELECT count(*) FROM pgts.load) FROM raw_points`).
		Scan(&rows, &distinct, &ledger); err != nil {
		t.Fatal(err)
	}
	if rows != n || distinct != n || ledger != 0 {
		t.Fatalf("after the retry: %d rows, %d distinct (want %d each), %d ledger loads left", rows, distinct, n, ledger)
	}
	if st := s.Stats(); st.RawStored != n {
		t.Fatalf("stats: %d raw points stored, want %d", st.RawStored, n)
	}
}
