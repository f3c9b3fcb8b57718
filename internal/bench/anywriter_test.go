package bench

import (
	"context"
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
)

// TestRunAnyWriterSmall runs the insert-any steps at a tiny size: each
// step stores every row, a missing step leaves nothing waiting, and the
// medians are there for every step.
func TestRunAnyWriterSmall(t *testing.T) {
	s := DefaultAnyWriterScenario()
	s.ConnString, s.Sessions, s.Rows, s.BackfillRows, s.BatchRows, s.Days, s.Repeat = pgtest.DB(t), 4, 200, 500, 100, 5, 1
	res, err := RunAnyWriter(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != len(AnyWriterSteps) {
		t.Fatalf("%d steps, want %d", len(res.Steps), len(AnyWriterSteps))
	}
	for _, st := range res.Steps {
		if st.RowsPerSec <= 0 || (st.Step == "1-row missing" && st.Partitions < 3) {
			t.Errorf("step %+v", st)
		}
	}
	if rate, _ := res.Median("backfill missing"); rate <= 0 {
		t.Errorf("no median for backfill missing")
	}
}
