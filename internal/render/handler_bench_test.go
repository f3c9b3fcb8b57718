package render

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// benchGlobSource holds the 100 series of make bench-render's glob: 6 h
// of ten-second slots (2,160) ending at testNow, one point a minute
// (five slots in six null), as the store's finest archive holds them.
func benchGlobSource() *MemSource {
	src := NewMemSource()
	const n = 2160
	start := testNow.Unix()/10*10 - n*10
	for i := range 100 {
		vals := make([]float64, n)
		for k := range vals {
			vals[k] = math.NaN()
			if k%6 == 0 {
				vals[k] = float64((i*7+k)%1000) / 8
			}
		}
		src.Add(fmt.Sprintf("bench.glob.s%d", i), start, 10, vals...)
	}
	return src
}

// BenchmarkRenderHandler serves the glob over 100 series × 6 h through
// the handler (form parsing, fetch from memory, evaluation,
// consolidation to maxDataPoints=1000 as Grafana asks, encoding) in each
// text format; format=raw and csv do not consolidate.
//
//	go test ./internal/render -run '^$' -bench RenderHandler -cpuprofile cpu.out
func BenchmarkRenderHandler(b *testing.B) {
	h := testHandler(b, benchGlobSource())
	for _, format := range []string{"json", "raw", "csv"} {
		b.Run(format, func(b *testing.B) {
			q := url.Values{"target": {"bench.glob.*"}, "from": {"-6h"}, "format": {format}, "maxDataPoints": {"1000"}}
			target := "/render?" + q.Encode()
			b.ReportAllocs()
			var n int
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
				if w.Code != http.StatusOK {
					b.Fatal(w.Body.String())
				}
				n = w.Body.Len()
			}
			b.ReportMetric(float64(n), "bytes/op")
		})
	}
}
