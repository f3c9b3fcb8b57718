package bench

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A study is one seed experiment as one command (`pgts bench study NAME`):
// the scenarios it is made of, with the seed's own parameters, every
// store and peer the harness has, and a size that scales it down for a
// quick look or a test. Each part writes its own results directory; the
// report of all of them states the study's verdict.
//
//	loading  the Postgres-vs-TimescaleDB loading study: stores plain,
//	         weekly, monthly, timescaledb (chosen chunk), pgts; psql COPY
//	         against pgts' binary COPY with 1 and N workers; 3 repeats
//	memory   the loading study's question under a memory limit: a
//	         (device, time) index, 1,000 and 100,000 devices, the server in
//	         a 128 MB cgroup; timescaledb at its default chunk and at the
//	         pgts store's partition length
//	insert   the insert benchmark's steps on a plain and a series table,
//	         alternately: plain, pgts, pgts, plain
//	events   the field report's event workload: 16 single-row sessions,
//	         2 kB documents, plain and weekly series table, 192 MB server;
//	         twice, the stores in alternating order

// Study sizes: full is the seed's parameters (an hour or more on two
// cores), small a few minutes on two cores (a fiftieth of the loading
// study's rows per run, a tenth of the others': a first look, noisier
// than full), tiny a few thousand rows per run (seconds: for tests and a
// check that everything runs; its figures measure nothing).
var StudySizes = []string{"full", "small", "tiny"}

// StudyOptions are the choices a study leaves to its caller.
type StudyOptions struct {
	Size    string // one of StudySizes
	Workers int    // N of "1 and N workers": the machine's cores
	// TimescaleChunks are the loading study's chunk intervals of the
	// timescaledb store (0: TimescaleDB's default); nil is the default.
	TimescaleChunks []time.Duration
	Repeat          int // repeats of the load studies; 0 is the study's own
}

// StudyPart is one scenario of a study and its results directory's name.
// Exactly one of Load, Insert and Events is set.
type StudyPart struct {
	Name   string
	Load   *LoadScenario
	Insert *InsertScenario
	Events *EventsScenario
	// MemoryLimit is the server memory limit the seed ran under (e.g.
	// "128MB"); "" for none.
	MemoryLimit string
}

// Study is one entry of the registry.
type Study struct {
	Name  string
	Short string // one line for listings
	Seed  string // the experiment it reproduces and its parameters, for --help
	parts func(o StudyOptions) []StudyPart
}

// Parts returns the study's scenarios for the options, each validated.
func (st Study) Parts(o StudyOptions) ([]StudyPart, error) {
	if !contains(StudySizes, o.Size) {
		return nil, fmt.Errorf("size %q: choose %s", o.Size, strings.Join(StudySizes, ", "))
	}
	if o.Workers < 1 || o.Workers > 64 {
		return nil, fmt.Errorf("workers %d: must be between 1 and 64", o.Workers)
	}
	if o.Repeat < 0 {
		return nil, fmt.Errorf("repeat %d: must be at least 1", o.Repeat)
	}
	parts := st.parts(o)
	for _, p := range parts {
		var err error
		switch {
		case p.Load != nil:
			if o.Repeat > 0 {
				p.Load.Repeat = o.Repeat
			}
			err = p.Load.Validate()
		case p.Insert != nil:
			err = p.Insert.Validate()
		case p.Events != nil:
			err = p.Events.Validate()
		}
		if err != nil {
			return nil, fmt.Errorf("study %s, part %s: %w", st.Name, p.Name, err)
		}
	}
	return parts, nil
}

// Studies is the registry of `pgts bench study`.
var Studies = []Study{
	{Name: "loading", Short: "the loading study: stores plain, weekly, monthly, timescaledb, pgts; psql COPY against pgts load with 1 and N workers",
		Seed: `The Postgres-vs-TimescaleDB loading study on its conditions table (time,
device, data1..data5; 1,000 devices): 10 M rows (1,000 batches of 10,000)
into each store (plain, weekly and monthly native partitions, a TimescaleDB
hypertable at --timescaledb-chunk, a pgts series table with weekly
partitions), index on time, by psql's COPY and by pgts' binary COPY with 1
and N workers, 3 interleaved repeats. Charts: per-batch speed over the run
and sorted.`,
		parts: loadingStudy},
	{Name: "memory", Short: "loading under a 128 MB server with a (device, time) index, 1,000 and 100,000 devices",
		Seed: `The loading study's question, does loading slow down when the index
outgrows memory: a (device, time) index, 10 M rows with 100,000 and then
1,000 devices, pgts' binary COPY with N workers, the server in a 128 MB
memory cgroup (embedded cluster only); stores plain, weekly, pgts with
1-hour partitions, and TimescaleDB at its default 7-day chunk and at 1 hour.
The verdict states each store's end/start rate.`,
		parts: memoryStudy},
	{Name: "insert", Short: "the insert benchmark's steps on a plain table and on a series table side by side",
		Seed: `The insert benchmark (iibench) on its purchases table, on a plain table and
on a pgts series table (1-second partitions, 100,000 rows each): 500,000
rows loaded, 100,000 more, then 20 s of each read+write step at 100, 500
and 1,000 inserts/s; twice, alternately (plain, pgts, pgts, plain;
--repeat for more). The verdict compares each step's rate.`,
		parts: insertStudy},
	{Name: "events", Short: "the field report's event workload: 16 single-row sessions, 2 kB JSON, plain and series table",
		Seed: `The field report's audit-event workload: 16 sessions, one row per
transaction, 2 kB JSON documents, 500,000 rows into a plain table and into
a weekly pgts series table (100,000 rows a week), checkpoints every 5 min,
the server in a 192 MB memory cgroup (embedded cluster only); twice, the
stores in alternating order (--repeat for more).`,
		parts: eventsStudy},
}

