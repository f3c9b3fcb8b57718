package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/pgts/pgts/internal/copyenc"
	"github.com/pgts/pgts/internal/gen"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// The server-copy loader is the server's own ceiling: the run's rows are
// written beforehand (not timed) as binary COPY files that the server
// reads itself, one file per destination table and backend, and N
// backends run `COPY table FROM 'file' (FORMAT binary)` at once. No
// client parses, encodes or sends anything while the clock runs, so
// pgts' loaders can be compared with what the server does alone.
//
// It needs the server on this machine, sharing its file system: a probe
// file written here must read back through the server
// (pg_read_binary_file), or the run fails saying so.

// serverCopyFile is one file of a server-copy run: rows for one table.
type serverCopyFile struct {
	table string // quoted
	path  string
	rows  int64
}

// serverCopyFiles writes the generator's rows as binary COPY files under
// a new directory the server can read, split by destination table (the
// leaf partition for partitioned stores) and, within a table, into
// `workers` files of whole 10,000-row batches dealt in turn. pgtsEvery is
// the pgts store's partition length (LoadScenario.Interval). It returns
// the files per backend and the directory (the caller removes it).
func serverCopyFiles(ctx context.Context, pool *pgxpool.Pool, store string, pgtsEvery time.Duration, g gen.Generator, workers int) ([][]serverCopyFile, string, error) {
	dir, err := os.MkdirTemp("", "pgts-server-copy-")
	if err != nil {
		return nil, "", err
	}
	// The server's user reads the files: the directory is not private.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, dir, err
	}
	if err := checkServerSeesFiles(ctx, pool, dir); err != nil {
		return nil, dir, err
	}
	var iv *partition.Interval
	switch store {
	case "pgts":
		v := pgtsInterval(pgtsEvery)
		iv = &v
	case "weekly":
		iv = &partition.Interval{Days: 7}
	case "monthly":
		iv = &partition.Interval{Months: 1}
	}
	type out struct {
		f   *os.File
		w   *bufio.Writer
		sf  serverCopyFile
		idx int // backend
	}
	files := map[string][]*out{} // table → one per backend
	var order []string
	enc := copyenc.NewBinaryWriter(1 << 10)
	var row int64
	closeAll := func() error {
		var first error
		for _, t := range order {
			for _, o := range files[t] {
				if o.f == nil {
					continue
				}
				_, err := o.w.Write(copyenc.BinaryTrailer)
				if err == nil {
					err = o.w.Flush()
				}
				if cerr := o.f.Close(); err == nil {
					err = cerr
				}
				o.f = nil
				if first == nil {
					first = err
				}
			}
		}
		return first
	}
	for g.Next() {
		table := pg.QuoteIdent(benchTable)
		if iv != nil {
			lo, _, err := partition.Bounds(*iv, g.Time())
			if err != nil {
				closeAll()
				return nil, dir, err
			}
			name, err := partition.Name(benchTable, *iv, lo)
			if err != nil {
				closeAll()
				return nil, dir, err
			}
			table = pg.QuoteIdent(name)
		}
		outs, ok := files[table]
		if !ok {
			for i := 0; i < workers; i++ {
				path := filepath.Join(dir, fmt.Sprintf("%d-%d.copy", len(order), i))
				f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
				if err != nil {
					closeAll()
					return nil, dir, err
				}
				o := &out{f: f, w: bufio.NewWriterSize(f, 1<<20), sf: serverCopyFile{table: table, path: path}, idx: i}
				if _, err := o.w.Write(copyenc.BinaryHeader); err != nil {
					closeAll()
					return nil, dir, err
				}
				outs = append(outs, o)
			}
			files[table] = outs
			order = append(order, table)
		}
		o := outs[(row/10000)%int64(workers)]
		enc.Reset()
		g.Encode(enc)
		if _, err := o.w.Write(enc.Bytes()); err != nil {
			closeAll()
			return nil, dir, err
		}
		o.sf.rows++
		row++
	}
	if err := closeAll(); err != nil {
		return nil, dir, err
	}
	perBackend := make([][]serverCopyFile, workers)
	for _, t := range order {
		for _, o := range files[t] {
			if o.sf.rows > 0 {
				perBackend[o.idx] = append(perBackend[o.idx], o.sf)
			}
		}
	}
	return perBackend, dir, nil
}

// ErrServerElsewhere is wrapped when the server-copy loader cannot hand
// the server files: the server runs on another machine (or in a
// container with its own file system).
var ErrServerElsewhere = errors.New("the server-copy loader needs the PostgreSQL server on this machine, reading this machine's files")

// checkServerSeesFiles writes a random token in dir and has the server
// read it back.
func checkServerSeesFiles(ctx context.Context, pool *pgxpool.Pool, dir string) error {
	var tok [16]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return err
	}
	want := hex.EncodeToString(tok[:])
	path := filepath.Join(dir, "probe")
	if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
		return err
	}
	defer os.Remove(path)
	var got []byte
	err := pool.QueryRow(ctx, `SELECT pg_read_binary_file($1)`, path).Scan(&got)
	switch {
	case err != nil && (pg.SQLState(err) == "58P01" || pg.SQLState(err) == "42501"):
		return fmt.Errorf("%w: the server could not read %s (%v); run the benchmark on the server's machine as a role allowed to read server files (superuser or pg_read_server_files)", ErrServerElsewhere, path, err)
	case err != nil:
		return fmt.Errorf("checking that the server reads this machine's files: %w", err)
	case string(got) != want:
		return fmt.Errorf("%w: the server read another file at %s", ErrServerElsewhere, path)
	}
	return nil
}

// loadServerCopy runs the backends: each its own connection, COPYing its
// files one after another. The files are written before start (not
// timed): r.Batches has one timing per file.
func loadServerCopy(ctx context.Context, pool *pgxpool.Pool, perBackend [][]serverCopyFile, start time.Time) ([]BatchTiming, error) {
	var mu sync.Mutex
	var timings []BatchTiming
	g, gctx := errgroup.WithContext(ctx)
	for _, files := range perBackend {
		g.Go(func() error {
			conn, err := pool.Acquire(gctx)
			if err != nil {
				return err
			}
			defer conn.Release()
			for _, f := range files {
				t0 := time.Now()
				tag, err := conn.Exec(gctx, "COPY "+f.table+" FROM "+pg.QuoteLiteral(f.path)+" (FORMAT binary)")
				if err != nil {
					return fmt.Errorf("COPY %s FROM %s: %w", f.table, f.path, err)
				}
				if tag.RowsAffected() != f.rows {
					return fmt.Errorf("COPY %s FROM %s stored %d rows; the file has %d", f.table, f.path, tag.RowsAffected(), f.rows)
				}
				mu.Lock()
				timings = append(timings, BatchTiming{StartMS: ms(t0.Sub(start)), DurationMS: ms(time.Since(t0)), Rows: f.rows})
				mu.Unlock()
			}
			return nil
		})
	}
	return timings, g.Wait()
}
