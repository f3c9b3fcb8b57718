package copyload

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/copyenc"
	"github.com/pgts/pgts/internal/records"
)

// benchConditionsCSV is rows of the conditions generator's shape, as CSV.
func benchConditionsCSV(rows int) []byte {
	var b bytes.Buffer
	t0 := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range rows {
		d := i % 1000
		fmt.Fprintf(&b, "%s,%d,%.2f,%.2f,%.2f,%.2f,%.2f\n", t0.Add(time.Duration(i/1000)*6*time.Second).Format("2006-01-02 15:04:05.000000"),
			d+1, float64(d%97)/100, float64(d%89)/10, float64(d%83), float64(d%79)/1000, float64(i%71)/7)
	}
	return b.Bytes()
}

// benchFileLoader is a Loader of the conditions columns into a plain table
// whose batches are dropped instead of sent: the client side of a file
// load (read, parse, encode, route, batch) without a server.
func benchFileLoader(b *testing.B) (*Loader, func()) {
	lookup := func(oid uint32) copyenc.Codec {
		c, ok := copyenc.Lookup(copyenc.TypeInfo{OID: oid})
		if !ok {
			b.Fatalf("no codec for oid %d", oid)
		}
		return c
	}
	cols := []Column{{Name: "time", NotNull: true, Codec: lookup(1184)}, {Name: "device", NotNull: true, Codec: lookup(23)}}
	for i := 1; i <= 5; i++ {
		cols = append(cols, Column{Name: fmt.Sprintf("data%d", i), Codec: lookup(701)})
	}
	cfg := DefaultConfig()
	cfg.Now = time.Now
	l := &Loader{target: &Target{Schema: "public", Name: "conditions", Columns: cols, binaryOK: true}, cfg: cfg,
		log: slog.New(slog.DiscardHandler), binary: true, cols: cols}
	l.queue = make(chan *batch, 2)
	l.free = make(chan *batch, 8)
	done := make(chan struct{})
	go func() {
		for bt := range l.queue {
			l.release(bt)
		}
		close(done)
	}()
	return l, func() { close(l.queue); <-done }
}

// BenchmarkFileParse measures the client side of `pgts load FILE` on
// conditions CSV with one parser per GOMAXPROCS: run it with -cpu 1,2 to
// compare the wall time per row (ns/row; an op is a row). cpu-ns/row is
// the process's CPU time (user and system) per row over the same span:
// twice ns/row when the two parsers keep both cores busy, so that a
// -cpu 2 run whose ns/row is not half of -cpu 1's shows whether the cores
// idled or each row cost more. Each input is
// 1 M rows (70 MB, 140 chunks), so that the filling and draining of the
// parsers at its start and end weigh on it as little as on a real file.
func BenchmarkFileParse(b *testing.B) {
	data := benchConditionsCSV(1_000_000)
	l, stop := benchFileLoader(b)
	defer stop()
	b.ReportAllocs()
	b.ResetTimer() // the CSV's making is not the client's work
	var ru0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	rows := 0
	for rows < b.N {
		rd, err := records.NewReader(bytes.NewReader(data), records.DefaultOptions(records.CSV))
		if err != nil {
			b.Fatal(err)
		}
		src := &FileSource{Inputs: []Input{{Name: "bench", Reader: rd}}, Columns: []int{0, 1, 2, 3, 4, 5, 6}, Parsers: runtime.GOMAXPROCS(0)}
		r := newRouter(l)
		if err := src.Run(context.Background(), r); err != nil {
			b.Fatal(err)
		}
		if err := r.flushAll(context.Background()); err != nil {
			b.Fatal(err)
		}
		rows += 1_000_000
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
	var ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := (ru1.Utime.Nano() - ru0.Utime.Nano()) + (ru1.Stime.Nano() - ru0.Stime.Nano())
	b.ReportMetric(float64(cpu)/float64(rows), "cpu-ns/row")
	if got := l.read.Load(); got != int64(rows) || l.rejected.Load() != 0 {
		b.Fatalf("read %d rows (%d rejected), want %d", got, l.rejected.Load(), rows)
	}
}
