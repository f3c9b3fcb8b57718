package bench

import (
	"github.com/pgts/pgts/internal/copyenc"
	"github.com/pgts/pgts/internal/gen"
)

// spreadDevices wraps a conditions generator so that its device column
// cycles through 1..devices over the whole run, row n (from 0) getting
// device 1 + n % devices. The study's generator numbers devices within
// each 10,000-row batch (1 + j % D), which never reaches a device above
// 10,000; for a D that divides 10,000 both give the same rows. Every
// other column is the wrapped generator's. Not safe for concurrent use
// (nor is the generator).
type spreadDevices struct {
	gen.Generator
	devices int64
	row     int64 // rows returned so far
	w       deviceWriter
}

// withDevices returns g with its devices spread over the run when devices
// is set, else g itself.
func withDevices(g gen.Generator, devices int) gen.Generator {
	if devices <= 0 {
		return g
	}
	return &spreadDevices{Generator: g, devices: int64(devices)}
}

// Next implements gen.Generator.
func (g *spreadDevices) Next() bool {
	if !g.Generator.Next() {
		return false
	}
	g.row++
	return true
}

// Encode implements gen.Generator: the wrapped row with this row's device.
func (g *spreadDevices) Encode(w copyenc.FieldWriter) {
	g.w.FieldWriter, g.w.device = w, int32(1+(g.row-1)%g.devices)
	g.Generator.Encode(&g.w)
}

// deviceWriter passes fields through, replacing the only integer column
// of conditions, the device.
type deviceWriter struct {
	copyenc.FieldWriter
	device int32
}

func (w *deviceWriter) Int4(int32) { w.FieldWriter.Int4(w.device) }
