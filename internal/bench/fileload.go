package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/copyenc"
	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/gen"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/records"
)

// writeCSV writes the rows of g as the CSV file a user would load (what
// `pgts gen conditions | tr '\t' ,` gives: timestamps without a zone,
// read in the session's TimeZone) in a new temporary directory, which the
// caller removes. The pgts-file loader reads it: the same rows as the
// generator loaders, parsed from text as a file load parses them.
func writeCSV(g gen.Generator) (path, dir string, err error) {
	dir, err = os.MkdirTemp("", "pgts-bench-file-")
	if err != nil {
		return "", "", err
	}
	path = filepath.Join(dir, "conditions.csv")
	f, err := os.Create(path)
	if err != nil {
		return "", dir, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	enc := copyenc.NewTextWriter(1 << 10)
	for g.Next() {
		enc.Reset()
		g.Encode(enc)
		// COPY text to CSV: the rows hold numbers and timestamps only, so
		// no field needs quoting; a NULL (\N) is an empty field.
		for i, field := range bytes.Split(bytes.TrimSuffix(enc.Bytes(), []byte{'\n'}), []byte{'\t'}) {
			if i > 0 {
				w.WriteByte(',')
			}
			if !bytes.Equal(field, []byte(`\N`)) {
				w.Write(field)
			}
		}
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return "", dir, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", dir, fmt.Errorf("writing %s: %w", path, err)
	}
	return path, dir, nil
}

// loadPgtsFile runs `pgts load FILE` in-process on the CSV file at path:
// binary COPY into the leaf partitions, records parsed on GOMAXPROCS
// goroutines, as the command does by default.
func loadPgtsFile(ctx context.Context, pool *pgxpool.Pool, s LoadScenario, path string, workers int, start time.Time) ([]BatchTiming, error) {
	m := partition.NewManager(pool, s.Logger, time.Now)
	target, err := copyload.LookupTarget(ctx, pool, m, benchTable)
	if err != nil {
		return nil, err
	}
	rc, info, err := records.Open(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	rd, err := records.NewReader(rc, records.DefaultOptions(records.CSV))
	if err != nil {
		return nil, err
	}
	cols := make([]int, len(target.Columns))
	for i := range cols {
		cols[i] = i
	}
	cfg := copyload.DefaultConfig()
	cfg.Workers = workers
	timings, onBatch := batchTimings(start)
	cfg.OnBatch = onBatch
	l, err := copyload.New(pool, m, target, cfg)
	if err != nil {
		return nil, err
	}
	src := &copyload.FileSource{Inputs: []copyload.Input{{Name: info.Name, Reader: rd}}, Columns: cols, Parsers: runtime.GOMAXPROCS(0)}
	sum, err := l.Run(ctx, src)
	if err != nil {
		return nil, err
	}
	if sum.Rejected > 0 {
		return nil, fmt.Errorf("%d rows rejected", sum.Rejected)
	}
	return timings(), nil
}
