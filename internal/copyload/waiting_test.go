package copyload

import (
	"context"
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
)

// TestBulkMovesWaitingRows: rows a SQL client wrote for hours the load
// then fills wait in the DEFAULT partition; the live path, a bulk unit and
// a split bulk partition each move them into the partition they attach,
// and the load's end moves the rows of an hour it did not touch: every row
// once, in its partition, nothing left waiting.
func TestBulkMovesWaitingRows(t *testing.T) {
	ctx := context.Background()
	const batches = 300                                             // 300,000 rows over 5 hours of 1970-01-01
	for _, unitRows := range []int{0, DefaultBulkUnitRows, 20000} { // live, one transaction per partition, split
		pool, m, target := hourly(t, pgtest.DB(t))
		if _, err := pool.Exec(ctx, `INSERT INTO conditions (time, device, data1) VALUES
			('1970-01-01 00:30+00', -1, 1), ('1970-01-01 03:59:59+00', -1, 2), ('1970-01-01 04:00+00', -1, 3), ('1970-01-01 09:00+00', -1, 4)`); err != nil {
			t.Fatal(err)
		}
		cfg := bulkConfig(2)
		cfg.Bulk, cfg.BulkUnitRows, cfg.LoadID, cfg.Fingerprint = unitRows > 0, unitRows, "waiting", "fp"
		l, err := New(pool, m, target, cfg)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := l.Run(ctx, &GenSource{Name: "conditions", Gen: hourlyRows(t, batches)})
		if err != nil {
			t.Fatalf("unit rows %d: %v", unitRows, err)
		}
		if sum.Loaded != batches*1000 {
			t.Fatalf("unit rows %d: summary %+v", unitRows, sum)
		}
		if n, err := m.Waiting(ctx, target.Series); err != nil || n != 0 {
			t.Fatalf("unit rows %d: %d rows still wait (%v)", unitRows, n, err)
		}
		var total, misplaced int64
		if err := pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE tableoid::regclass::text <>
				'conditions_p19700101_' || to_char(time AT TIME ZONE 'UTC', 'HH24')) FROM conditions`).Scan(&total, &misplaced); err != nil {
			t.Fatal(err)
		}
		if total != batches*1000+4 || misplaced != 0 {
			t.Fatalf("unit rows %d: %d rows, %d outside their partition; want %d, 0", unitRows, total, misplaced, batches*1000+4)
		}
	}
}
