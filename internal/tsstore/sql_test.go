package tsstore

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/ingest"
)

func TestViews(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t)
	// The views keep what is within each archive's span of now().
	t0 := (time.Now().Unix() - 600) / 30 * 30
	c := clock{now: time.Unix(t0+100, 0)}
	s := open(t, pool, testConfig(t, &c))
	for i, v := range []float64{1, 2, 4} {
		mustAdd(t, s, ingest.Point{Name: "a.v", Tags: []ingest.Tag{{Key: "dc", Value: "x"}}, Time: (t0 + 10*int64(i)) * 1e6, Value: v})
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `SELECT archive || ' ' || (extract(epoch FROM time)::bigint - $1) || ' ' || value || ' ' || (tags->>'dc')
		FROM pgts.rra_points WHERE name = 'a.v' ORDER BY archive, time`, t0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			t.Fatal(err)
		}
		got = append(got, l)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if want := "wmean:10s:1h:0.5 10 2 x|wmean:10s:1h:0.5 20 4 x"; strings.Join(got, "|") != want {
		t.Fatalf("pgts.rra_points: %q, want %q", strings.Join(got, "|"), want)
	}
	var n int
	var sum float64
	if err := pool.QueryRow(ctx, `SELECT count(*), sum(value) FROM pgts.raw_points WHERE key = 'a.v;dc=x'`).Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	if n != 3 || sum != 7 {
		t.Fatalf("pgts.raw_points: %d points summing to %v", n, sum)
	}
}

// The migration that creates the views spells the segment width out.
func TestSegmentWidthSQL(t *testing.T) {
	if segmentWidthSQL != strconv.Itoa(SegmentWidth) {
		t.Fatalf("segmentWidthSQL %s, SegmentWidth %d", segmentWidthSQL, SegmentWidth)
	}
	if catalog.Version() < 2 {
		t.Fatal("the catalog lacks the metrics migration")
	}
}
