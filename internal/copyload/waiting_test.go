package copyload

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/partition"

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

// TestAnyWriterConcurrent: several sessions insert rows (single-row
// INSERTs over both protocols, multi-row INSERTs, COPY) into hours without
// a partition while maintain moves waiting rows in a loop and a load
// creates partitions for the same hours. No statement fails; afterwards
// every row is there exactly once, in its partition, and none waits.
func TestAnyWriterConcurrent(t *testing.T) {
	ctx := context.Background()
	db := pgtest.DB(t)
	pool, m, target := hourly(t, db)
	const writers, perWriter = 4, 150
	// writer w's row i: device -(w+1), time 00:00 + (i*writers+w)*53 s,
	// spread over the ten hours 00:00-08:50; the load fills 00:00-05:00
	rowTime := func(w, i int) time.Time {
		return time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration((i*writers+w)*53) * time.Second)
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg, writersWG sync.WaitGroup
	errs := make(chan error, writers+2)
	for w := 0; w < writers; w++ {
		writersWG.Add(1)
		go func() {
			defer writersWG.Done()
			conn, err := pool.Acquire(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Release()
			for i := 0; i < perWriter; i++ {
				dev, ts := -(w + 1), rowTime(w, i)
				var err error
				switch i % 6 {
				case 0:
					_, err = conn.Exec(ctx, fmt.Sprintf(`INSERT INTO conditions (time, device, data1) VALUES ('%s', %d, %d)`, ts.Format(time.RFC3339), dev, i), pgx.QueryExecModeSimpleProtocol)
				case 1, 2:
					_, err = conn.Exec(ctx, `INSERT INTO conditions (time, device, data1) VALUES ($1, $2, $3)`, ts, dev, i)
				case 3:
					text := fmt.Sprintf("%s\t%d\t%d\n", ts.Format(time.RFC3339), dev, i)
					_, err = conn.Conn().PgConn().CopyFrom(ctx, strings.NewReader(text), `COPY conditions (time, device, data1) FROM STDIN`)
				case 4:
					// two rows: this one and the next
					_, err = conn.Exec(ctx, `INSERT INTO conditions (time, device, data1) VALUES ($1, $2, $3), ($4, $2, $5)`, ts, dev, i, rowTime(w, i+1), i+1)
					i++
				}
				if err != nil {
					errs <- fmt.Errorf("writer %d row %d: %w", w, i, err)
					return
				}
			}
		}()
	}
	// maintain, as another process runs it: its own Manager
	wg.Add(1)
	go func() {
		defer wg.Done()
		other := partition.NewManager(pool, nil, time.Now)
		for wctx.Err() == nil {
			if r := other.Maintain(ctx, []*partition.Table{target.Series}); r[0].Err != nil {
				errs <- fmt.Errorf("maintain: %w", r[0].Err)
				return
			}
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		l, err := New(pool, m, target, testConfig(2))
		if err != nil {
			errs <- err
			return
		}
		if _, err := l.Run(ctx, &GenSource{Name: "conditions", Gen: hourlyRows(t, 300)}); err != nil {
			errs <- fmt.Errorf("load: %w", err)
		}
	}()
	writersWG.Wait()
	stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	if r := m.Maintain(ctx, []*partition.Table{target.Series}); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	if n, err := m.Waiting(ctx, target.Series); err != nil || n != 0 {
		t.Fatalf("%d rows wait (%v)", n, err)
	}
	var total, written, distinct, misplaced int64
	if err := pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE device < 0), count(DISTINCT (device, time)) FILTER (WHERE device < 0),
			count(*) FILTER (WHERE tableoid::regclass::text <> 'conditions_p19700101_' || to_char(time AT TIME ZONE 'UTC', 'HH24'))
		FROM conditions`).Scan(&total, &written, &distinct, &misplaced); err != nil {
		t.Fatal(err)
	}
	if written != writers*perWriter || distinct != written || misplaced != 0 || total != 300*1000+written {
		t.Fatalf("%d rows (%d written by the sessions, %d distinct, want %d), %d outside their partition", total, written, distinct, writers*perWriter, misplaced)
	}
}
