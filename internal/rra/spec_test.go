package rra

import (
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	valid := []struct {
		in   string
		want time.Duration
	}{
		{"1", time.Second},
		{"3600", time.Hour},
		{"10s", 10 * time.Second},
		{"1m", time.Minute},
		{"5min", 5 * time.Minute},
		{"6h", 6 * time.Hour},
		{"7d", 7 * 24 * time.Hour},
		{"2w", 14 * 24 * time.Hour},
		{"1y", 365 * 24 * time.Hour},
		{"1h30m", 90 * time.Minute},
		{"1d12h", 36 * time.Hour},
		{"1min30s", 90 * time.Second},
		{"100y", MaxDuration},
		{"99y365d", MaxDuration},
		{"0h10s", 10 * time.Second},
	}
	for _, c := range valid {
		got, err := ParseDuration(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	invalid := []struct{ in, want string }{
		{"", "empty"},
		{"0", "zero"},
		{"0s", "zero"},
		{"-1s", `unexpected "-1s"`},
		{"+1s", `unexpected "+1s"`},
		{"1.5h", "unknown unit"},
		{"10ms", `unexpected "s"`},
		{"1mo", `unexpected "o"`},
		{"1 h", "unknown unit"},
		{"h", `unexpected "h"`},
		{"1h30", `number "30" has no unit`},
		{"101y", "over 100 years"},
		{"100y1s", "over 100 years"},
		{"36501d", "over 100 years"},
		{"99999999999999999999s", "over 100 years"},
		{"9223372036854775807", "over 100 years"},
		{"1H", "unknown unit"},
		{strings.Repeat("1", 65), "longer than 64 bytes"},
	}
	for _, c := range invalid {
		_, err := ParseDuration(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseDuration(%q) = %v, want an error containing %q", c.in, err, c.want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{time.Second, "1s"}, {90 * time.Second, "90s"}, {time.Minute, "1m"}, {90 * time.Minute, "90m"},
		{6 * time.Hour, "6h"}, {30 * 24 * time.Hour, "30d"}, {14 * 24 * time.Hour, "2w"}, {Year, "1y"},
		{366 * 24 * time.Hour, "366d"}, {1500 * time.Millisecond, "1.5s"}, {0, "0s"},
	} {
		if got := FormatDuration(c.d); got != c.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", c.d, got, c.want)
		}
		if c.d > 0 && c.d%time.Second == 0 {
			if back, err := ParseDuration(c.want); err != nil || back != c.d {
				t.Errorf("ParseDuration(FormatDuration(%v)) = %v, %v", c.d, back, err)
			}
		}
	}
}

func TestParseArchiveSpec(t *testing.T) {
	h, d := time.Hour, 24*time.Hour
	valid := []struct {
		in   string
		want ArchiveSpec
	}{
		{"10s:6h", ArchiveSpec{WMean, 10 * time.Second, 6 * h, 0.5, 2160}},
		{"1m:7d", ArchiveSpec{WMean, time.Minute, 7 * d, 0.5, 10080}},
		{"1h:1y", ArchiveSpec{WMean, h, Year, 0.5, 8760}},
		{"max:1h:30d:0.5", ArchiveSpec{Max, h, 30 * d, 0.5, 720}},
		{"MIN:60:3600:0", ArchiveSpec{Min, time.Minute, h, 0, 60}},
		{"Last:1d:5y:0.99", ArchiveSpec{Last, d, 5 * Year, 0.99, 1825}},
		{"wmean:1s:100000", ArchiveSpec{WMean, time.Second, 100000 * time.Second, 0.5, MaxSlots}},
		{"10s:10s", ArchiveSpec{WMean, 10 * time.Second, 10 * time.Second, 0.5, 1}},
	}
	for _, c := range valid {
		got, err := ParseArchiveSpec(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseArchiveSpec(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
			continue
		}
		back, err := ParseArchiveSpec(got.String())
		if err != nil || back != got {
			t.Errorf("ParseArchiveSpec(%q) = %+v, %v; want %+v", got.String(), back, err, got)
		}
	}
	invalid := []struct{ in, want string }{
		{"", "want [cf:]step:span[:xff]"},
		{"10s", "want [cf:]step:span[:xff]"},
		{"max:10s", "want [cf:]step:span[:xff]"},
		{"10s:1h:0.5:1", "want [cf:]step:span[:xff]"},
		{"a:b:c:d:e", "too many fields"},
		{"avg:10s:1h", `unknown consolidation function "avg"`},
		{"0s:1h", "step: parsing duration \"0s\": zero"},
		{"10s:0", "span: parsing duration \"0\": zero"},
		{"7s:1m", "span 1m is not a multiple of step 7s"},
		{"1s:100001s", "span/step is 100001 slots, over the limit of 100000"},
		{"1s:100y", "over the limit of 100000"},
		{"10s:1h:1", "xff 1 is outside [0, 1)"},
		{"10s:1h:-0.1", "xff -0.1 is outside [0, 1)"},
		{"10s:1h:NaN", "xff NaN is outside [0, 1)"},
		{"10s:1h:inf", "xff +Inf is outside [0, 1)"},
		{"10s:1h:half", `xff "half" is not a number`},
		{"10s:1h:", `xff "" is not a number`},
		{":10s:1h", "step: parsing duration \"\": empty"},
		{strings.Repeat("x", 200), "longer than 128 bytes"},
	}
	for _, c := range invalid {
		_, err := ParseArchiveSpec(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseArchiveSpec(%q) = %v, want an error containing %q", c.in, err, c.want)
		}
	}
}

func TestArchiveSpecValidate(t *testing.T) {
	ok := ArchiveSpec{WMean, time.Minute, time.Hour, 0.5, 60}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a    ArchiveSpec
		want string
	}{
		{ArchiveSpec{}, "step 0s is not positive"},
		{ArchiveSpec{CF: 9, Step: time.Minute, Span: time.Hour, XFF: 0.5, Size: 60}, "unknown consolidation function"},
		{ArchiveSpec{WMean, 1500 * time.Millisecond, time.Hour, 0.5, 2400}, "not a whole number of seconds"},
		{ArchiveSpec{WMean, time.Minute, time.Hour, 0.5, 61}, "size 61 is not span/step 60"},
		{ArchiveSpec{WMean, time.Minute, 101 * Year, 0.5, 0}, "span 101y is over 100 years"},
	} {
		err := c.a.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v.Validate() = %v, want an error containing %q", c.a, err, c.want)
		}
	}
	if _, err := NewArchiveSpec(Max, time.Minute, 90*time.Second, 0.5); err == nil ||
		!strings.Contains(err.Error(), "archive max:1m:90s:0.5: span 90s is not a multiple of step 1m") {
		t.Errorf("NewArchiveSpec: %v", err)
	}
}

func TestSlotMath(t *testing.T) {
	a, err := ParseArchiveSpec("1m:1h") // 60 slots
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		t        int64 // a point time
		slotTime int64
		index    int
	}{
		{0, 0, 0},
		{1, us(60), 1},
		{us(60), us(60), 1},
		{us(60) + 1, us(120), 2},
		{us(3600), us(3600), 0}, // wraps after 60 slots
		{us(3599), us(3600), 0},
		{us(3540), us(3540), 59},
		{-1, 0, 0},
		{us(-60), us(-60), 59},
		{us(-61), us(-60), 59},
		{MinTime, MinTime, a.SlotIndex(MinTime)},
		{MaxTime - 1, MaxTime, a.SlotIndex(MaxTime)},
	} {
		st := a.SlotTime(c.t)
		if st != c.slotTime || a.SlotIndex(st) != c.index {
			t.Errorf("SlotTime(%d) = %d index %d, want %d index %d", c.t, st, a.SlotIndex(st), c.slotTime, c.index)
		}
		if idx := a.SlotIndex(st); idx < 0 || idx >= a.Size {
			t.Errorf("SlotIndex(%d) = %d out of range", st, idx)
		}
	}
}