// StudyByName returns the study of that name.
func StudyByName(name string) (Study, bool) {
	for _, st := range Studies {
		if st.Name == name {
			return st, true
		}
	}
	return Study{}, false
}

// StudyNames lists the studies' names.
func StudyNames() []string {
	var out []string
	for _, st := range Studies {
		out = append(out, st.Name)
	}
	return out
}

// bySize picks the figure of a size: full, small, tiny.
func bySize[T any](size string, full, small, tiny T) T {
	switch size {
	case "small":
		return small
	case "tiny":
		return tiny
	}
	return full
}

func loadingStudy(o StudyOptions) []StudyPart {
	workers := []int{1}
	if o.Workers > 1 {
		workers = append(workers, o.Workers)
	}
	chunks := o.TimescaleChunks
	if len(chunks) == 0 {
		chunks = []time.Duration{0}
	}
	return []StudyPart{{Name: "loading", Load: &LoadScenario{
		Stores: []string{"plain", "weekly", "monthly", "timescaledb", "pgts"}, Loaders: []string{"psql-copy", "pgts-binary"},
		Workers: workers, Width: 5, Batches: bySize[int64](o.Size, 1000, 20, 1), Index: "time",
		Repeat: bySize(o.Size, 3, 3, 2), TimescaleChunks: chunks}}}
}

func memoryStudy(o StudyOptions) []StudyPart {
	var out []StudyPart
	for _, d := range []int{100_000, 1000} {
		out = append(out, StudyPart{Name: fmt.Sprintf("memory-%d", d), MemoryLimit: "128MB", Load: &LoadScenario{
			Stores: []string{"plain", "weekly", "pgts", "timescaledb"}, Loaders: []string{"pgts-binary"}, Workers: []int{o.Workers},
			Width: 5, Batches: bySize[int64](o.Size, 1000, 100, 1), Index: "device,time", Repeat: 1, Devices: d,
			Interval: time.Hour, TimescaleChunks: []time.Duration{0, time.Hour}}})
	}
	return out
}

// insertStudy runs the plain and the pgts table alternately, plain, pgts,
// pgts, plain, …, so that a slow spell of the machine weighs on both
// kinds alike; the report pairs the runs of each kind in order.
func insertStudy(o StudyOptions) []StudyPart {
	reps := o.Repeat
	if reps == 0 {
		reps = bySize(o.Size, 2, 2, 1)
	}
	var out []StudyPart
	for rep := 1; rep <= reps; rep++ {
		kinds := []string{"plain", "pgts"}
		if rep%2 == 0 {
			kinds = []string{"pgts", "plain"}
		}
		for _, kind := range kinds {
			s := DefaultInsertScenario()
			s.TableKind = kind
			s.RowsLoad = bySize[int64](o.Size, 500_000, 100_000, 2000)
			s.RowsMore = bySize[int64](o.Size, 100_000, 20_000, 500)
			s.QueryTime = bySize(o.Size, 20*time.Second, 5*time.Second, time.Second)
			s.QueryRates = bySize(o.Size, []int{100, 500, 1000}, []int{100, 500, 1000}, []int{100})
			name := "insert-" + kind
			if reps > 1 {
				name += "-" + strconv.Itoa(rep)
			}
			out = append(out, StudyPart{Name: name, Insert: &s})
		}
	}
	return out
}

// eventsStudy runs the stores twice (full and small), in alternating
// order, plain then pgts, then pgts then plain.
func eventsStudy(o StudyOptions) []StudyPart {
	reps := o.Repeat
	if reps == 0 {
		reps = bySize(o.Size, 2, 2, 1)
	}
	var out []StudyPart
	for rep := 1; rep <= reps; rep++ {
		s := DefaultEventsScenario()
		s.Stores = []string{"plain", "pgts"}
		if rep%2 == 0 {
			s.Stores = []string{"pgts", "plain"}
		}
		s.Sessions = bySize(o.Size, 16, 16, 4)
		s.Rows = bySize[int64](o.Size, 500_000, 20_000, 2000)
		s.WeekRows = bySize[int64](o.Size, 100_000, 10_000, 500)
		s.DocBytes = 2048
		s.CheckpointTimeout = bySize(o.Size, 5*time.Minute, 5*time.Minute, 0)
		name := "events"
		if reps > 1 {
			name += "-" + strconv.Itoa(rep)
		}
		out = append(out, StudyPart{Name: name, Events: &s, MemoryLimit: "192MB"})
	}
	return out
}
