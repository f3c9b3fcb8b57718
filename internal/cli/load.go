package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/embedded"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/records"
	"github.com/pgts/pgts/internal/shard"
)

type loadFlags struct {
	format, delimiter, null, columns string
	header                           bool
	workers, batchRows               int
	parsers                          int
	batchBytes                       string
	maxRecordBytes                   string
	text, asyncCommit                bool
	route                            string
	loadID                           string
	madeLoadID                       bool // loadID was made for a bulk load given none
	rejects                          string
	maxRejects                       int64
	batchLog                         string
	asJSON                           bool
	rejectsExitZero                  bool
	generate                         string
	timezone                         string
	bulk                             bool
	bulkMargin                       time.Duration
	onConflict                       string
	gen                              genFlags
}

func newLoadCmd(a *app) *cobra.Command {
	var f loadFlags
	cmd := &cobra.Command{
		Use:   "load TABLE [FILE ...|-]",
		Short: "Load rows into a table with parallel binary COPY",
		Long: `Load rows from files (CSV, TSV or PostgreSQL text format; gzip and zstd are
detected and decompressed), from stdin ("-"), or from an in-process generator
(--generate), into a series table or any plain table.

Values are parsed here, by the type of their target column, and sent with
binary COPY (text COPY for tables with a column type the encoder does not
know, with a notice). Rows of a series table are grouped into batches per
time partition and COPYed straight into that partition (created when
missing); --route parent leaves the routing to the server. --workers
connections pull batches from one queue; each batch is one transaction.
Input files are parsed and encoded on --parsers goroutines, in chunks cut
at record boundaries; the batches are the same with any number of parsers.

Values are read exactly as PostgreSQL's input functions read them (a test
compares the two over a large corpus): every date and time spelling the
server accepts, with abbreviations and zone names; a timestamptz written
without a zone is in the session's TimeZone, as in psql's COPY: the
database's or role's default (or PGTZ), unless --timezone names another.
Ambiguous dates such as 01/02/03 follow the database's DateStyle. Refused
although the server would take them: now, today, tomorrow, yesterday (the
time of the load), the abbreviations whose offset follows a zone's history
(MSK, SGT, ...), and POSIX zone specs with daylight-saving rules inside a
value.

Rows that cannot be parsed, have the wrong number of fields, or fall outside
the table's accepted time window are written to the rejects file (replaced
at the start of each run), a CSV file with columns source, line, column,
reason, record and record_form. For a regular uncompressed file the record
is the input line exactly as written, line end left out (record_form
input); for stdin, a pipe, a compressed file or --generate, where the
input cannot be read again, it is the row's fields re-serialised as CSV
(record_form csv; empty for a record that could not be parsed). A batch
the server refuses is sent again through a staging table that sets the
refused rows aside (duplicates of a unique key, check or foreign-key
violations; with the server's DETAIL and HINT), so its good rows still load.
The summary counts rows read, loaded and rejected, and they add up. A UTF-8
byte-order mark is dropped; UTF-16 input is refused.

With --load-id, the load is exactly-once: each batch commits with a ledger
row, and rerunning the same command after a crash or an interrupt loads only
what is missing. A load resumes when the rerun reads the same rows in the
same order (the files may be renamed, copied or touched; stdin must give the
same stream) into the same table and columns, with the same --format,
--delimiter, --null, --header, --batch-size, --batch-bytes, --text and
--route (--workers may change). Each batch's ledger row keeps a digest of
its rows: a rerun whose input differs is refused, naming the first differing
batch and its lines. One run of a load ID at a time; a second run says where
the first runs (pid and host).

With --on-conflict skip or update, a row whose unique key (the primary
key, or the table's only unique constraint; on a series table it includes
the time column) is stored already is not a reject: skip keeps the stored
row, update overwrites its other columns with the row's (of rows of one key
in the input, the last wins). Each batch goes through a temporary staging
table and INSERT ... ON CONFLICT; the summary counts rows inserted, updated
and kept. Tables with a unique key load live, also with --bulk.

Exit status: 0 all rows loaded; 3 the load completed with rejected rows
(--rejects-exit-zero: 0); 1 failure; 2 usage error; 130 interrupted. After a
completed load the partitions written are ANALYZEd.

With --bulk, history loads faster: a partition that does not exist yet and
ends before now - --bulk-margin is made as a standalone table, filled
without index maintenance, indexed once, then attached (ATTACH takes SHARE
UPDATE EXCLUSIVE on the table, which writers of other partitions do not
wait for). A partition of up to 1,000,000 rows is loaded by one worker in
one transaction (COPY FREEZE; other workers load other partitions); a larger
one by all workers, batch by batch. Its rows are invisible until it is
attached; a larger partition interrupted stays unattached and belongs to
its load ID alone: rerunning the load with the same --load-id (and --bulk)
finishes it, 'pgts loads abandon ID' drops it, and any other load into its
range is refused until then ('pgts table show' lists such partitions). A
--bulk load given no --load-id gets one, printed when it is interrupted.
Batches are cut the same way whatever order the input is in, so a --bulk
load resumes exactly. Partitions that exist, or are recent, load as usual. Input in time order loads fastest: a partition is
sent once rows of the next one come, and a row that comes after its
partition was sent waits for it to be attached and then loads as usual.
Tables with unique or exclusion constraints, foreign keys, triggers or
hash sub-partitions are loaded as usual, with a notice.`,
		Example: `  pgts load conditions data.csv --header
  zcat big.csv.gz | pgts load conditions - --columns time,device,temperature
  pgts load conditions part1.csv.zst part2.csv.zst --load-id nightly-2024-05-01 --workers 4
  pgts load conditions --generate conditions --batches 1000 --start 2024-01-01
  pgts load readings corrected.csv --header --on-conflict update --load-id fix-2024-05`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 {
				return usagef("pgts load needs a TABLE; see pgts load --help")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.generate == "" {
				for _, name := range genFlagNames {
					if cmd.Flags().Changed(name) {
						return usagef("--%s is a generator flag: it applies with --generate KIND only, not to input files or stdin", name)
					}
				}
			}
			return runLoad(cmd.Context(), a, f, args[0], args[1:])
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "csv", "input format: csv, tsv or text (PostgreSQL COPY text)")
	fl.StringVar(&f.delimiter, "delimiter", "", "field delimiter (default: comma for csv, tab otherwise)")
	fl.StringVar(&f.null, "null", "", `spelling of NULL (default: unquoted empty field for csv, \N otherwise)`)
	fl.BoolVar(&f.header, "header", false, "the first line names the columns (and maps them, unless --columns is given)")
	fl.StringVar(&f.columns, "columns", "", "target columns of the input fields, in order, e.g. time,device,temp (default: the table's columns)")
	fl.IntVar(&f.workers, "workers", runtime.NumCPU(), "parallel connections")
	fl.IntVar(&f.parsers, "parsers", 0, "goroutines parsing and encoding input files (default: GOMAXPROCS; 1 reads on one); batches are the same either way")
	fl.IntVar(&f.batchRows, "batch-size", 10000, "rows per batch (one transaction each)")
	fl.StringVar(&f.batchBytes, "batch-bytes", "32MB", "encoded bytes per batch, at most")
	fl.StringVar(&f.maxRecordBytes, "max-record-bytes", "", "longest input record accepted, line end excluded, e.g. 64MB; a longer one is rejected. "+
		"A record takes about "+maxRecordMemoryFactorText+" its size in memory while it loads (default: 1GB, what COPY accepts, or less on a machine with under "+defaultRecordMemoryText+" of memory: see README)")
	fl.BoolVar(&f.text, "text", false, "send text COPY instead of binary")
	fl.BoolVar(&f.asyncCommit, "async-commit", false, "commit batches with the server's synchronous_commit setting (default: on per batch, so a loaded batch survives a server crash)")
	fl.StringVar(&f.route, "route", "leaf", "series tables: COPY into each leaf partition (leaf) or into the parent (parent)")
	fl.StringVar(&f.loadID, "load-id", "", "make the load resumable and exactly-once under this name")
	fl.StringVar(&f.rejects, "rejects", "", "file for rejected rows (default: INPUT.rejects.csv next to each input; stderr for stdin and generators)")
	fl.Int64Var(&f.maxRejects, "max-rejects", -1, "abort once more than this many rows are rejected (-1: no limit)")
	fl.StringVar(&f.batchLog, "batch-log", "", "write one CSV line per batch to this file")
	fl.BoolVar(&f.asJSON, "json", false, "print the summary as JSON on stdout")
	fl.BoolVar(&f.rejectsExitZero, "rejects-exit-zero", false, "exit 0, not 3, when the load completes with rejected rows")
	fl.StringVar(&f.timezone, "timezone", "", "session TimeZone for timestamptz values written without a zone (default: the database's, as psql's COPY uses)")
	fl.BoolVar(&f.bulk, "bulk", false, "load partitions that do not exist yet and end before now - --bulk-margin as standalone tables, indexed once after their rows and then attached (their rows are invisible until then)")
	fl.StringVar(&f.onConflict, "on-conflict", "reject", "a row whose unique key (primary key or unique constraint, with the time column) is stored already: reject it, skip it (keep the stored row) or update the stored row's other columns")
	fl.DurationVar(&f.bulkMargin, "bulk-margin", copyload.DefaultBulkMargin, "with --bulk: how long before now a partition must end to be bulk-loaded")
	fl.StringVar(&f.generate, "generate", "", "load rows from a generator instead of files: "+strings.Join(genKinds(), ", "))
	f.gen.register(cmd)
	return cmd
}

func runLoad(ctx context.Context, a *app, f loadFlags, table string, files []string) error {
	if f.generate != "" && len(files) > 0 {
		return usagef("give input files or --generate, not both")
	}
	if f.generate != "" && f.columns != "" {
		return usagef("--columns maps input fields; a generator writes its own columns (%s), so --columns does not apply to --generate", f.generate)
	}
	if f.generate == "" && len(files) == 0 {
		return usagef("no input: give FILE arguments, - for stdin, or --generate KIND")
	}
	cfg := copyload.DefaultConfig()
	cfg.Workers, cfg.BatchRows, cfg.Text, cfg.LoadID, cfg.MaxRejects = f.workers, f.batchRows, f.text, f.loadID, f.maxRejects
	cfg.AsyncCommit = f.asyncCommit
	cfg.Bulk, cfg.BulkMargin = f.bulk, f.bulkMargin
	mode, err := copyload.ParseConflictMode(f.onConflict)
	if err != nil {
		return usagef("%v", err)
	}
	cfg.OnConflict = mode
	switch {
	case f.bulkMargin < 0:
		return usagef("--bulk-margin %s: must not be negative", f.bulkMargin)
	case f.bulkMargin == 0:
		cfg.BulkMargin = -1 // none (0 would be copyload's default)
	}
	cfg.Analyze = true
	bb, err := embedded.ParseSize(f.batchBytes)
	if err != nil {
		return usagef("--batch-bytes: %v", err)
	}
	cfg.BatchBytes = int(min(bb, 1<<31-1))
	switch f.route {
	case "leaf":
		cfg.Route = copyload.RouteLeaf
	case "parent":
		cfg.Route = copyload.RouteParent
	default:
		return usagef("--route %q: choose leaf or parent", f.route)
	}
	if err := cfg.Validate(); err != nil {
		return usagef("%v", err)
	}
	var ropts records.Options
	if f.generate == "" {
		if ropts, err = readerOptions(f); err != nil {
			return err
		}
	}
	pool, err := a.openDB(ctx, int32(cfg.Workers+2))
	if err != nil {
		return err
	}
	defer pool.Close()
	if st, err := shard.New(pool, a.log).Table(ctx, table); err == nil {
		return runShardedLoad(ctx, a, f, cfg, pool, st, files) // load_shard.go
	} else if !errors.Is(err, shard.ErrNotSharded) {
		return err
	}
	m := partition.NewManager(pool, a.log, time.Now)
	target, err := copyload.LookupTarget(ctx, pool, m, table)
	if err != nil {
		return err
	}
	zone := ""
	if f.generate == "" {
		zones, err := copyload.SessionZones(ctx, pool, f.timezone)
		if err != nil {
			return err
		}
		target.UseZones(zones)
		zone = zones.SessionZone()
		a.log.Info("reading dates and times", "timezone", zone)
	}

	var src copyload.Source
	var total int64 // rows (generator) or bytes (files) for the progress bar; 0 unknown
	var position func() int64
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	if f.generate != "" {
		g, err := f.gen.build(f.generate)
		if err != nil {
			return err
		}
		cfg.Fingerprint = "generator " + f.generate
		src = &copyload.GenSource{Name: f.generate, Gen: g}
		total = max(g.Rows(), 0)
	} else {
		if f.parsers < 0 || f.parsers > 256 {
			return usagef("--parsers %d: must be between 1 and 256 (0: GOMAXPROCS)", f.parsers)
		}
		fs := &copyload.FileSource{Parsers: f.parsers}
		if fs.Parsers == 0 {
			fs.Parsers = runtime.GOMAXPROCS(0)
		}
		var sources []records.Source
		for _, name := range files {
			rc, info, rd, err := openInput(a, name, ropts)
			if rc != nil {
				closers = append(closers, rc)
			}
			if err != nil {
				return err
			}
			fs.Inputs = append(fs.Inputs, copyload.Input{Name: info.Name, Reader: rd, Raw: info.ReaderAt()})
			sources = append(sources, info)
			if info.Size > 0 {
				total += info.Size
			}
		}
		if fs.Columns, err = mapColumns(target, f, fs.Inputs); err != nil {
			return err
		}
		cfg.Fingerprint = fmt.Sprintf("format=%v delimiter=%q quote=%q escape=%q null=%q header=%v strict=%v",
			ropts.Format, ropts.Delimiter, ropts.Quote, ropts.Escape, ropts.Null, ropts.Header, ropts.Strict)
		if zone != "" {
			cfg.Fingerprint += fmt.Sprintf(" timezone=%q", zone) // the zone moves rows between partitions
		}
		position = func() int64 {
			var p int64
			for _, s := range sources {
				p += s.Progress()
			}
			return p
		}
		src = fs
	}

	rejects, err := newRejectSinks(a, f, files)
	if err != nil {
		return err
	}
	defer rejects.Close()
	cfg.Rejects = rejects
	var batchLog *copyload.BatchLog
	if f.batchLog != "" {
		bl, err := os.Create(f.batchLog)
		if err != nil {
			return fmt.Errorf("--batch-log: %w", err)
		}
		defer bl.Close()
		batchLog = copyload.NewBatchLog(bl)
	}
	var committed atomic.Int64
	cfg.OnBatch = func(b copyload.BatchInfo) {
		committed.Add(b.Rows + b.Rejected)
		if batchLog != nil {
			batchLog.Write(b)
		}
	}
	cfg.Logger = a.log
	loader, err := copyload.New(pool, m, target, cfg)
	if err != nil {
		return usagef("%v", err)
	}
	a.log.Info("loading", "table", target.String(), "workers", cfg.Workers, "batch_size", cfg.BatchRows, "binary", loader.Binary())

	bar := newProgress(a, total, position == nil, committed.Load, position)
	sum, runErr := loader.Run(ctx, src)
	bar.stop()

	// a load refused before it read anything (a configuration error) has
	// nothing to sum up: the error says it all
	if runErr == nil || sum.Read > 0 || sum.Skipped > 0 || errors.Is(runErr, context.Canceled) {
		printLoadSummary(a, target, cfg, sum)
	}
	if bt := loader.BulkTimes(); bt.Partitions > 0 {
		fmt.Fprintf(a.env.Stderr, "  bulk path: %d %s attached; index builds %s, attaches %s\n", bt.Partitions,
			plural(int64(bt.Partitions), "partition", "partitions"), bt.Index.Round(time.Millisecond), bt.Attach.Round(time.Millisecond))
	}
	if f.loadID == "" && sum.LoadID != "" {
		// A bulk load given no ID got one: only under it can a rerun
		// finish what this one left.
		f.loadID, f.madeLoadID = sum.LoadID, true
	}
	if len(sum.Pending) > 0 {
		var rows int64
		names := make([]string, len(sum.Pending))
		for i, p := range sum.Pending {
			rows += p.Rows
			names[i] = p.Name
		}
		n := int64(len(sum.Pending))
		fmt.Fprintf(a.env.Stderr, "  %s more %s committed in %d %s not attached yet (%s): not visible until this load completes\n",
			commas(rows), plural(rows, "row", "rows"), n, plural(n, "partition", "partitions"), strings.Join(names, ", "))
		fmt.Fprintf(a.env.Stderr, "  to finish: rerun this command with --load-id %s; to give up instead: pgts loads abandon %s\n", f.loadID, f.loadID)
	}
	return loadOutcome(a, f, sum, sum.Rejected, a.withServerLog(runErr))
}

// openInput opens one input of a load: a file (decompressed as its magic
// bytes say) or "-" for stdin, and its record reader. The closer is
// returned whenever the input was opened, for the caller to close; a
// reader refused for its options is a usage error.
func openInput(a *app, name string, ropts records.Options) (io.ReadCloser, records.Source, *records.Reader, error) {
	var rc io.ReadCloser
	var info records.Source
	var err error
	if name == "-" {
		rc, info, err = records.OpenStream(a.env.Stdin, "stdin")
	} else {
		rc, info, err = records.Open(name)
	}
	if err != nil {
		return nil, info, nil, err
	}
	rd, err := records.NewReader(rc, ropts)
	if err != nil {
		return rc, info, nil, usagef("%v", err)
	}
	return rc, info, rd, nil
}

// loadOutcome ends a load command: the summary as JSON when asked, then
// the exit status — interrupted, failed, completed with rejects (unless
// --rejects-exit-zero) or ok.
func loadOutcome(a *app, f loadFlags, sum any, rejected int64, runErr error) error {
	if f.asJSON {
		if err := writeJSON(a, sum); err != nil {
			return err
		}
	}
	if runErr != nil {
		if errors.Is(runErr, context.Canceled) {
			switch {
			case f.madeLoadID:
				a.log.Warn("interrupted; rerun the same command with --load-id "+f.loadID+" to load the rest", "load_id", f.loadID)
			case f.loadID != "":
				a.log.Warn("interrupted; rerun the same command to load the rest", "load_id", f.loadID)
			}
			return ErrInterrupted
		}
		return runErr
	}
	if rejected > 0 && !f.rejectsExitZero {
		return fmt.Errorf("%w: %s %s rejected, see the rejects file (exit status 3; --rejects-exit-zero exits 0)",
			ErrRejected, commas(rejected), plural(rejected, "row", "rows"))
	}
	return nil
}

// ErrRejected reports a load that completed with rejected rows (exit
// status 3): every row was stored or rejected with its reason.
var ErrRejected = errors.New("load completed with rejects")

func readerOptions(f loadFlags) (records.Options, error) {
	var format records.Format
	var err error
	switch strings.ToLower(f.format) {
	case "csv":
		format = records.CSV
	case "tsv":
		format = records.TSV
	case "text":
		format = records.Text
	default:
		return records.Options{}, usagef("--format %q: choose csv, tsv or text", f.format)
	}
	o := records.DefaultOptions(format)
	o.Header = f.header
	if f.delimiter != "" {
		d := f.delimiter
		if d == `\t` {
			d = "\t"
		}
		if len(d) != 1 {
			return o, usagef("--delimiter %q: must be one byte", f.delimiter)
		}
		o.Delimiter = d[0]
	}
	if f.null != "" {
		o.Null = f.null
	}
	if o.MaxRecordBytes, err = maxRecordBytes(f.maxRecordBytes); err != nil {
		return o, err
	}
	o.MaxRecordName = "--max-record-bytes"
	if err := o.Validate(); err != nil {
		return o, usagef("%v", err)
	}
	return o, nil
}

// mapColumns maps input fields to target columns: --columns, else the
// header of the first input, else the table's columns in order.
func mapColumns(t *copyload.Target, f loadFlags, inputs []copyload.Input) ([]int, error) {
	var names []string
	switch {
	case f.columns != "":
		for _, c := range strings.Split(f.columns, ",") {
			n, err := pg.ColumnName(strings.TrimSpace(c))
			if err != nil {
				return nil, usagef("--columns %q: %v", f.columns, err)
			}
			names = append(names, n)
		}
	case f.header && len(inputs) > 0:
		// Reading the header consumes nothing but the first record.
		if _, err := inputs[0].Reader.Next(); err != nil && !errors.Is(err, io.EOF) {
			var rerr *records.RecordError
			if !errors.As(err, &rerr) {
				return nil, err
			}
		}
		inputs[0].Reader.Unread()
		names = inputs[0].Reader.Header()
	default:
		idx := make([]int, len(t.Columns))
		for i := range idx {
			idx[i] = i
		}
		return idx, nil
	}
	idx := make([]int, len(names))
	seen := map[int]bool{}
	for i, n := range names {
		ci := t.ColumnIndex(n)
		if ci < 0 {
			return nil, usagef("column %q is not in %s", n, t)
		}
		if seen[ci] {
			return nil, usagef("column %q is given twice", n)
		}
		seen[ci] = true
		idx[i] = ci
	}
	return idx, nil
}

// printLoadSummary writes the human summary on stderr, beside the log (a
// --json summary goes to stdout).
func printLoadSummary(a *app, t *copyload.Target, cfg copyload.Config, s copyload.Summary) {
	state := "loaded"
	if s.Interrupted {
		state = "interrupted; committed"
	} else if !s.Complete {
		state = "failed; committed"
	}
	fmt.Fprintf(a.env.Stderr, "%s %s %s into %s in %s (%s rows/s)\n", state, commas(s.Loaded), plural(s.Loaded, "row", "rows"), t, s.Elapsed.Round(time.Millisecond), commas(int64(s.RowsPerSec)))
	fmt.Fprintf(a.env.Stderr, "  read %s = loaded %s + rejected %s + already loaded %s + not loaded %s\n",
		commas(s.Read), commas(s.Loaded), commas(s.Rejected), commas(s.Skipped), commas(s.NotLoaded))
	if cfg.OnConflict != copyload.ConflictReject {
		fmt.Fprintf(a.env.Stderr, "  on conflict %s: loaded %s = inserted %s + updated %s + stored rows kept %s\n",
			cfg.OnConflict, commas(s.Loaded), commas(s.Inserted), commas(s.Updated), commas(s.Kept))
	}
	fmt.Fprintf(a.env.Stderr, "  %s COPY, route %s, %s, %s (%s skipped), %s written (%d created), %s sent, %s, %s split\n",
		s.Format, s.Route, count(int64(cfg.Workers), "worker", "workers"), count(s.Batches, "batch", "batches"), commas(s.SkippedB),
		count(s.Partitions, "partition", "partitions"), s.Created, humanBytes(s.Bytes), count(s.Retries, "retry", "retries"), count(s.Splits, "batch", "batches"))
}

func commas(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// rejectSinks routes rejects to --rejects, or to INPUT.rejects.csv per
// input (created on the first reject), or to stderr for stdin and
// generators.
type rejectSinks struct {
	mu     sync.Mutex
	a      *app
	single *copyload.CSVRejects
	files  map[string]string // source display name → rejects path
	open   map[string]*copyload.CSVRejects
	closer []io.Closer
	stderr *copyload.CSVRejects
}

func newRejectSinks(a *app, f loadFlags, files []string) (*rejectSinks, error) {
	s := &rejectSinks{a: a, files: map[string]string{}, open: map[string]*copyload.CSVRejects{}}
	if f.rejects != "" {
		w, err := os.Create(f.rejects)
		if err != nil {
			return nil, fmt.Errorf("--rejects: %w", err)
		}
		s.closer = append(s.closer, w)
		s.single = copyload.NewCSVRejects(w)
		return s, nil
	}
	for _, name := range files {
		if name != "-" {
			// Replaced at the start of each run: the file created on the
			// first reject holds this run's rejects only.
			path := name + ".rejects.csv"
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				return nil, fmt.Errorf("removing the rejects file of an earlier run: %w", err)
			}
			s.files[name] = path
		}
	}
	return s, nil
}

func (s *rejectSinks) Reject(r copyload.Reject) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, err := s.sink(r.Source)
	if err != nil {
		return err
	}
	return w.Reject(r)
}

