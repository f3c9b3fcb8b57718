package ingest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestAppendPoint(t *testing.T) {
	dst := make([]Point, 0, 2)
	dst, p := AppendPoint(dst)
	p.Name, p.Tags = "a", append(p.Tags, Tag{"k", "v"})
	backing := &p.Tags[:1][0]
	dst = dst[:0]
	dst, p = AppendPoint(dst)
	if len(dst) != 1 || len(p.Tags) != 0 || cap(p.Tags) == 0 || &p.Tags[:1][0] != backing {
		t.Errorf("spare element not reused: %+v", dst)
	}
	dst, _ = AppendPoint(dst)
	dst, p = AppendPoint(dst) // grows
	if len(dst) != 3 || p.Tags != nil {
		t.Errorf("grown: %+v", dst)
	}
}

func TestTimeConversions(t *testing.T) {
	for _, c := range []struct {
		s    int64
		want int64
		ok   bool
	}{
		{0, 0, true}, {-62135596800, MinTime, true}, {-62135596801, 0, false},
		{253402300799, MaxTime - 1e6, true}, {253402300800, 0, false},
		{1 << 62, 0, false}, {-1 << 63, 0, false},
	} {
		got, ok := SecondsToMicros(c.s)
		if got != c.want || ok != c.ok {
			t.Errorf("SecondsToMicros(%d) = %d, %v", c.s, got, ok)
		}
	}
	for _, c := range []struct {
		ms   int64
		want int64
		ok   bool
	}{
		{1, 1000, true}, {-62135596800000, MinTime, true}, {-62135596800001, 0, false},
		{253402300799999, MaxTime - 1000, true}, {253402300800000, 0, false}, {1<<63 - 1, 0, false},
	} {
		got, ok := MillisToMicros(c.ms)
		if got != c.want || ok != c.ok {
			t.Errorf("MillisToMicros(%d) = %d, %v", c.ms, got, ok)
		}
	}
	if InRange(MaxTime) || !InRange(MinTime) || !InRange(MaxTime-1) || InRange(MinTime-1) {
		t.Error("InRange bounds")
	}
}

func TestLimitsValidate(t *testing.T) {
	if err := DefaultLimits().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*Limits){
		"zero line":       func(l *Limits) { l.MaxLineBytes = 0 },
		"negative name":   func(l *Limits) { l.MaxNameBytes = -1 },
		"zero tags":       func(l *Limits) { l.MaxTags = 0 },
		"huge frame":      func(l *Limits) { l.MaxFrameBytes = 1<<30 + 1 },
		"negative intern": func(l *Limits) { l.MaxInternBytes = -1 },
		"zero decoded":    func(l *Limits) { l.MaxDecodedBytes = 0 },
	} {
		l := DefaultLimits()
		mutate(&l)
		if err := l.Validate(); err == nil {
			t.Errorf("%s: Validate accepted %+v", name, l)
		}
	}
	l := DefaultLimits()
	l.MaxInternBytes = 0
	if err := l.Validate(); err != nil {
		t.Errorf("interning off: %v", err)
	}
}

func TestErrors(t *testing.T) {
	le := &LineError{Line: 3, Err: ErrSyntax}
	if le.Error() != "line 3: malformed input" || !errors.Is(le, ErrSyntax) {
		t.Errorf("LineError: %v", le)
	}
	if (&LineError{Err: ErrSyntax}).Error() != "line ?: malformed input" {
		t.Error("LineError without a line")
	}
	ee := &EntryError{Index: 0, Err: ErrValue}
	if ee.Error() != "entry 0: invalid value" || !errors.Is(ee, ErrValue) {
		t.Errorf("EntryError: %v", ee)
	}
	var st Stats
	st.Reject(le)
	st.Reject(ee)
	if st.Rejected != 2 || st.FirstErr != le {
		t.Errorf("Stats: %+v", st)
	}
	if got := Clip("a\nb"); got != `"a\nb"` {
		t.Errorf("Clip = %s", got)
	}
	if got := Clip([]byte(strings.Repeat("x", 100))); got != `"`+strings.Repeat("x", 64)+`"...` {
		t.Errorf("Clip = %s", got)
	}
	if Kind(&LineError{Line: 1, Err: fmt.Errorf("x: %w", ErrTag)}) != ErrTag || Kind(errors.New("other")) != nil || Kind(nil) != nil {
		t.Error("Kind")
	}
	if err := LimitError("line", 10, 5); !errors.Is(err, ErrLimit) || err.Error() != "line of 10 bytes exceeds the limit of 5: limit exceeded" {
		t.Errorf("LimitError = %v", err)
	}
}
