package gen

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// FuzzOptions feeds arbitrary options to every kind: New either refuses
// them or makes a generator whose first and last rows (generated on their
// own, without the rows between) have times inside the years 1 to 9999
// and encode and print without panicking.
func FuzzOptions(f *testing.F) {
	f.Add(uint8(0), int64(0), int64(0), 0, 0, 0, uint64(0), int64(0))
	f.Add(uint8(0), int64(0), int64(MaxBatches), 1, 5, 1000, uint64(1), int64(0))
	f.Add(uint8(0), int64(MaxRows), int64(0), 10000, 1598, 1<<31-1, uint64(1), int64(-62135596800))
	f.Add(uint8(1), int64(MaxRows), int64(0), 0, 0, 0, uint64(7), int64(253402300799))
	f.Add(uint8(2), int64(1<<39), int64(0), 0, 0, 0, uint64(1<<63), int64(-62135596798))
	f.Add(uint8(2), int64(-1), int64(-1), -1, -1, -1, uint64(0), int64(1<<62))
	f.Fuzz(func(t *testing.T, k uint8, rows, batches int64, batchRows, width, devices int, seed uint64, startSec int64) {
		kind := Kinds()[int(k)%len(Kinds())]
		o := Options{Seed: seed, Rows: rows, Batches: batches, BatchRows: batchRows, Width: width, Devices: devices}
		if startSec != 0 {
			o.Start = time.Unix(startSec, 0)
		}
		mk, total, err := factory(kind, o)
		if err != nil {
			return
		}
		if total < 1 || total > MaxRows {
			t.Fatalf("%s %+v: %d rows", kind, o, total)
		}
		for _, r := range []int64{0, total - 1} {
			g := mk(r, r+1)
			if !g.Next() {
				t.Fatalf("%s %+v: no row %d", kind, o, r)
			}
			if m := g.Time(); m < minMicros || m >= endMicros {
				t.Fatalf("%s %+v: row %d at %d, outside the years 1 to 9999", kind, o, r, m)
			}
			g.Encode(&discard{})
			var out bytes.Buffer
			if err := WriteText(context.Background(), &out, mk(r, r+1)); err != nil || out.Len() == 0 || out.Bytes()[out.Len()-1] != '\n' {
				t.Fatalf("%s %+v: text of row %d: %q, %v", kind, o, r, out.String(), err)
			}
		}
	})
}

// FuzzSplit checks, for small outputs of arbitrary shape, that the parts
// of Split together produce exactly the unsplit rows.
func FuzzSplit(f *testing.F) {
	f.Add(uint8(0), uint16(2500), uint16(1000), uint8(5), uint16(7), uint8(3), uint64(1), int64(0))
	f.Add(uint8(1), uint16(999), uint16(0), uint8(0), uint16(0), uint8(16), uint64(99), int64(1700000000))
	f.Add(uint8(2), uint16(301), uint16(0), uint8(0), uint16(0), uint8(4), uint64(5), int64(-1000000000))
	f.Fuzz(func(t *testing.T, k uint8, rows, batchRows uint16, width uint8, devices uint16, n uint8, seed uint64, startSec int64) {
		kind := Kinds()[int(k)%len(Kinds())]
		o := Options{Seed: seed, Rows: int64(rows%3000) + 1, BatchRows: int(batchRows % 2000), Width: int(width % 16),
			Devices: int(devices), Start: time.Unix(startSec%(200*365*86400), 0)}
		if kind == "events" {
			o.Rows %= 300
			o.Rows++
		}
		if _, _, err := factory(kind, o); err != nil {
			return
		}
		checkSplit(t, kind, o, int(n%16)+1)
	})
}
