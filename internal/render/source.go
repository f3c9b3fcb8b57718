package render

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
)

// Node is one result of a metric search: a full dot-separated path and
// whether it is a metric with data (leaf) or a branch with children. A path
// that is both appears twice, once each way.
type Node struct {
	Path string
	Leaf bool
}

// Series is stored data for one metric: Values[i] is the value at
// Start + i*Step, unix seconds; NaN is a missing point.
type Series struct {
	Name   string
	Start  int64
	Step   int64
	Values []float64
	// Total is the length of the whole series when Values is a cut of it
	// ([WindowSource]); 0 otherwise.
	Total int
}

// Source is the storage the API reads. Implementations must be safe for
// concurrent use and return fresh slices: the API may modify Values in
// place and does not retain anything after the request.
type Source interface {
	// Find returns the nodes matching a Graphite glob (see [Glob]),
	// branches and leaves, in any order.
	Find(ctx context.Context, pattern string) ([]Node, error)
	// Fetch returns the named metrics over (from, until], unix seconds,
	// choosing the resolution (raw or an archive) that fits the range;
	// maxDataPoints is the client's hint (0: none). Every returned series
	// should cover the same range; metrics without data may be omitted.
	Fetch(ctx context.Context, names []string, from, until int64, maxDataPoints int) ([]Series, error)
}

// NowSource is a [Source] that can choose the resolution as of a given
// clock instead of its own. graphite-web asks whisper for the archive
// that covers now - from with now the request's "now" parameter when
// given (so a shifted range such as timeShift's is judged against the
// same now as the request's own); the API calls FetchAt with that now,
// unix seconds, when its Source implements it, and Fetch otherwise.
type NowSource interface {
	Source
	FetchAt(ctx context.Context, names []string, from, until, now int64, maxDataPoints int) ([]Series, error)
}

// WindowSource is a [Source] that can return a cut of the values Fetch
// would return: FetchWindow returns, for each series FetchAt(names, from,
// until, now, maxDataPoints) would return, its values at indexes [lo, hi)
// (fewer when it is shorter) with Start the time of index lo and Total the
// length of the whole series, reading only those slots; Values may be nil
// when none of them holds a value (a cut before the data of a long
// range), which the fold skips without a value to allocate. The API folds
// aggregates over many series one cut at a time (funcs_stream.go).
type WindowSource interface {
	Source
	FetchWindow(ctx context.Context, names []string, from, until, now int64, maxDataPoints, lo, hi int) ([]Series, error)
}

// MemSource is an in-memory [Source] for tests and demos: a fixed set of
// metrics at one step each. Fetch returns the points whose timestamps fall
// in (from, until], aligned like Graphite's whisper files: the first point
// is the step boundary after from, nulls where nothing was stored.
// Safe for concurrent use.
type MemSource struct {
	mu      sync.RWMutex
	metrics map[string]memMetric
}

type memMetric struct {
	step   int64
	points map[int64]float64
}

// NewMemSource returns an empty MemSource.
func NewMemSource() *MemSource {
	return &MemSource{metrics: map[string]memMetric{}}
}

// Add stores values for name at step seconds, the first at time start
// (rounded down to the step); NaN values are not stored.
func (m *MemSource) Add(name string, start, step int64, values ...float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mm, ok := m.metrics[name]
	if !ok {
		mm = memMetric{step: step, points: map[int64]float64{}}
		m.metrics[name] = mm
	}
	start -= start % step
	for i, v := range values {
		if !math.IsNaN(v) {
			mm.points[start+int64(i)*step] = v
		}
	}
}

// Find implements [Source].
func (m *MemSource) Find(ctx context.Context, pattern string) ([]Node, error) {
	g, err := CompileGlob(pattern)
	if err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	seen := map[Node]bool{}
	for name := range m.metrics {
		if strings.Contains(name, ";") {
			continue // tagged: outside the tree
		}
		parts := strings.Split(name, ".")
		if len(parts) < g.Nodes() {
			continue
		}
		ok := true
		for i := 0; i < g.Nodes() && ok; i++ {
			ok = g.MatchNode(i, parts[i])
		}
		if ok {
			seen[Node{Path: strings.Join(parts[:g.Nodes()], "."), Leaf: len(parts) == g.Nodes()}] = true
		}
	}
	out := make([]Node, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return !out[i].Leaf
	})
	return out, nil
}

// Fetch implements [Source].
func (m *MemSource) Fetch(ctx context.Context, names []string, from, until int64, maxDataPoints int) ([]Series, error) {
	if until <= from {
		return nil, fmt.Errorf("fetching: empty range (%d, %d]", from, until)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []Series
	for _, name := range names {
		mm, ok := m.metrics[name]
		if !ok {
			continue
		}
		start := from - from%mm.step + mm.step
		end := until - until%mm.step + mm.step
		n := (end - start) / mm.step
		s := Series{Name: name, Start: start, Step: mm.step, Values: make([]float64, n)}
		for i := range s.Values {
			v, ok := mm.points[start+int64(i)*mm.step]
			if !ok {
				v = math.NaN()
			}
			s.Values[i] = v
		}
		out = append(out, s)
	}
	return out, nil
}
