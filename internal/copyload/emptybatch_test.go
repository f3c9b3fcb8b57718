package copyload

import (
	"context"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/records"
)

// TestOnlyRejectedRows: a batch opened for a row that is then rejected
// (its value does not parse) and never given another row is not sent: an
// input whose only row is bad loads nothing and rejects it, instead of
// sending an empty batch.
func TestOnlyRejectedRows(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `CREATE TABLE p (device int, v float8)`); err != nil {
		t.Fatal(err)
	}
	m := partition.NewManager(pool, nil, nil)
	target, err := LookupTarget(ctx, pool, m, "p")
	if err != nil {
		t.Fatal(err)
	}
	rd, err := records.NewReader(strings.NewReader("1,oops\n"), records.DefaultOptions(records.CSV))
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(1)
	cfg.LoadID = "only-rejects"
	l, err := New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := l.Run(ctx, &FileSource{Inputs: []Input{{Name: "in.csv", Reader: rd}}, Columns: []int{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Read != 1 || sum.Rejected != 1 || sum.Loaded != 0 || sum.Batches != 0 {
		t.Fatalf("summary %+v", sum)
	}
}
