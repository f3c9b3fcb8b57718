package gen

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDefaultOptions(t *testing.T) {
	for _, kind := range Kinds() {
		o, err := DefaultOptions(kind)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if err := o.Validate(); err != nil {
			t.Errorf("%s: defaults invalid: %v", kind, err)
		}
		// Spelled-out defaults and zero fields give the same rows.
		ga, gb := mustNew(t, kind, o), mustNew(t, kind, Options{Seed: o.Seed})
		if ga.Rows() != gb.Rows() {
			t.Errorf("%s: %d rows by default, %d for zero Options", kind, ga.Rows(), gb.Rows())
		}
		ra, rb := newRecorder(t), newRecorder(t)
		for k := 0; k < 2000 && ga.Next() && gb.Next(); k++ {
			ga.Encode(ra)
			gb.Encode(rb)
		}
		if string(ra.buf) != string(rb.buf) {
			t.Errorf("%s: DefaultOptions and zero Options differ", kind)
		}
	}
	if _, err := DefaultOptions("metrics"); !errors.Is(err, ErrUnknownKind) || !strings.Contains(err.Error(), `"metrics"`) {
		t.Errorf("unknown kind: %v", err)
	}
	if _, err := New("", Options{}); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("New with no kind: %v", err)
	}
	if !slices.Equal(Kinds(), []string{"conditions", "iibench", "events"}) {
		t.Errorf("Kinds() = %v", Kinds())
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string // substring of the error; "" = valid
	}{
		{"zero", Options{}, ""},
		{"negative rows", Options{Rows: -1}, "rows -1"},
		{"too many rows", Options{Rows: MaxRows + 1}, "rows"},
		{"negative batches", Options{Batches: -2}, "batches -2"},
		{"too many batches", Options{Batches: MaxBatches + 1}, "batches"},
		{"negative batch rows", Options{BatchRows: -1}, "batch rows"},
		{"negative width", Options{Width: -1}, "width"},
		{"too wide", Options{Width: MaxWidth + 1}, "width"},
		{"negative devices", Options{Devices: -1}, "devices"},
		{"year 0", Options{Start: time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC)}, "start"},
		{"year 10000", Options{Start: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, "start"},
		{"far future", Options{Start: time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC)}, "start"},
		{"year 1", Options{Start: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)}, ""},
		{"zoned start", Options{Start: time.Date(2024, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600))}, ""},
	}
	for _, tt := range tests {
		err := tt.o.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: err %v, want one mentioning %q", tt.name, err, tt.want)
		}
	}
}

// TestTimeLimits checks that New refuses options whose rows would leave
// the years 1 to 9999, for every kind.
func TestTimeLimits(t *testing.T) {
	late := time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC)
	early := time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC)
	tests := []struct {
		kind string
		o    Options
		ok   bool
	}{
		{"iibench", Options{Start: late, Rows: 100_000 * 3599}, true},
		{"iibench", Options{Start: late, Rows: 100_000*3600 + 1}, false},
		{"events", Options{Start: late, Rows: 1000}, true},
		{"events", Options{Start: late, Rows: 3_600_000}, false},
		{"events", Options{Start: early, Rows: 10}, false}, // jitter reaches before year 1
		{"iibench", Options{Start: early, Rows: 10}, true},
		{"conditions", Options{Start: early, Batches: 1}, true},
	}
	for _, tt := range tests {
		_, err := New(tt.kind, tt.o)
		if (err == nil) != tt.ok {
			t.Errorf("%s %+v: err %v, want ok=%v", tt.kind, tt.o, err, tt.ok)
		}
	}
}
