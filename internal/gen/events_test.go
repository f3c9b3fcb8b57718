package gen

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// eventPayload is the part of the payload the tests look into.
type eventPayload struct {
	Event      string `json:"event"`
	OccurredAt string `json:"occurred_at"`
	Actor      struct {
		ID    int64    `json:"id"`
		Email string   `json:"email"`
		Roles []string `json:"roles"`
	} `json:"actor"`
	Target struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Path string `json:"path"`
	} `json:"target"`
	Context struct {
		Trace struct {
			TraceID string `json:"trace_id"`
		} `json:"trace"`
		Geo struct {
			City string  `json:"city"`
			Lat  float64 `json:"lat"`
		} `json:"geo"`
	} `json:"context"`
	Categories []string `json:"categories"`
	Changes    []struct {
		Field, From, To string
	} `json:"changes"`
	Message string `json:"message"`
}

func TestEventsRows(t *testing.T) {
	start := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	const rows = 5000
	g := mustNew(t, "events", Options{Seed: 3, Rows: rows, Start: start})
	r := newRecorder(t)
	types := map[string]int{}
	seenIDs := map[[16]byte]bool{}
	var n, total, minLen, maxLen int64 = 0, 0, 1 << 40, 0
	var escapes int
	for g.Next() {
		g.Encode(r)
		v := r.vals
		if len(v) != 5 {
			t.Fatalf("row %d: %d fields", n, len(v))
		}
		if id := v[0].(int64); id != n+1 {
			t.Fatalf("row %d: id %d", n, id)
		}
		u := v[1].([16]byte)
		if u[6]>>4 != 4 || u[8]>>6 != 2 {
			t.Fatalf("row %d: uuid %x is not version 4, variant 10", n, u)
		}
		if seenIDs[u] {
			t.Fatalf("row %d: uuid %x repeats", n, u)
		}
		seenIDs[u] = true
		typ := v[2].(string)
		types[typ]++
		created := v[3].(int64)
		slot := start.UnixMicro() + n*1000
		if created < slot-eventsJitterMicros || created > slot+eventsJitterMicros || g.Time() != created {
			t.Fatalf("row %d: created_at %s, slot %s", n, formatMicros(created), formatMicros(slot))
		}
		raw := v[4].(string)
		if !json.Valid([]byte(raw)) || !utf8.ValidString(raw) {
			t.Fatalf("row %d: invalid JSON %s", n, raw)
		}
		var p eventPayload
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			t.Fatalf("row %d: %v", n, err)
		}
		if p.Event != typ {
			t.Fatalf("row %d: payload event %q, type %q", n, p.Event, typ)
		}
		if at, err := time.Parse(time.RFC3339Nano, p.OccurredAt); err != nil || at.UnixMicro() != created {
			t.Fatalf("row %d: occurred_at %q (%v), created_at %s", n, p.OccurredAt, err, formatMicros(created))
		}
		if len(p.Categories) < 2 || len(p.Categories) > 6 {
			t.Fatalf("row %d: %d categories", n, len(p.Categories))
		}
		seen := map[string]bool{}
		for _, c := range p.Categories {
			if c == "" || seen[c] {
				t.Fatalf("row %d: categories %q", n, p.Categories)
			}
			seen[c] = true
		}
		if len(p.Changes) < 1 || len(p.Actor.Roles) < 1 || p.Actor.ID < 1 || !strings.Contains(p.Actor.Email, "@") ||
			!strings.HasSuffix(p.Target.Path, "/"+p.Target.ID) || len(p.Context.Trace.TraceID) != 32 || p.Context.Geo.City == "" {
			t.Fatalf("row %d: incomplete payload %s", n, raw)
		}
		if strings.ContainsAny(p.Message, "\"\n\\\t") {
			escapes++
		}
		l := int64(len(raw))
		total += l
		minLen, maxLen = min(minLen, l), max(maxLen, l)
		n++
	}
	if n != rows {
		t.Fatalf("%d rows", n)
	}
	if minLen < eventsPayloadMin || maxLen > eventsPayloadMax+100 {
		t.Errorf("payload sizes %d to %d, want about %d to %d", minLen, maxLen, eventsPayloadMin, eventsPayloadMax)
	}
	if mean := total / rows; mean < 1950 || mean > 2150 {
		t.Errorf("mean payload %d bytes, want about 2 kB", mean)
	}
	if len(types) != len(eventTypes) {
		t.Errorf("%d event types seen, want %d: %v", len(types), len(eventTypes), types)
	}
	if types["user.login"] < types["user.deleted"]*5 {
		t.Errorf("type mix not skewed toward logins: %v", types)
	}
	if escapes < rows/4 {
		t.Errorf("only %d of %d messages hold escaped characters", escapes, rows)
	}
}

