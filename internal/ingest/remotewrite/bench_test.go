package remotewrite

import (
	"fmt"
	"testing"

	"github.com/klauspost/compress/snappy"

	"github.com/pgts/pgts/internal/ingest"
)

// benchRequest is a request as Prometheus sends one: 500 series of five
// labels with 2 samples each (its max_samples_per_send is 2,000).
func benchRequest() []byte {
	var ss []Series
	for i := range 500 {
		ss = append(ss, Series{
			Labels: []ingest.Tag{{Key: "__name__", Value: "http_requests_total"}, {Key: "code", Value: fmt.Sprint(200 + i%5)},
				{Key: "instance", Value: fmt.Sprintf("10.0.%d.%d:9090", i/100, i%100)}, {Key: "job", Value: "api"},
				{Key: "method", Value: "GET"}},
			Samples: []Sample{{Value: float64(i), Time: 1700000000000}, {Value: float64(i + 1), Time: 1700000015000}},
		})
	}
	return AppendWriteRequest(nil, ss)
}

func BenchmarkDecode(b *testing.B) {
	req := benchRequest()
	body := snappy.Encode(nil, req)
	d, err := NewDecoder(ingest.DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	dst, _, err := d.Decode(nil, body) // warm the caches and dst
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if dst, _, err = d.Decode(dst[:0], body); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(dst)), "ns/point")
	b.ReportMetric(float64(len(req)), "decoded-bytes")
}

func BenchmarkAppendWriteRequest(b *testing.B) {
	var ss []Series
	for i := range 500 {
		ss = append(ss, Series{
			Labels:  []ingest.Tag{{Key: "__name__", Value: "http_requests_total"}, {Key: "instance", Value: fmt.Sprint(i)}},
			Samples: []Sample{{Value: float64(i), Time: 1700000000000}, {Value: 2, Time: 1700000015000}},
		})
	}
	buf := AppendWriteRequest(nil, ss)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendWriteRequest(buf[:0], ss)
	}
}
