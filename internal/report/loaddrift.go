package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/pgts/pgts/internal/bench"
)

// writeLoadDrift writes, for every load run with per-batch timings, its
// rate over the first and over the last tenth of its batches and their
// ratio: the loading study's question (does a store slow down as its
// indexes outgrow memory?) as one number per run.
func writeLoadDrift(w io.Writer, srcs []Source) {
	var rows [][]string
	for _, src := range srcs {
		if src.Load == nil {
			continue
		}
		sc := src.Load.Scenario
		for _, r := range src.Load.Runs {
			start, end := bench.TenthRates(r.Batches)
			if r.Error != "" || start <= 0 {
				continue
			}
			rows = append(rows, []string{src.Label, r.Store, r.Loader, strconv.Itoa(r.Workers), strconv.Itoa(r.Repeat),
				group(float64(devicesOf(sc))), sc.Index, memoryOf(sc), group(float64(r.Rows)), f1(float64(r.IndexBytes) / (1 << 20)),
				group(start), group(end), f2(end / start)})
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "Loading, rate at the start and at the end of each run (first and last tenth of its batches; end/start < 1 is a slowdown):")
	table(w, []string{"results", "store", "loader", "workers", "repeat", "devices", "index", "server memory", "rows", "index MiB",
		"start rows/s", "end rows/s", "end/start"}, rows)
}

// devicesOf is a scenario's device count; files written before the
// option existed used the study's 1,000.
func devicesOf(sc bench.LoadScenario) int {
	if sc.Devices == 0 {
		return 1000
	}
	return sc.Devices
}

// memoryOf names a scenario's server memory limit, "-" for none.
func memoryOf(sc bench.LoadScenario) string {
	if sc.MemoryLimit == 0 {
		return "-"
	}
	return fmt.Sprintf("%d MiB", sc.MemoryLimit>>20)
}

// hasDrift reports whether writeLoadDrift has a row to write.
func hasDrift(srcs []Source) bool {
	for _, src := range srcs {
		if src.Load == nil {
			continue
		}
		for _, r := range src.Load.Runs {
			if s, _ := bench.TenthRates(r.Batches); r.Error == "" && s > 0 {
				return true
			}
		}
	}
	return false
}

// runName is a load run's name in chart legends: store / loader / workers,
// followed by what tells the sources apart when there are several (the
// device count or memory limit when they differ, else the source's label).
func runName(srcs []Source, src Source, r bench.LoadRun) string {
	name := fmt.Sprintf("%s / %s / %d workers", r.Store, r.Loader, r.Workers)
	if r.Workers == 1 {
		name = fmt.Sprintf("%s / %s / 1 worker", r.Store, r.Loader)
	}
	var loads []Source
	for _, s := range srcs {
		if s.Load != nil {
			loads = append(loads, s)
		}
	}
	if len(loads) < 2 {
		return name
	}
	devs, mems := map[int]bool{}, map[int64]bool{}
	for _, s := range loads {
		devs[devicesOf(s.Load.Scenario)] = true
		mems[s.Load.Scenario.MemoryLimit] = true
	}
	var parts []string
	if len(devs) > 1 {
		parts = append(parts, group(float64(devicesOf(src.Load.Scenario)))+" devices")
	}
	if len(mems) > 1 {
		parts = append(parts, "memory "+memoryOf(src.Load.Scenario))
	}
	if len(parts) == 0 {
		parts = append(parts, src.Label)
	}
	for _, p := range parts {
		name += " / " + p
	}
	return name
}
