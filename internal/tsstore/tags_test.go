package tsstore

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/ingest"
)

// TestTaggedKeys: tagged series are listed in Graphite's form with keys
// sorted, untagged ones are not, and the list survives a restart (the
// registry in PostgreSQL is read back at Open).
func TestTaggedKeys(t *testing.T) {
	pool := newPool(t)
	var c clock
	cfg := testConfig(t, &c)
	s := open(t, pool, cfg)
	tagged := func(name string, tags ...ingest.Tag) ingest.Point {
		return ingest.Point{Name: name, Tags: tags, Time: base * 1e6, Value: 1}
	}
	mustAdd(t, s, pt("a.plain", 0, 1),
		tagged("a.cpu", ingest.Tag{Key: "dc", Value: "eu"}, ingest.Tag{Key: "host", Value: "web1"}),
		tagged("a.cpu", ingest.Tag{Key: "dc", Value: "us"}, ingest.Tag{Key: "host", Value: "web2"}),
		tagged("a.disk", ingest.Tag{Key: "dc", Value: "eu"}))
	want := []string{"a.cpu;dc=eu;host=web1", "a.cpu;dc=us;host=web2", "a.disk;dc=eu"}
	ctx := context.Background()
	got, err := s.TaggedKeys(ctx, nil)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("TaggedKeys = %q, %v; want %q", got, err, want)
	}
	got, _ = s.TaggedKeys(ctx, func(k string) bool { return strings.HasPrefix(k, "a.cpu;") })
	if !slices.Equal(got, want[:2]) {
		t.Errorf("filtered: %q", got)
	}
	mustFlush(t, s)
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, pool, cfg)
	got, err = s2.TaggedKeys(ctx, nil)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("after restart: %q, %v; want %q", got, err, want)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s2.TaggedKeys(cancelled, nil); err == nil {
		t.Error("cancelled context: no error")
	}
}
