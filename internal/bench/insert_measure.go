package bench

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency is a response-time distribution in microseconds, kept as an
// HdrHistogram (1 µs to 10 min, 3 significant digits): the summary
// percentiles, the non-empty buckets for plotting, and the histogram
// itself in HdrHistogram's compressed V2 encoding, base64, for tools that
// read it (HistogramLogAnalyzer, hdrhistogram-go Decode).
type Latency struct {
	Count   int64        `json:"count"`
	MinUS   int64        `json:"min_us"`
	MeanUS  float64      `json:"mean_us"`
	P50US   int64        `json:"p50_us"`
	P90US   int64        `json:"p90_us"`
	P99US   int64        `json:"p99_us"`
	P999US  int64        `json:"p999_us"`
	MaxUS   int64        `json:"max_us"`
	Buckets []LatencyBar `json:"buckets,omitempty"`
	HdrV2   string       `json:"hdr_v2,omitempty"`
}

// LatencyBar is one bucket of a Latency: Count responses took From to To
// microseconds.
type LatencyBar struct {
	From  int64 `json:"from_us"`
	To    int64 `json:"to_us"`
	Count int64 `json:"count"`
}

const maxLatencyUS = int64(10 * time.Minute / time.Microsecond)

// latencyRecorder collects response times; safe for concurrent use.
type latencyRecorder struct {
	mu sync.Mutex
	h  *hdrhistogram.Histogram
}

func newLatencyRecorder() *latencyRecorder {
	return &latencyRecorder{h: hdrhistogram.New(1, maxLatencyUS, 3)}
}

func (r *latencyRecorder) record(d time.Duration) {
	us := min(max(d.Microseconds(), 1), maxLatencyUS)
	r.mu.Lock()
	_ = r.h.RecordValue(us) // in range by construction
	r.mu.Unlock()
}

// latency summarises what was recorded; nil when nothing was.
func (r *latencyRecorder) latency() *Latency {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.h
	if h.TotalCount() == 0 {
		return nil
	}
	l := &Latency{Count: h.TotalCount(), MinUS: h.Min(), MeanUS: h.Mean(), P50US: h.ValueAtPercentile(50),
		P90US: h.ValueAtPercentile(90), P99US: h.ValueAtPercentile(99), P999US: h.ValueAtPercentile(99.9), MaxUS: h.Max()}
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			l.Buckets = append(l.Buckets, LatencyBar{From: b.From, To: b.To, Count: b.Count})
		}
	}
	if enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
		l.HdrV2 = string(enc) // already base64
	}
	return l
}

// perSecond counts operations by the whole second of the step they
// completed in; safe for concurrent use.
type perSecond struct {
	mu     sync.Mutex
	start  time.Time
	counts []int64
}

func newPerSecond(start time.Time) *perSecond { return &perSecond{start: start} }

func (p *perSecond) add(at time.Time, n int64) {
	s := int(at.Sub(p.start) / time.Second)
	if s < 0 {
		s = 0
	}
	p.mu.Lock()
	for len(p.counts) <= s {
		p.counts = append(p.counts, 0)
	}
	p.counts[s] += n
	p.mu.Unlock()
}

// seconds returns the counts of the whole seconds of a step that lasted
// elapsed: a last, partial second is left out (it would read as a stall),
// unless the step lasted less than a second, when its one count is scaled
// to a rate.
func (p *perSecond) seconds(elapsed time.Duration) []float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	whole := int(elapsed / time.Second)
	if whole == 0 {
		if len(p.counts) == 0 || elapsed <= 0 {
			return nil
		}
		return []float64{float64(p.counts[0]) / elapsed.Seconds()}
	}
	out := make([]float64, whole)
	for i := 0; i < whole && i < len(p.counts); i++ {
		out[i] = float64(p.counts[i])
	}
	return out
}

// Percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// v, 0 for none. v is not modified.
func Percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	c := slices.Clone(v)
	slices.Sort(c)
	k := int(p/100*float64(len(c))+0.999999999) - 1
	return c[min(max(k, 0), len(c)-1)]
}

// hostBusySeconds is the CPU time the whole host spent not idle (all
// CPUs, /proc/stat: user+nice+system+irq+softirq+steal), in seconds.
func hostBusySeconds() (float64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var busy int64
	for i, x := range f[1:9] {
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %w", err)
		}
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		busy += n
	}
	return float64(busy) / clockTicks, nil
}
