package tsstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/bench"
	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/rra"
)

// BenchmarkRegister registers the series of a cold start: n never-seen
// series (names as `pgts blast` sends them, a tenth with tags), waiting in
// the shards in hash order as Add leaves them, given their ids by one
// register. Besides the time it reports the CPU per series of the
// benchmark process and of the PostgreSQL server:
//
//	go test -run '^$' -bench 'Register$/series=1000000' -benchtime 1x ./internal/tsstore
func BenchmarkRegister(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("series=%d", n), func(b *testing.B) { benchRegister(b, n) })
	}
}

func benchRegister(b *testing.B, n int) {
	ctx := context.Background()
	pool := newPool(b)
	postmaster := postmasterOf(b, pool)
	c := clock{now: time.Unix(base, 0)}
	cfg := DefaultConfig()
	cfg.Rules = []rra.Rule{rule(b, `.`, "10s", "", "10s:6h", "1m:7d", "1h:1y")}
	cfg.FlushInterval = time.Hour // no flush but the benchmark's
	cfg.MaxMemory = 1 << 30
	cfg.Now = c.Now
	s := open(b, pool, cfg)
	si := s.schemaOf(&cfg.Rules[0])
	all := make([]*series, n)
	tagsOf := map[*series][]ingest.Tag{}
	for i := range all {
		key := fmt.Sprintf("bench.serve.h%04d.metric%03d", i/1000, i%1000)
		var tags []ingest.Tag
		if i%10 == 0 {
			tags = []ingest.Tag{{Key: "dc", Value: fmt.Sprint("dc", i%3)}, {Key: "host", Value: fmt.Sprint("h", i/1000)}}
			key = seriesKey(key, tags)
		}
		all[i] = &series{key: key, sch: si}
		if tags != nil {
			tagsOf[all[i]] = tags
		}
	}
	rand.New(rand.NewPCG(5, 6)).Shuffle(n, func(i, j int) { all[i], all[j] = all[j], all[i] })
	var self, srv bench.ProcTimes
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		if _, err := pool.Exec(ctx, `TRUNCATE pgts.metric`); err != nil {
			b.Fatal(err)
		}
		for _, x := range all {
			x.id = 0
			x.setTags(tagsOf[x])
			sh := s.shardOf(x.key)
			sh.fresh = append(sh.fresh, x)
		}
		self0, srv0 := bench.SelfTimes(), bench.ServerTimes(postmaster)
		b.StartTimer()
		if err := s.register(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		d1, d2 := bench.SelfTimes().Sub(self0), bench.ServerTimes(postmaster).Sub(srv0)
		self.CPUSeconds += d1.CPUSeconds
		srv.CPUSeconds += d2.CPUSeconds
		b.StartTimer()
	}
	b.StopTimer()
	for _, x := range all {
		if x.id == 0 {
			b.Fatalf("series %q has no id", x.key)
		}
	}
	total := float64(b.N * n)
	b.ReportMetric(self.CPUSeconds/total*1e6, "self-µs/series")
	b.ReportMetric(srv.CPUSeconds/total*1e6, "server-µs/series")
}
