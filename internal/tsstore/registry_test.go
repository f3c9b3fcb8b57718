package tsstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/ingest"
)

// TestRegisterConcurrentStores: two stores (two daemons on one database)
// register overlapping sets of series at once, each in several batches
// on several connections: every series is registered once, both stores
// know it by the same id, and its row holds its name, tags and schema
// (two rules, and raw-only series).
func TestRegisterConcurrentStores(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: time.Unix(base+100, 0)}
	cfg := testConfig(t, c)
	cfg.Rules = append(cfg.Rules, rule(t, `^b\.`, "60s", "", "60s:1d", "10m:30d"))
	cfg.FlushWorkers = 3
	pool := newPool(t)
	s1 := open(t, pool, cfg)
	s2 := open(t, pool, cfg)
	const n = 15_000 // 5,000 a prefix: a., b. and c. (raw only)
	pts := make([]ingest.Point, n)
	for i := range pts {
		p := ingest.Point{Name: fmt.Sprintf("%c.reg.s%05d", "abc"[i%3], i), Value: 1, Time: base * 1e6}
		if i%4 == 0 {
			p.Tags = []ingest.Tag{{Key: "dc", Value: fmt.Sprint("dc", i%5)}, {Key: "host", Value: fmt.Sprintf("h\"%d", i)}}
		}
		pts[i] = p
	}
	rand.New(rand.NewPCG(7, 8)).Shuffle(n, func(i, j int) { pts[i], pts[j] = pts[j], pts[i] })
	// s1 gets the first two thirds, s2 the last two: a third in common.
	mustAdd(t, s1, pts[:2*n/3]...)
	mustAdd(t, s2, pts[n/3:]...)
	var wg sync.WaitGroup
	for _, s := range []*Store{s1, s2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Registration only: two daemons writing the archive rows of
			// one segment at once is another matter.
			if err := s.register(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	type row struct {
		id               int64
		name, tags, rule string
		step, hb         int32
		rras, bundles    string
	}
	got := map[string]row{}
	rows, err := pool.Query(ctx, `SELECT key, id, name, tags::text, coalesce(rule, ''), coalesce(step_s, 0), coalesce(heartbeat_s, 0),
		coalesce(array_to_string(rras, ' '), ''), coalesce(array_to_string(bundles, ' '), '') FROM pgts.metric`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		var r row
		if err := rows.Scan(&k, &r.id, &r.name, &r.tags, &r.rule, &r.step, &r.hb, &r.rras, &r.bundles); err != nil {
			t.Fatal(err)
		}
		got[k] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d series registered, want %d", len(got), n)
	}
	bundles := map[string]string{}
	for i, p := range pts {
		key := seriesKey(p.Name, p.Tags)
		r, ok := got[key]
		if !ok {
			t.Fatalf("series %q not registered", key)
		}
		for j, s := range []*Store{s1, s2} {
			if (j == 0 && i >= 2*n/3) || (j == 1 && i < n/3) {
				continue // not sent to this store
			}
			sh := s.shardOf(key)
			sh.mu.Lock()
			id := sh.m[key].id
			sh.mu.Unlock()
			if id != r.id {
				t.Fatalf("store %d knows %q as %d, registered as %d", j+1, key, id, r.id)
			}
		}
		wantTags := "{}"
		if p.Tags != nil {
			wantTags = fmt.Sprintf(`{"dc": "%s", "host": "%s"}`, p.Tags[0].Value, strings.ReplaceAll(p.Tags[1].Value, `"`, `\"`))
		}
		if r.name != p.Name || r.tags != wantTags {
			t.Fatalf("series %q: name %q, tags %s; want %q, %s", key, r.name, r.tags, p.Name, wantTags)
		}
		var want row
		switch p.Name[0] {
		case 'a':
			want = row{rule: `^a\.`, step: 10, hb: 20, rras: "wmean:10s:1h:0.5 wmean:30s:1d:0.5 max:30s:1d:0.5"}
		case 'b':
			want = row{rule: `^b\.`, step: 60, hb: 60, rras: "average:1m:1d:0.5 average:10m:30d:0.5"}
		}
		if r.rule != want.rule || r.step != want.step || r.rras != want.rras {
			t.Fatalf("series %q: rule %q, step %d, archives %q; want %q, %d, %q", key, r.rule, r.step, r.rras, want.rule, want.step, want.rras)
		}
		if b, ok := bundles[r.rule]; ok && b != r.bundles {
			t.Fatalf("series %q: bundles %q, another of its rule %q", key, r.bundles, b)
		}
		bundles[r.rule] = r.bundles
		if (r.bundles == "") != (r.rule == "") || strings.Count(r.bundles, " ") != strings.Count(r.rras, " ") {
			t.Fatalf("series %q: bundles %q for archives %q", key, r.bundles, r.rras)
		}
	}
}

// TestRegisterKnownElsewhere: a store registers a batch of which some
// series another store registered since it opened: those keep their ids,
// the others are registered, and neither is registered twice.
func TestRegisterKnownElsewhere(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: time.Unix(base+100, 0)}
	cfg := testConfig(t, c)
	pool := newPool(t)
	s1 := open(t, pool, cfg)
	s2 := open(t, pool, cfg)
	batch := func(lo, hi int) []ingest.Point {
		var pts []ingest.Point
		for i := lo; i < hi; i++ {
			pts = append(pts, pt(fmt.Sprintf("a.known.s%03d", i), 0, 1))
		}
		return pts
	}
	mustAdd(t, s1, batch(0, 100)...)
	if err := s1.register(ctx); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s2, batch(50, 150)...)
	if err := s2.register(ctx); err != nil {
		t.Fatal(err)
	}
	idOf := func(s *Store, key string) int64 {
		sh := s.shardOf(key)
		sh.mu.Lock()
		defer sh.mu.Unlock()
		return sh.m[key].id
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pgts.metric`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 150 {
		t.Fatalf("%d series registered, want 150", n)
	}
	for i := 50; i < 150; i++ {
		key := fmt.Sprintf("a.known.s%03d", i)
		var id int64
		if err := pool.QueryRow(ctx, `SELECT id FROM pgts.metric WHERE key = $1`, key).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if got := idOf(s2, key); got != id || (i < 100 && idOf(s1, key) != id) {
			t.Fatalf("series %q: registered as %d, known as %d", key, id, got)
		}
	}
}