// TestEventsEncodeTwice checks that Encode is repeatable within a row
// and that skipping Encode for a row changes nothing after it.
func TestEventsEncodeTwice(t *testing.T) {
	o := Options{Seed: 9, Rows: 50}
	a, b := mustNew(t, "events", o), mustNew(t, "events", o)
	for row := 0; a.Next(); row++ {
		if !b.Next() {
			t.Fatal("b ended early")
		}
		ra := newRecorder(t)
		a.Encode(ra)
		if row%3 == 0 {
			continue // b skips Encode for this row
		}
		r1, r2 := newRecorder(t), newRecorder(t)
		b.Encode(r1)
		b.Encode(r2)
		if !bytes.Equal(r1.buf, r2.buf) || !bytes.Equal(r1.buf, ra.buf) {
			t.Fatalf("row %d: encodings differ:\n%s\n%s\n%s", row, ra.buf, r1.buf, r2.buf)
		}
	}
}

func TestEventsColumns(t *testing.T) {
	g := mustNew(t, "events", Options{})
	var names []string
	for _, c := range g.Columns() {
		names = append(names, c.Name+" "+c.Type)
	}
	if got := strings.Join(names, ","); got != "id bigint,event_id uuid,type text,created_at timestamptz,payload jsonb" {
		t.Errorf("columns %s", got)
	}
	if g.TimeColumn() != 3 || g.Rows() != 100_000 {
		t.Errorf("TimeColumn %d Rows %d", g.TimeColumn(), g.Rows())
	}
}

// TestEventsStepAndPayloadBytes checks the options the event workload
// benchmark sets: created_at spacing, payload size and categories_ids.
func TestEventsStepAndPayloadBytes(t *testing.T) {
	start := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	const rows, size = 2000, 4096
	g := mustNew(t, "events", Options{Seed: 5, Rows: rows, Start: start, Step: 3 * time.Second, PayloadBytes: size})
	r := newRecorder(t)
	var total int64
	for n := int64(0); g.Next(); n++ {
		r.vals = r.vals[:0]
		g.Encode(r)
		slot := start.UnixMicro() + n*3_000_000
		if c := r.vals[3].(int64); c < slot-eventsJitterMicros || c > slot+eventsJitterMicros {
			t.Fatalf("row %d: created_at %s, slot %s", n, formatMicros(c), formatMicros(slot))
		}
		raw := r.vals[4].(string)
		var p struct {
			IDs []int `json:"categories_ids"`
		}
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			t.Fatalf("row %d: %v", n, err)
		}
		if len(p.IDs) < 1 || len(p.IDs) > 8 || slices.Min(p.IDs) < 1 || slices.Max(p.IDs) > 1000 {
			t.Fatalf("row %d: categories_ids %v", n, p.IDs)
		}
		if l := len(raw); l < size-size/8 || l > size+size/8+100 {
			t.Fatalf("row %d: payload %d bytes, want %d ± 12.5%%", n, l, size)
		}
		total += int64(len(raw))
	}
	if mean := total / rows; mean < size-100 || mean > size+100 {
		t.Errorf("mean payload %d bytes, want about %d", mean, size)
	}
	if _, err := New("events", Options{Step: time.Nanosecond}); err == nil {
		t.Error("a 1 ns step was accepted")
	}
	if _, err := New("events", Options{PayloadBytes: MaxPayloadBytes + 1}); err == nil {
		t.Error("an oversized payload was accepted")
	}
}
