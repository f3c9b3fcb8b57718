package bench

import (
	"fmt"
	"slices"
)

// LoadSummary is the median of the repeats of one store/loader/workers
// combination; Min and Max show the spread of rows/s.
type LoadSummary struct {
	Store         string  `json:"store"`
	Loader        string  `json:"loader"`
	Workers       int     `json:"workers"`
	Runs          int     `json:"runs"` // successful repeats the medians are of
	Failed        int     `json:"failed"`
	Rows          int64   `json:"rows"`
	RowsPerSec    float64 `json:"rows_per_second"` // median
	MinRowsPerSec float64 `json:"min_rows_per_second"`
	MaxRowsPerSec float64 `json:"max_rows_per_second"`
	Seconds       float64 `json:"seconds"`
	ClientCPU     float64 `json:"client_cpu_seconds"`
	ServerCPU     float64 `json:"server_cpu_seconds"`
	ClientServer  float64 `json:"client_server_cpu_ratio"` // median of each run's client/server CPU
	WALBytes      float64 `json:"wal_bytes"`
	TableBytes    float64 `json:"table_bytes"`
	IndexBytes    float64 `json:"index_bytes"`
}

// Key names the combination as store/loader/workers.
func (s LoadSummary) Key() string { return fmt.Sprintf("%s/%s/%d", s.Store, s.Loader, s.Workers) }

// Summarize groups runs by store, loader and workers, in order of first
// appearance, and takes the median of each measure over the successful
// repeats (the runs are interleaved, so a slow spell of a shared machine
// touches every combination alike).
func Summarize(runs []LoadRun) []LoadSummary {
	var keys []string
	groups := map[string][]LoadRun{}
	for _, r := range runs {
		k := fmt.Sprintf("%s/%s/%d", r.Store, r.Loader, r.Workers)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	out := make([]LoadSummary, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		s := LoadSummary{Store: g[0].Store, Loader: g[0].Loader, Workers: g[0].Workers}
		var ok []LoadRun
		for _, r := range g {
			if r.Error != "" {
				s.Failed++
				continue
			}
			ok = append(ok, r)
		}
		s.Runs = len(ok)
		if len(ok) > 0 {
			pick := func(f func(LoadRun) float64) float64 {
				v := make([]float64, len(ok))
				for i, r := range ok {
					v[i] = f(r)
				}
				return Median(v)
			}
			s.Rows = ok[0].Rows
			s.RowsPerSec = pick(func(r LoadRun) float64 { return r.RowsPerSec })
			s.MinRowsPerSec, s.MaxRowsPerSec = ok[0].RowsPerSec, ok[0].RowsPerSec
			for _, r := range ok {
				s.MinRowsPerSec = min(s.MinRowsPerSec, r.RowsPerSec)
				s.MaxRowsPerSec = max(s.MaxRowsPerSec, r.RowsPerSec)
			}
			s.Seconds = pick(func(r LoadRun) float64 { return r.Seconds })
			s.ClientCPU = pick(func(r LoadRun) float64 { return r.ClientCPU })
			s.ServerCPU = pick(func(r LoadRun) float64 { return r.ServerCPU })
			s.ClientServer = pick(func(r LoadRun) float64 {
				if r.ServerCPU <= 0 {
					return 0
				}
				return r.ClientCPU / r.ServerCPU
			})
			s.WALBytes = pick(func(r LoadRun) float64 { return float64(r.WALBytes) })
			s.TableBytes = pick(func(r LoadRun) float64 { return float64(r.TableBytes) })
			s.IndexBytes = pick(func(r LoadRun) float64 { return float64(r.IndexBytes) })
		}
		out = append(out, s)
	}
	return out
}

// Median returns the median of v (the mean of the middle two for an even
// count), 0 for none. v is not modified.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	c := slices.Clone(v)
	slices.Sort(c)
	n := len(c)
	if n%2 == 1 {
		return c[n/2]
	}
	return (c[n/2-1] + c[n/2]) / 2
}
