package copyload

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/records"
)

// csvCorpus is a CSV input with a header and n records of every kind the
// splitter must cut around: quoted fields with line breaks (LF and CRLF),
// doubled quotes and delimiters, CRLF and LF line ends mixed, rows over 20
// daily partitions, and bad rows of every reader-side kind (field count,
// time, float, NULL in NOT NULL, a lone carriage return, a time outside
// the window), near every chunk boundary when chunks are tiny. With tail,
// a record starting with `\.` near the end (data, not a marker) makes the
// splitter read the rest in one tail. The last record leaves a quote open.
func csvCorpus(n int, tail bool) string {
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("time,device,v,note\r\n")
	for i := range n {
		ts := now0.Add(-time.Duration(rng.IntN(20*86400)) * time.Second).Format("2006-01-02 15:04:05+00")
		v := fmt.Sprintf("%d.%d", rng.IntN(100), rng.IntN(10))
		note := fmt.Sprintf("n%d", i)
		switch rng.IntN(12) {
		case 0:
			note = fmt.Sprintf("\"multi\nline %d\"", i)
		case 1:
			note = fmt.Sprintf("\"crlf\r\nin quotes, \"\"and\"\" a comma %d\"", i)
		case 2:
			note = fmt.Sprintf("\"\n\n%d\n\"", i)
		case 3:
			v = "abc" // a bad float
		case 4:
			v = "" // NULL, fine
		}
		row := ts + fmt.Sprintf(",%d,", i) + v + "," + note
		switch rng.IntN(40) {
		case 0:
			row = ts + ",1" // too few fields
		case 1:
			row += ",extra"
		case 2:
			row = "not a time" + row[len(ts):]
		case 3:
			row = "2999-01-01 00:00:00+00" + row[len(ts):] // outside the window
		case 4:
			row = ts + ",," + v + ",null device"
		case 5:
			row = ts + fmt.Sprintf(",%d,1,lone\rcr", i)
		}
		if tail && i == n*9/10 {
			row = `\.x,1,2,3`
		}
		b.WriteString(row)
		if rng.IntN(3) == 0 {
			b.WriteString("\r\n")
		} else {
			b.WriteString("\n")
		}
	}
	b.WriteString(now0.Add(-time.Hour).Format("2006-01-02 15:04:05+00") + ",1,2,\"open quote\nto the end\n")
	return b.String()
}

// textCorpus is COPY text input with escapes (an escaped line end among
// them), NULLs, bad rows, and an end-of-data marker followed by data that
// must not be read.
func textCorpus(n int) string {
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	for i := range n {
		ts := now0.Add(-time.Duration(rng.IntN(20*86400)) * time.Second).Format("2006-01-02 15:04:05+00")
		note := fmt.Sprintf("t%d", i)
		switch rng.IntN(8) {
		case 0:
			note = `tab\there\\back\nslash`
		case 1:
			note = "escaped\\\nline end"
		case 2:
			note = `\N`
		case 3:
			note = `\x41\101`
		}
		v := fmt.Sprintf("%d", rng.IntN(1000))
		if rng.IntN(30) == 0 {
			v = "x"
		}
		fmt.Fprintf(&b, "%s\t%d\t%s\t%s\n", ts, i, v, note)
	}
	b.WriteString("\\.\nthis\tis\tnot\tread\n")
	return b.String()
}

// loadRun is what a load gave: enough to tell two loads apart.
type loadRun struct {
	Read, Loaded, Rejected, Skipped, Batches int64
	Rejects                                  string
	Ledger                                   []string // batch rows rejected first-last digest
	Table                                    string   // md5 of the rows, in order
}

func parseTestTarget(t *testing.T, pool *pgxpool.Pool) (*partition.Manager, *Target) {
	t.Helper()
	ctx := context.Background()
	m := partition.NewManager(pool, nil, func() time.Time { return now0 })
	spec := partition.CreateSpec{Name: "p", TimeColumn: "time", Interval: partition.Interval{Days: 1}, Premake: 1,
		AcceptPast: &partition.Interval{Days: 30},
		Columns:    "time timestamptz not null, device int not null, v float8, note text"}
	if _, err := m.Create(ctx, spec); err != nil {
		t.Fatal(err)
	}
	target, err := LookupTarget(ctx, pool, m, "p")
	if err != nil {
		t.Fatal(err)
	}
	return m, target
}

// loadWith loads input into p with the given parsers and chunk size.
func loadWith(t *testing.T, pool *pgxpool.Pool, m *partition.Manager, target *Target, input string, opts records.Options,
	parsers, chunk int, loadID string) (loadRun, error) {
	t.Helper()
	return loadWithConfig(t, pool, m, target, input, opts, parsers, chunk, loadID, nil)
}

