package influx

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/ingest"
)

// benchBody returns n lines as Telegraf writes them: 100 hosts, three
// tags, four numeric fields and one string field per line.
func benchBody(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "cpu,cpu=cpu-total,host=web%02d,region=eu-west-1 usage_user=%d.5,usage_system=1.25,usage_idle=97i,ok=true,note=\"fine\" %d\n",
			i%100, i, 1700000000000000000+int64(i)*1e9)
	}
	return b.String()
}

func BenchmarkDecode(b *testing.B) {
	body := []byte(benchBody(1000))
	d, err := NewDecoder(ingest.DefaultLimits(), now)
	if err != nil {
		b.Fatal(err)
	}
	dst, _, err := d.Decode(nil, body, Nanosecond) // warm the caches and dst
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if dst, _, err = d.Decode(dst[:0], body, Nanosecond); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(dst)), "ns/point")
}