func TestNewSchema(t *testing.T) {
	spec := func(s string) ArchiveSpec {
		a, err := ParseArchiveSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	sc, err := NewSchema(10*time.Second, 2*time.Hour, []ArchiveSpec{spec("10s:6h"), spec("1m:7d"), spec("max:1m:7d")})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Step() != 10*time.Second || sc.Heartbeat() != 2*time.Hour || sc.NumArchives() != 3 || sc.Archive(2).CF != Max {
		t.Errorf("schema accessors: %v %v %d %v", sc.Step(), sc.Heartbeat(), sc.NumArchives(), sc.Archive(2))
	}
	many := make([]ArchiveSpec, MaxArchives+1)
	for i := range many {
		step := time.Duration(i+1) * 10 * time.Second
		many[i] = spec(FormatDuration(step) + ":" + FormatDuration(10*step))
	}
	for _, c := range []struct {
		step, hb time.Duration
		archives []ArchiveSpec
		want     string
	}{
		{0, time.Hour, []ArchiveSpec{spec("10s:6h")}, "step 0s is not positive"},
		{time.Second / 2, time.Hour, []ArchiveSpec{spec("10s:6h")}, "not a whole number of seconds"},
		{10 * time.Second, -time.Second, []ArchiveSpec{spec("10s:6h")}, "heartbeat -1s is not positive"},
		{10 * time.Second, 0, []ArchiveSpec{spec("10s:6h")}, "wmean is RRD consolidation"},
		{10 * time.Second, time.Hour, []ArchiveSpec{spec("sum:10s:6h")}, "sum is a Graphite aggregation"},
		{10 * time.Second, time.Hour, nil, "no archives"},
		{10 * time.Second, time.Hour, many, "33 archives exceed the limit of 32"},
		{10 * time.Second, time.Hour, []ArchiveSpec{spec("15s:6h")}, "step 15s is not a multiple of the DS step 10s"},
		{10 * time.Second, time.Hour, []ArchiveSpec{spec("1m:6h"), spec("1m:7d")}, "have the same consolidation function and step"},
		{10 * time.Second, time.Hour, []ArchiveSpec{{Step: time.Minute}}, "span 0s is not positive"},
	} {
		_, err := NewSchema(c.step, c.hb, c.archives)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewSchema(%v, %v, %v) = %v, want an error containing %q", c.step, c.hb, c.archives, err, c.want)
		}
	}
}

func TestSchemaSlots(t *testing.T) {
	sc := mustSchema(t, 10*time.Second, time.Minute, "10s:30s")
	var got []slot
	for idx, tm := range sc.Slots(Update{Archive: 0, Slot: 2, Time: us(20), Count: 3, Value: 1}) {
		got = append(got, slot{0, float64(tm) / 1e6, idx, 1})
	}
	want := []slot{{0, 20, 2, 1}, {0, 30, 0, 1}, {0, 40, 1, 1}}
	if !sameSlots(got, want) {
		t.Errorf("got %s, want %s", fmtSlots(got), fmtSlots(want))
	}
	for range sc.Slots(Update{Count: 3}) {
		break // stopping early must not panic
	}
}
