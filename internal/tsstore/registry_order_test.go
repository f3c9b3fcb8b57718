package tsstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/rra"
)

// TestRegisterSiblingsContiguous: series that arrive in a scrambled order
// (and so lie in the store's shards in hash order) and are registered by
// one flush get consecutive ids in the order of their keys, so that
// siblings read together share segments.
func TestRegisterSiblingsContiguous(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: time.Unix(base+3600, 0)}
	cfg := testConfig(t, c)
	cfg.Raw = nil
	cfg.Rules = []rra.Rule{rule(t, `.`, "60s", "", "60s:1d")}
	pool := newPool(t)
	s := open(t, pool, cfg)
	const n = 700
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("sib.g%d.s%04d", i%3, i)
	}
	order := rand.New(rand.NewPCG(1, 2)).Perm(n)
	pts := make([]ingest.Point, 0, n)
	for _, i := range order {
		pts = append(pts, ingest.Point{Name: keys[i], Value: 1, Time: base * 1e6})
	}
	mustAdd(t, s, pts...)
	mustFlush(t, s)
	rows, err := pool.Query(ctx, `SELECT id FROM pgts.metric ORDER BY key`)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	var id int64
	for rows.Next() {
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(ids) != n {
		t.Fatalf("%d series registered, want %d", len(ids), n)
	}
	for i := 1; i < n; i++ {
		if ids[i] != ids[i-1]+1 {
			t.Fatalf("ids in key order not consecutive at %d: %d then %d (first %v)", i, ids[i-1], ids[i], ids[:min(n, 10)])
		}
	}
}

// BenchmarkRegisterSort: the sort register makes of a cold start's fresh
// series, 1,000,000 of them in hash order, before their ids are given.
func BenchmarkRegisterSort(b *testing.B) {
	const n = 1_000_000
	all := make([]*series, n)
	for i := range all {
		all[i] = &series{key: fmt.Sprintf("bench.serve.h%04d.metric%03d", i/1000, i%1000)}
	}
	rand.New(rand.NewPCG(3, 4)).Shuffle(n, func(i, j int) { all[i], all[j] = all[j], all[i] })
	fresh := make([]*series, n)
	b.ReportAllocs()
	for b.Loop() {
		copy(fresh, all)
		sortFresh(fresh)
	}
}
