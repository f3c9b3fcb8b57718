package rra

import (
	"syscall"
	"testing"
	"time"
)

// cpuNanos is the CPU time the process has used, user and system.
func cpuNanos() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// benchSchema is a typical daemon rule: 10 s PDPs, three archives.
func benchSchema(b *testing.B) *Schema {
	return mustSchema(b, 10*time.Second, 2*time.Hour, "10s:6h", "1m:7d", "max:1h:30d", "1h:1y")
}

// benchmarkAddPoint feeds points every interval to series DSs in turn,
// draining each DS's closed slots into one reused buffer after every
// point, as the daemon's write-back cache would.
func benchmarkAddPoint(b *testing.B, series int, interval time.Duration) {
	sc := benchSchema(b)
	ds := make([]*DS, series)
	for i := range ds {
		ds[i] = NewDS(sc)
	}
	// Warm up: a few points across an hour boundary, where every
	// archive closes a slot, start every DS and size its buffers.
	t := us(1_700_002_800) - 2*interval.Microseconds()
	dt := interval.Microseconds()
	var buf []Update
	for range max(4, 1000/series) {
		t += dt
		for _, d := range ds {
			_ = d.AddPoint(t, 42)
			buf = d.ClosedSlots(buf[:0])
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	i, v := len(ds), 0.0
	for range b.N {
		if i == len(ds) {
			i = 0
			t += dt
		}
		d := ds[i]
		v += 0.25
		if err := d.AddPoint(t, v); err != nil {
			b.Fatal(err)
		}
		buf = d.ClosedSlots(buf[:0])
		i++
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "points/s")
}

// One series, a point per PDP: every point closes a PDP and a 10 s slot.
func BenchmarkAddPoint(b *testing.B) { benchmarkAddPoint(b, 1, 10*time.Second) }

// One series, three points per PDP: most points only update the open PDP.
func BenchmarkAddPointWithinStep(b *testing.B) { benchmarkAddPoint(b, 1, 3333*time.Millisecond) }

// 300,000 series, a point per PDP each, in turn: the daemon's target
// load, with the cache misses of a large working set.
func BenchmarkAddPoint300kSeries(b *testing.B) { benchmarkAddPoint(b, 300_000, 10*time.Second) }

func BenchmarkParseArchiveSpec(b *testing.B) {
	const spec = "max:1h:30d:0.5"
	b.SetBytes(int64(len(spec)))
	b.ReportAllocs()
	for range b.N {
		if _, err := ParseArchiveSpec(spec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseDuration(b *testing.B) {
	const d = "1h30m"
	b.SetBytes(int64(len(d)))
	b.ReportAllocs()
	for range b.N {
		if _, err := ParseDuration(d); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendBinary(b *testing.B) {
	d := NewDS(benchSchema(b))
	for i := range 1000 {
		if err := d.AddPoint(us(1.7e9+float64(i)*7), float64(i)); err != nil {
			b.Fatal(err)
		}
	}
	d.ClosedSlots(nil)
	buf, _ := d.AppendBinary(nil)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for range b.N {
		buf, _ = d.AppendBinary(buf[:0])
	}
}

func BenchmarkUnmarshalBinary(b *testing.B) {
	sc := benchSchema(b)
	d := NewDS(sc)
	for i := range 1000 {
		if err := d.AddPoint(us(1.7e9+float64(i)*7), float64(i)); err != nil {
			b.Fatal(err)
		}
	}
	d.ClosedSlots(nil)
	state, _ := d.MarshalBinary()
	b.SetBytes(int64(len(state)))
	b.ReportAllocs()
	r := NewDS(sc)
	for range b.N {
		if err := r.UnmarshalBinary(state); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutGraphite is the daemon's steady state in Graphite
// consolidation, as pgts bench serve runs it: 20,000 series of the issue's
// retentions (10s:6h, 1m:7d, 1h:1y), a point every 2 s each, in the second
// half of an hour (the hour's slot is recomputed from its minutes at
// every point: their running aggregate and the latest); every 10 s of points, each DS hands its closed slots over
// as the store's flush takes them (ClosedSlots(nil)).
func BenchmarkPutGraphite(b *testing.B) {
	sc := graphiteSchema(b, "average", "10s:6h", "1m:7d", "1h:1y")
	const series = 20_000
	ds := make([]*DS, series)
	for i := range ds {
		ds[i] = NewDS(sc)
	}
	sec := int64(1_700_002_800 + 1800)
	i, n := 0, 0
	put := func() {
		t := sec*1e6 + int64(i%2)*1e6
		if err := ds[i].Put(t, float64((i*7+int(sec))%1000)/10, t); err != nil {
			b.Fatal(err)
		}
		if i++; i == series {
			i, sec = 0, sec+2
			if n++; n == 5 {
				n = 0
				for _, d := range ds {
					_ = d.ClosedSlots(nil)
				}
			}
		}
	}
	for range 30 * series { // warm up: a minute of points
		put()
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuNanos()
	for range b.N {
		put()
	}
	// CPU time, not wall time: on a machine shared with other work the
	// wall time per point varies with the others' load.
	b.ReportMetric(float64(cpuNanos()-cpu)/float64(b.N), "cpu-ns/point")
}
