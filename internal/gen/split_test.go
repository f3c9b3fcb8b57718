package gen

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"
)

// checkSplit compares the concatenated output of Split(kind, o, n) with
// the output of New(kind, o), both through Encode and, where the kind has
// its own text rows, through WriteText.
func checkSplit(t *testing.T, kind string, o Options, n int) {
	t.Helper()
	whole := mustNew(t, kind, o)
	wantRows := whole.Rows()
	want := record(t, whole)
	parts, err := Split(kind, o, n)
	if err != nil {
		t.Fatalf("Split(%q, %+v, %d): %v", kind, o, n, err)
	}
	if len(parts) != n {
		t.Fatalf("Split gave %d parts, want %d", len(parts), n)
	}
	var got []byte
	var rows int64
	for k, p := range parts {
		rows += p.Rows()
		if p.Rows() < wantRows/int64(n) || p.Rows() > wantRows/int64(n)+1 {
			t.Errorf("part %d has %d rows of %d: uneven", k, p.Rows(), wantRows)
		}
		got = append(got, record(t, p)...)
	}
	if rows != wantRows {
		t.Errorf("parts have %d rows together, want %d", rows, wantRows)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Split(%q, %+v, %d): union differs from the unsplit output (%d vs %d bytes)", kind, o, n, len(got), len(want))
	}

	var wantText, gotText bytes.Buffer
	if err := WriteText(context.Background(), &wantText, mustNew(t, kind, o)); err != nil {
		t.Fatal(err)
	}
	parts, _ = Split(kind, o, n)
	for _, p := range parts {
		if err := WriteText(context.Background(), &gotText, p); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(gotText.Bytes(), wantText.Bytes()) {
		t.Fatalf("Split(%q, %+v, %d): text union differs", kind, o, n)
	}
}

func TestSplitUnion(t *testing.T) {
	start := time.Date(2023, 12, 31, 23, 59, 59, 999999000, time.UTC)
	cases := []struct {
		kind string
		o    Options
	}{
		{"conditions", Options{Batches: 2}},
		{"conditions", Options{Rows: 12_001, BatchRows: 1000, Devices: 7, Width: 9, Start: start}},
		{"conditions", Options{Batches: 5, BatchRows: 7}}, // batches shorter than 60 rows
		{"iibench", Options{Seed: 5, Rows: 10_007}},
		{"events", Options{Seed: 5, Rows: 503, Start: start}},
	}
	for _, c := range cases {
		for _, n := range []int{1, 2, 7, 64} {
			checkSplit(t, c.kind, c.o, n)
		}
	}
}

// TestSplitMorePartsThanRows checks that surplus parts are empty.
func TestSplitMorePartsThanRows(t *testing.T) {
	checkSplit(t, "iibench", Options{Rows: 3}, 10)
	checkSplit(t, "conditions", Options{Rows: 2}, 5)
}

func TestSplitErrors(t *testing.T) {
	for _, n := range []int{0, -1, MaxSplit + 1} {
		if _, err := Split("conditions", Options{}, n); err == nil {
			t.Errorf("Split into %d parts: no error", n)
		}
	}
	if _, err := Split("nope", Options{}, 2); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("unknown kind: %v", err)
	}
	if _, err := Split("iibench", Options{Rows: -4}, 2); err == nil {
		t.Error("negative rows: no error")
	}
}
