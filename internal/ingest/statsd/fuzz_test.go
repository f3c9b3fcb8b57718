package statsd

import (
	"bytes"
	"errors"
	"testing"

	"github.com/pgts/pgts/internal/ingest"
)

var kinds = []error{ingest.ErrSyntax, ingest.ErrName, ingest.ErrTag, ingest.ErrValue,
	ingest.ErrTimestamp, ingest.ErrLimit, ingest.ErrUnsupported}

func checkKind(t *testing.T, err error) {
	t.Helper()
	n := 0
	for _, k := range kinds {
		if errors.Is(err, k) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("error %q wraps %d kinds, want 1", err, n)
	}
}

// FuzzAppendLine parses a datagram line by line, aggregates what parses
// and flushes, checking every output.
func FuzzAppendLine(f *testing.F) {
	for _, s := range []string{
		"gorets:1|c", "gorets:1|c|@0.1", "glork:320|ms|@0.1", "gaugor:-10|g", "gaugor:+4|g",
		"uniques:765|s", "a:1|c:2|c|@0.5:3|ms", "a:1|c|#z:1,env:prod", "a:1|c|@1|T1|#k:v|c:x",
		"a:nan|c", "a:1e400|ms", "a:-1|ms", "a:1|c|@0", "a b:1|c", "a:1|c|#flag",
		"a:1|c\nb:2|g\n\nc:x|s",
	} {
		f.Add([]byte(s))
	}
	l := ingest.DefaultLimits()
	l.MaxLineBytes = 512
	l.MaxTags = 4
	out := ingest.DefaultLimits()
	out.MaxNameBytes = 4096
	p, err := NewParser(l)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, datagram []byte) {
		orig := bytes.Clone(datagram)
		a, err := NewAggregator(DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		var ms []Metric
		for _, line := range bytes.Split(datagram, []byte{'\n'}) {
			n0 := len(ms)
			ms, err = p.AppendLine(ms, line)
			if err != nil {
				checkKind(t, err)
				if len(ms) != n0 {
					t.Fatal("AppendLine appended metrics with an error")
				}
			}
		}
		if !bytes.Equal(datagram, orig) {
			t.Fatal("AppendLine modified its input")
		}
		for _, m := range ms {
			if err := ingest.ValidName(m.Name, l); err != nil {
				t.Fatalf("metric %+v: %v", m, err)
			}
			if m.Type != Set {
				if err := ingest.CheckValue(m.Value); err != nil {
					t.Fatalf("metric %+v: %v", m, err)
				}
			}
			if err := a.Add(m); err != nil {
				t.Fatalf("Add(%+v): %v", m, err)
			}
		}
		for _, pt := range a.Flush(fixedFlush) {
			if err := ingest.ValidPoint(pt, out); err != nil {
				t.Fatalf("flushed invalid point %+v: %v", pt, err)
			}
		}
	})
}