// loadWithConfig is loadWith with the loader's configuration changed by
// tweak (when not nil) after loadWith's own settings.
func loadWithConfig(t *testing.T, pool *pgxpool.Pool, m *partition.Manager, target *Target, input string, opts records.Options,
	parsers, chunk int, loadID string, tweak func(*Config)) (loadRun, error) {
	t.Helper()
	ctx := context.Background()
	rd, err := records.NewReader(strings.NewReader(input), opts)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Header {
		// As the CLI does: peek at the first record for the header.
		if _, err := rd.Next(); err != nil && !records.IsRecordError(err) {
			t.Fatal(err)
		}
		rd.Unread()
	}
	var rejects bytes.Buffer
	cfg := testConfig(2)
	cfg.Now = func() time.Time { return now0 }
	cfg.Rejects = NewCSVRejects(&rejects)
	cfg.BatchRows = 23
	cfg.MaxOpenBatches = 3 // evictions too
	cfg.LoadID = loadID
	if tweak != nil {
		tweak(&cfg)
	}
	l, err := New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	src := &FileSource{Inputs: []Input{{Name: "in", Reader: rd}}, Columns: []int{0, 1, 2, 3}, Parsers: parsers, ChunkBytes: chunk}
	sum, err := l.Run(ctx, src)
	run := loadRun{Read: sum.Read, Loaded: sum.Loaded, Rejected: sum.Rejected, Skipped: sum.Skipped, Batches: sum.Batches, Rejects: rejects.String()}
	rows, qerr := pool.Query(ctx, `SELECT format('%s %s %s %s-%s %s', batch, rows, rejected, first_line, last_line, encode(digest, 'hex'))
		FROM pgts.load_batch WHERE load_id = $1 ORDER BY batch`, loadID)
	if qerr != nil {
		t.Fatal(qerr)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		run.Ledger = append(run.Ledger, s)
	}
	if err := pool.QueryRow(ctx, `SELECT coalesce(md5(string_agg(p::text, E'\n' ORDER BY device, time)), '') FROM p`).Scan(&run.Table); err != nil {
		t.Fatal(err)
	}
	return run, err
}

// TestParallelParsingSameBatches loads the same input with one parser and
// with several, cut into chunks of many sizes (down to one byte: a chunk
// per record), and wants the same batches (rows, lines and SHA-256
// digests in the ledger), the same rejects file, byte for byte, and the
// same table.
func TestParallelParsingSameBatches(t *testing.T) {
	csvOpts := records.DefaultOptions(records.CSV)
	csvOpts.Header = true
	corpora := []struct {
		name  string
		input string
		opts  records.Options
	}{
		{"csv", csvCorpus(2500, false), csvOpts},
		{"csv with a tail", csvCorpus(1200, true), csvOpts},
		{"text", textCorpus(800), records.DefaultOptions(records.Text)},
	}
	for _, c := range corpora {
		t.Run(c.name, func(t *testing.T) {
			pool := pgtest.Pool(t)
			m, target := parseTestTarget(t, pool)
			want, err := loadWith(t, pool, m, target, c.input, c.opts, 1, 0, "seq")
			if err != nil {
				t.Fatal(err)
			}
			if want.Rejected == 0 || want.Loaded == 0 || want.Batches < 20 {
				t.Fatalf("the corpus does not test much: %+v", want)
			}
			for _, chunk := range []int{1, 97, 4096, 0} {
				t.Run(fmt.Sprint("chunk ", chunk), func(t *testing.T) {
					pool := pgtest.Pool(t)
					m, target := parseTestTarget(t, pool)
					got, err := loadWith(t, pool, m, target, c.input, c.opts, 3, chunk, "seq")
					if err != nil {
						t.Fatal(err)
					}
					if d := cmp.Diff(want, got); d != "" {
						t.Fatalf("3 parsers differ from 1 (-1 +3):\n%s", d)
					}
				})
			}
		})
	}
}

// TestParallelParsingSameBatchesInOrder is TestParallelParsingSameBatches
// on rows in time order, so that long runs of rows go to one batch (the
// router appends a chunk's rows bound for the same batch as one run), cut
// by partition changes, by BatchRows or by BatchBytes, with bad rows among
// them, and with the partition-routing and the leaf-routing paths.
func TestParallelParsingSameBatchesInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var b strings.Builder
	b.WriteString("time,device,v,note\n")
	t0 := now0.Add(-10 * 24 * time.Hour)
	for i := range 6000 {
		ts := t0.Add(time.Duration(i) * 2 * time.Minute).Format("2006-01-02 15:04:05")
		note := strings.Repeat("x", rng.IntN(40))
		switch rng.IntN(60) {
		case 0:
			note = "\"quoted,\nnote\""
		case 1:
			ts = "bad time"
		case 2:
			note += ",extra"
		}
		v := fmt.Sprintf("%d.%02d", rng.IntN(1000), rng.IntN(100))
		if rng.IntN(50) == 0 {
			v = "1e400" // refused by the column, after routing
		}
		fmt.Fprintf(&b, "%s,%d,%s,%s\n", ts, i, v, note)
	}
	input := b.String()
	opts := records.DefaultOptions(records.CSV)
	opts.Header = true
	for _, c := range []struct {
		name  string
		tweak func(*Config)
	}{
		{"rows", func(c *Config) { c.BatchRows = 300 }},
		{"bytes", func(c *Config) { c.BatchRows, c.BatchBytes = 100_000, 3000 }},
		{"parent", func(c *Config) { c.BatchRows, c.BatchBytes, c.Route = 700, 20_000, RouteParent }},
	} {
		t.Run(c.name, func(t *testing.T) {
			pool := pgtest.Pool(t)
			m, target := parseTestTarget(t, pool)
			want, err := loadWithConfig(t, pool, m, target, input, opts, 1, 0, "seq", c.tweak)
			if err != nil {
				t.Fatal(err)
			}
			if want.Rejected == 0 || want.Loaded < 5000 || want.Batches < 10 {
				t.Fatalf("the corpus does not test much: %+v", want)
			}
			for _, chunk := range []int{1000, 0} {
				pool := pgtest.Pool(t)
				m, target := parseTestTarget(t, pool)
				got, err := loadWithConfig(t, pool, m, target, input, opts, 3, chunk, "seq", c.tweak)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Fatalf("chunk %d: 3 parsers differ from 1 (-1 +3):\n%s", chunk, d)
				}
			}
		})
	}
}