// RejectBatch writes a batch's rejects, one flush per destination run.
func (s *rejectSinks) RejectBatch(rs []copyload.Reject) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < len(rs); {
		w, err := s.sink(rs[i].Source)
		if err != nil {
			return err
		}
		j := i + 1
		for j < len(rs) && rs[j].Source == rs[i].Source {
			j++
		}
		if err := w.RejectBatch(rs[i:j]); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// sink returns the writer of a source's rejects. s.mu is held.
func (s *rejectSinks) sink(source string) (*copyload.CSVRejects, error) {
	if s.single != nil {
		return s.single, nil
	}
	path, ok := s.files[source]
	if !ok {
		if s.stderr == nil {
			s.stderr = copyload.NewCSVRejects(s.a.env.Stderr)
		}
		return s.stderr, nil
	}
	w, ok := s.open[path]
	if !ok {
		f, err := os.Create(path)
		if err != nil {
			return nil, fmt.Errorf("creating rejects file: %w", err)
		}
		s.closer = append(s.closer, f)
		s.a.log.Warn("rows rejected; see the rejects file", "file", filepath.Clean(path))
		w = copyload.NewCSVRejects(f)
		s.open[path] = w
	}
	return w, nil
}

func (s *rejectSinks) Close() {
	for _, c := range s.closer {
		c.Close()
	}
}

// count writes n and the noun's form for it: "1 partition", "2,000 rows".
func count[N int | int64](n N, one, many string) string {
	return commas(int64(n)) + " " + plural(int64(n), one, many)
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
