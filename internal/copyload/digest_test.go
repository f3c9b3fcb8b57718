package copyload

import (
	"testing"

	"github.com/pgts/pgts/internal/copyenc"
)

// BenchmarkBatchDigest measures the ledger digest of a 1 MiB batch.
func BenchmarkBatchDigest(b *testing.B) {
	w := copyenc.NewBinaryWriter(0)
	for w.Len() < 1<<20 {
		w.BeginRow(1)
		w.Null()
	}
	bt := &batch{table: `"public"."conditions_p20240101"`, enc: w}
	b.SetBytes(int64(w.Len()))
	b.ReportAllocs()
	for b.Loop() {
		batchDigest(bt)
	}
}
