package bench

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// PartitionScenario measures partition creation while a writer COPYs into
// the same table: how long one creation takes, and how long the writer's
// batches take while creations run, against a baseline without them.
type PartitionScenario struct {
	ConnString string
	Partitions int // partitions created during the measured phase
	BatchRows  int // rows per writer COPY (one transaction)
	Baseline   time.Duration
	Route      string // "parent" or "leaf": where the writer COPYs
	Logger     *slog.Logger
}

// PartitionResult holds the figures, in milliseconds.
type PartitionResult struct {
	Partitions      int     `json:"partitions_created"`
	CreateMedianMS  float64 `json:"create_median_ms"`
	CreateMaxMS     float64 `json:"create_max_ms"`
	BaselineBatches int     `json:"baseline_batches"`
	BaselineP50MS   float64 `json:"baseline_batch_p50_ms"`
	BaselineMaxMS   float64 `json:"baseline_batch_max_ms"`
	DuringBatches   int     `json:"during_batches"`
	DuringP50MS     float64 `json:"during_batch_p50_ms"`
	DuringMaxMS     float64 `json:"during_batch_max_ms"`
	Route           string  `json:"route"`
	BatchRows       int     `json:"batch_rows"`
}

// RunPartition runs the scenario on a fresh table named pgts_stall.
func RunPartition(ctx context.Context, s PartitionScenario) (PartitionResult, error) {
	if s.Partitions < 1 || s.BatchRows < 1 || s.Baseline <= 0 {
		return PartitionResult{}, fmt.Errorf("partitions, batch rows and baseline must be positive")
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	pool, err := pg.NewPool(ctx, s.ConnString, 4)
	if err != nil {
		return PartitionResult{}, err
	}
	defer pool.Close()
	m := partition.NewManager(pool, s.Logger, time.Now)
	if old, err := m.Table(ctx, "pgts_stall"); err == nil {
		if err := m.Drop(ctx, old); err != nil {
			return PartitionResult{}, err
		}
	}
	t, err := m.Create(ctx, partition.CreateSpec{Name: "pgts_stall", TimeColumn: "time", Interval: partition.Interval{Days: 1},
		Premake: 0, AcceptFuture: &partition.Interval{Days: 36500},
		Columns: "time timestamptz not null, device int not null, v1 float8, v2 float8, v3 float8"})
	if err != nil {
		return PartitionResult{}, err
	}
	now := time.Now().UTC()
	copyInto := t.Name
	if s.Route == "leaf" {
		if copyInto, err = t.LeafName(now.UnixMicro()); err != nil {
			return PartitionResult{}, err
		}
	}
	rows := make([][]any, s.BatchRows)
	for i := range rows {
		rows[i] = []any{now, int32(i % 1000), 1.5, 2.5, 3.5}
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return PartitionResult{}, err
	}
	defer conn.Release()
	var mu sync.Mutex
	var lat []float64
	writer := func(stop <-chan struct{}) error {
		for {
			select {
			case <-stop:
				return nil
			default:
			}
			t0 := time.Now()
			_, err := conn.Conn().CopyFrom(ctx, pgx.Identifier{t.Schema, copyInto}, []string{"time", "device", "v1", "v2", "v3"}, pgx.CopyFromRows(rows))
			if err != nil {
				return err
			}
			mu.Lock()
			lat = append(lat, ms(time.Since(t0)))
			mu.Unlock()
		}
	}
	phase := func(d time.Duration, work func() error) ([]float64, error) {
		lat = nil
		stop := make(chan struct{})
		errc := make(chan error, 1)
		go func() { errc <- writer(stop) }()
		var werr error
		if work != nil {
			werr = work()
		} else {
			timer := time.NewTimer(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				werr = ctx.Err()
			}
		}
		close(stop)
		if err := <-errc; err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		return append([]float64(nil), lat...), werr
	}
	res := PartitionResult{Partitions: s.Partitions, Route: s.Route, BatchRows: s.BatchRows}
	base, err := phase(s.Baseline, nil)
	if err != nil {
		return res, err
	}
	var creates []float64
	during, err := phase(0, func() error {
		for i := 1; i <= s.Partitions; i++ {
			t0 := time.Now()
			n, err := m.Ensure(ctx, t, []int64{now.AddDate(0, 0, i).UnixMicro()})
			if err != nil {
				return err
			}
			if n != 1 {
				return fmt.Errorf("expected to create one partition, created %d", n)
			}
			creates = append(creates, ms(time.Since(t0)))
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	res.CreateMedianMS, res.CreateMaxMS = quantile(creates, 0.5), quantile(creates, 1)
	res.BaselineBatches, res.BaselineP50MS, res.BaselineMaxMS = len(base), quantile(base, 0.5), quantile(base, 1)
	res.DuringBatches, res.DuringP50MS, res.DuringMaxMS = len(during), quantile(during, 0.5), quantile(during, 1)
	return res, m.Drop(ctx, t)
}

// quantile returns the q-quantile (nearest rank) of xs; 0 for none.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(q*float64(len(s)-1) + 0.5)
	return s[i]
}