// TestParallelParsingResumesSequentialLedger resumes, with parallel
// parsing, a load whose committed batches were cut by the sequential
// reader: every batch the ledger has is recognised by its digest and
// skipped, and the rest is loaded.
func TestParallelParsingResumesSequentialLedger(t *testing.T) {
	ctx := context.Background()
	input := csvCorpus(1000, false)
	opts := records.DefaultOptions(records.CSV)
	opts.Header = true
	pool := pgtest.Pool(t)
	m, target := parseTestTarget(t, pool)
	first, err := loadWith(t, pool, m, target, input, opts, 1, 0, "resume")
	if err != nil {
		t.Fatal(err)
	}
	// Forget the second half of the batches, as if the first run had
	// stopped half way.
	half := first.Batches / 2
	var forgotten int64
	if err := pool.QueryRow(ctx, `WITH d AS (DELETE FROM pgts.load_batch WHERE load_id = 'resume' AND batch > $1 RETURNING rows)
		SELECT coalesce(sum(rows), 0) FROM d`, half).Scan(&forgotten); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE pgts.load SET finished_at = NULL WHERE load_id = 'resume'`); err != nil {
		t.Fatal(err)
	}
	second, err := loadWith(t, pool, m, target, input, opts, 3, 211, "resume")
	if err != nil {
		t.Fatalf("parallel resume of a sequential ledger: %v", err)
	}
	if second.Skipped != first.Loaded-forgotten || second.Loaded != forgotten || forgotten == 0 {
		t.Fatalf("resume skipped %d and loaded %d rows; want %d and %d", second.Skipped, second.Loaded, first.Loaded-forgotten, forgotten)
	}
	if d := cmp.Diff(first.Ledger, second.Ledger); d != "" {
		t.Fatalf("the resumed ledger differs from the sequential one (-seq +resumed):\n%s", d)
	}
}

// TestParallelParsingRefusesOtherInput: the digests still tell a changed
// input from the committed one when the rerun parses in parallel.
func TestParallelParsingRefusesOtherInput(t *testing.T) {
	input := csvCorpus(300, false)
	opts := records.DefaultOptions(records.CSV)
	opts.Header = true
	pool := pgtest.Pool(t)
	m, target := parseTestTarget(t, pool)
	if _, err := loadWith(t, pool, m, target, input, opts, 1, 0, "other"); err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(input, ",n7\n", ",n7 changed\n", 1)
	if changed == input {
		changed = strings.Replace(input, ",n7\r\n", ",n7 changed\r\n", 1)
	}
	if changed == input {
		t.Fatal("the corpus has no row to change")
	}
	_, err := loadWith(t, pool, m, target, changed, opts, 3, 64, "other")
	if err == nil || !strings.Contains(err.Error(), "differs from the batch committed") {
		t.Fatalf("rerun with a changed row: %v, want a refusal", err)
	}
}

// TestRejectedRowOpensNoEmptyBatch: a row whose time opens a batch for a
// new partition and whose other field is then refused leaves that batch
// empty; the load must not send it.
func TestRejectedRowOpensNoEmptyBatch(t *testing.T) {
	input := "time,device,v,note\n" +
		now0.Add(-48*time.Hour).Format("2006-01-02 15:04:05+00") + ",1,1.5,ok\n" +
		now0.Add(-time.Hour).Format("2006-01-02 15:04:05+00") + ",2,abc,bad float in a partition of its own\n"
	opts := records.DefaultOptions(records.CSV)
	opts.Header = true
	for _, parsers := range []int{1, 2} {
		pool := pgtest.Pool(t)
		m, target := parseTestTarget(t, pool)
		run, err := loadWith(t, pool, m, target, input, opts, parsers, 0, "empty")
		if err != nil {
			t.Fatal(err)
		}
		if run.Loaded != 1 || run.Rejected != 1 || run.Batches != 1 || len(run.Ledger) != 1 {
			t.Fatalf("%d parsers: %+v, want one row loaded in one batch and one rejected", parsers, run)
		}
	}
}
