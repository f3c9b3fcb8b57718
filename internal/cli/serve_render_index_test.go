package cli

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/render"
	"github.com/pgts/pgts/internal/rra"
	"github.com/pgts/pgts/internal/tsstore"
)

// indexStore opens a store holding n tagged series
// "bench.cpu;dc=dc<i%4>;host=h<i/4>" and n untagged ones
// "bench.g<i/1000>.s<i%1000>" (one point each, never flushed: the lookups
// read only the registry in memory).
func indexStore(b testing.TB, n int) *tsstore.Store {
	b.Helper()
	ctx := context.Background()
	rule, err := rra.ParseRule(rra.RuleConfig{Regexp: ".", Step: "60s", RRAs: []string{"60s:10m"}})
	if err != nil {
		b.Fatal(err)
	}
	cfg := tsstore.DefaultConfig()
	cfg.Rules = []rra.Rule{rule}
	cfg.FlushInterval = time.Hour
	cfg.MaxMemory = 4 << 30
	store, err := tsstore.Open(ctx, pgtest.Pool(b), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close(ctx) })
	at := time.Now().Add(-time.Minute).UnixMicro()
	pts := make([]ingest.Point, 0, 2*n)
	for i := range n {
		pts = append(pts,
			ingest.Point{Name: "bench.cpu", Tags: []ingest.Tag{{Key: "dc", Value: "dc" + strconv.Itoa(i%4)}, {Key: "host", Value: "h" + strconv.Itoa(i/4)}}, Value: 1, Time: at},
			ingest.Point{Name: fmt.Sprintf("bench.g%d.s%d", i/1000, i%1000), Value: 1, Time: at})
	}
	if err := store.Add(ctx, pts); err != nil {
		b.Fatal(err)
	}
	return store
}

// seriesByTagNames is what seriesByTag selects, through the source.
func seriesByTagNames(b testing.TB, src renderSource, exprs ...string) int {
	b.Helper()
	var terms []render.TagTerm
	for _, e := range exprs {
		t, err := render.ParseTagTerm(e)
		if err != nil {
			b.Fatal(err)
		}
		terms = append(terms, t)
	}
	names, err := src.FindTagged(context.Background(), terms)
	if err != nil {
		b.Fatal(err)
	}
	return len(names)
}

// BenchmarkSeriesByTag300k: the candidates seriesByTag asks the store
// for among 300,000 tagged series (and as many untagged ones).
func BenchmarkSeriesByTag300k(b *testing.B) {
	src := renderSource{indexStore(b, 300_000)}
	for _, c := range []struct {
		name  string
		exprs []string
	}{
		{"name_host", []string{"name=bench.cpu", "host=h123"}},
		{"host_regexp", []string{"host=~h12[0-9]$", "dc!=dc1"}},
		{"dc", []string{"dc=dc2"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				seriesByTagNames(b, src, c.exprs...)
			}
		})
	}
}

// BenchmarkFind300k: globs among 300,000 untagged series (and as many
// tagged ones).
func BenchmarkFind300k(b *testing.B) {
	store := indexStore(b, 300_000)
	for _, c := range []struct{ name, pattern string }{
		{"1000_leaves", "bench.g123.*"},
		{"top", "bench.*"},
		{"one", "bench.g7.s42"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := store.Find(context.Background(), c.pattern); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
