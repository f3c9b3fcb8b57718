package copyload

import (
	"encoding/csv"
	"io"
	"strconv"
	"sync"
	"time"
)

// BatchLog writes one CSV line per committed batch:
// batch,worker,partition,rows,bytes,start,duration_ms. Safe for concurrent
// use; its Write method fits Config.OnBatch.
type BatchLog struct {
	mu sync.Mutex
	w  *csv.Writer
}

// NewBatchLog writes the header line to w.
func NewBatchLog(w io.Writer) *BatchLog {
	c := &BatchLog{w: csv.NewWriter(w)}
	_ = c.w.Write([]string{"batch", "worker", "partition", "rows", "bytes", "start", "duration_ms"})
	c.w.Flush()
	return c
}

// Write logs one batch.
func (c *BatchLog) Write(b BatchInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.w.Write([]string{strconv.FormatInt(b.Seq, 10), strconv.Itoa(b.Worker), b.Table, strconv.FormatInt(b.Rows, 10),
		strconv.FormatInt(b.Bytes, 10), b.Start.UTC().Format(time.RFC3339Nano), strconv.FormatFloat(float64(b.Duration.Microseconds())/1000, 'f', 3, 64)})
	c.w.Flush()
}
