package tsstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/rra"
)

// TestArchiveRowsUpdateInPlace: a flush that writes again the slot rows
// an earlier flush wrote updates them where they are (HOT, heap-only
// tuple: no new index entry, the old version pruned on its own page), so
// each row stays on its page. A packed row is about 3.2 KB: two filled a
// page, and the next version of either found no room there. A page has
// room for one more version of its row, not two: a flush whose slot
// updates take several statements (here 24,000 on one connection, over
// slotChunk) writes each row in one of them.
func TestArchiveRowsUpdateInPlace(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: time.Unix(base+5, 0)}
	cfg := testConfig(t, c)
	cfg.Raw = nil
	cfg.Rules = []rra.Rule{rule(t, `.`, "10s", "", "10s:1h", "1m:1d")}
	cfg.FlushWorkers = 1
	pool := newPool(t)
	s := open(t, pool, cfg)
	const n = 12_000 // ids 1 to 12,000: segments 0 to 60
	write := func(secs ...int64) {
		for _, sec := range secs {
			pts := make([]ingest.Point, n)
			for i := range pts {
				pts[i] = ingest.Point{Name: fmt.Sprintf("hot.s%04d", i), Value: float64(i), Time: (base + sec) * 1e6}
			}
			c.now = time.Unix(base+sec+5, 0)
			mustAdd(t, s, pts...)
		}
		mustFlush(t, s)
	}
	// pages maps each row to its page and the transaction that wrote it.
	pages := func() map[string]string {
		rows, err := pool.Query(ctx, `SELECT format('%s/%s/%s', bundle_id, seg, slot), format('%s %s', (ctid::text::point)[0], xmin) FROM pgts.rra_data`)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		var row, page string
		for rows.Next() {
			if err := rows.Scan(&row, &page); err != nil {
				t.Fatal(err)
			}
			m[row] = page
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return m
	}
	write(0, 10, 20, 30) // the minute's slot written: 4 of its 6 known
	before := pages()
	write(40) // the same minute's slot again, and a new 10 s slot
	after := pages()
	same, moved := 0, 0
	for row, p := range before {
		q, ok := after[row]
		var pageP, pageQ, xminP, xminQ string
		fmt.Sscan(p, &pageP, &xminP)
		fmt.Sscan(q, &pageQ, &xminQ)
		switch {
		case !ok:
			t.Fatalf("row %s gone", row)
		case xminP == xminQ:
			// not written again
		case pageP == pageQ:
			same++
		default:
			moved++
		}
	}
	if same+moved != n/SegmentWidth+1 || moved > 0 {
		t.Fatalf("of %d rows written again (of %d), %d moved to another page", same+moved, len(before), moved)
	}
}
