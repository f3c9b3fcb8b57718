package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/pgtest"
)

func TestMain(m *testing.M) {
	// Benchmarks that run pgts as a child process (bench serve) run this
	// test binary with PGTS_CLI_CHILD=1: it is then pgts itself.
	if os.Getenv("PGTS_CLI_CHILD") == "1" {
		root := NewRoot(OSEnv())
		root.SetArgs(os.Args[1:])
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := root.ExecuteContext(ctx)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "pgts:", err)
		}
		os.Exit(ExitCode(ctx, err))
	}
	pgtest.Main(m)
}

// run executes pgts in-process with the given environment variables.
func run(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] },
		IsTerminal: func() bool { return false }}
	root := NewRoot(e)
	root.SetArgs(args)
	ctx := context.Background()
	err := root.ExecuteContext(ctx)
	code = ExitCode(ctx, err)
	if c, ok := ExitStatus(err); ok {
		code = c
	}
	if err != nil {
		errb.WriteString("pgts: " + err.Error() + "\n")
	}
	return out.String(), errb.String(), code
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{
		{"--bogus"},
		{"nosuchcommand"},
		{"table", "list", "--db", "mysql://u@h/db"},
		{"table", "list", "--db", "postgres://u:secret@h:notaport/db"},
		{"db", "destroy", "--data-dir", t.TempDir()},
		{"db", "tune", "--memory", "lots"},
		{"table", "create"},
		{"load", "t", "--generate", "conditions", "--workers", "0"},
	} {
		_, stderr, code := run(t, nil, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, code, stderr)
		}
		if strings.Contains(stderr, "secret") {
			t.Errorf("%v: password printed: %q", args, stderr)
		}
		if lines := strings.Count(strings.TrimSpace(stderr), "\n"); lines > 0 && !strings.Contains(stderr, "Usage") {
			t.Errorf("%v: reason spans %d lines: %q", args, lines+1, stderr)
		}
	}
}

func TestTune(t *testing.T) {
	out, _, code := run(t, nil, "db", "tune", "--memory", "16GB", "--cpus", "8")
	if code != 0 || !strings.Contains(out, "shared_buffers") || !strings.Contains(out, "= 4GB") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
}

func TestVersion(t *testing.T) {
	out, _, code := run(t, nil, "--version")
	if code != 0 || !strings.HasPrefix(out, "pgts version ") {
		t.Fatalf("--version: %d %q", code, out)
	}
}

func TestTableCommands(t *testing.T) {
	db := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": db}
	_, stderr, code := run(t, env, "table", "create", `"Odd Name"`, "--columns", "time timestamptz not null, device int, v float8",
		"--interval", "1 day", "--premake", "2", "--retention", "30 days", "--index-on", "device, time")
	if code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	if !strings.Contains(stderr, "database: DATABASE_URL") {
		t.Errorf("the log does not say which database was chosen: %q", stderr)
	}
	out, stderr, code := run(t, env, "table", "show", `"Odd Name"`, "--json")
	if code != 0 {
		t.Fatalf("show: %d %s", code, stderr)
	}
	var j tableJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("show --json: %v\n%s", err, out)
	}
	if j.Table != "public.Odd Name" || j.Interval != "1 day" || j.PartitionCount != 3 || len(j.Partitions) != 3 || j.Retention != "30 days" {
		t.Fatalf("show = %+v", j)
	}
	out, _, code = run(t, env, "table", "list")
	if code != 0 || !strings.Contains(out, "public.Odd Name") {
		t.Fatalf("list: %d %q", code, out)
	}
	_, stderr, code = run(t, env, "table", "create", "bad", "--columns", "time timestamptz", "--interval", "1 fortnight")
	if code != 2 || !strings.Contains(stderr, "not a PostgreSQL interval") {
		t.Fatalf("1 fortnight: %d %q", code, stderr)
	}
	_, stderr, code = run(t, env, "table", "create", "bad", "--columns", "time timestamptz", "--interval", "0 days")
	if code != 2 {
		t.Fatalf("0 days: %d %q", code, stderr)
	}
	_, _, code = run(t, env, "table", "drop", `"Odd Name"`)
	if code != 2 {
		t.Fatalf("drop without --yes: %d", code)
	}
	_, stderr, code = run(t, env, "table", "drop", "nosuch", "--yes")
	if code != 1 || !strings.Contains(stderr, "nosuch") {
		t.Fatalf("drop nosuch: %d %q", code, stderr)
	}
	out, _, code = run(t, env, "retention", "--dry-run")
	if code != 0 || !strings.Contains(out, "would drop 0") {
		t.Fatalf("retention --dry-run: %d %q", code, out)
	}
	_, stderr, code = run(t, env, "maintain")
	if code != 0 || !strings.Contains(stderr, "maintained") {
		t.Fatalf("maintain: %d %q", code, stderr)
	}
	_, _, code = run(t, env, "table", "drop", `"Odd Name"`, "--yes")
	if code != 0 {
		t.Fatalf("drop: %d", code)
	}
}

// TestLoadCommand loads a CSV file whose header orders the columns
// differently from the table, with a bad row, then the same rows from
// stdin in text format, then generated rows, and checks what is stored.
func TestLoadCommand(t *testing.T) {
	db := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": db}
	now := time.Now().UTC().Truncate(time.Second)
	if _, stderr, code := run(t, env, "table", "create", "m", "--columns", "time timestamptz not null, device int not null, v float8",
		"--interval", "1 day", "--accept-past", "7 days"); code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	ts := func(d time.Duration) string { return now.Add(d).Format("2006-01-02 15:04:05Z07:00") }
	data := "v,time,device\n1.5," + ts(-time.Hour) + ",1\n2.5," + ts(-2*time.Hour) + ",oops\n" + "3.5," + ts(-30*24*time.Hour) + ",3\n"
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, env, "load", "m", in, "--header", "--json")
	if code != 3 { // completed with rejects
		t.Fatalf("load: %d %s", code, stderr)
	}
	var sum struct {
		Read     int64 `json:"rows_read"`
		Loaded   int64 `json:"rows_loaded"`
		Rejected int64 `json:"rows_rejected"`
		Complete bool  `json:"complete"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("load --json: %v\n%s", err, out)
	}
	if sum.Read != 3 || sum.Loaded != 1 || sum.Rejected != 2 || !sum.Complete {
		t.Fatalf("summary = %+v", sum)
	}
	rej, err := os.ReadFile(in + ".rejects.csv")
	if err != nil {
		t.Fatalf("default rejects file: %v", err)
	}
	if !strings.Contains(string(rej), "in.csv,3,device,") || !strings.Contains(string(rej), "in.csv,4,time,") {
		t.Fatalf("rejects file:\n%s", rej)
	}

	// Text format from stdin, columns named on the command line.
	var o, e bytes.Buffer
	stdin := ts(-3*time.Hour) + "\t7\t\\N\n"
	root := NewRoot(Env{Stdin: strings.NewReader(stdin), Stdout: &o, Stderr: &e, Getenv: func(k string) string { return env[k] },
		IsTerminal: func() bool { return false }})
	root.SetArgs([]string{"load", "m", "-", "--format", "text", "--columns", "time,device,v"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("load from stdin: %v\n%s", err, e.String())
	}

	if _, stderr, code := run(t, env, "load", "m", "--generate", "nosuch"); code != 2 {
		t.Fatalf("unknown generator: exit %d %s", code, stderr)
	}
	if _, stderr, code := run(t, env, "load", "m", in, "--columns", "time,nosuch,v"); code != 2 || !strings.Contains(stderr, "nosuch") {
		t.Fatalf("unknown column: exit %d %s", code, stderr)
	}

	pool := pgtest.PoolFor(t, db)
	var n, nullV int
	var sumDev int64
	if err := pool.QueryRow(context.Background(), `SELECT count(*), count(*) FILTER (WHERE v IS NULL), sum(device) FROM m`).Scan(&n, &nullV, &sumDev); err != nil {
		t.Fatal(err)
	}
	if n != 2 || nullV != 1 || sumDev != 8 {
		t.Fatalf("stored %d rows (%d NULL v, devices sum %d), want 2, 1, 8", n, nullV, sumDev)
	}
}

func TestTuneWALMinimal(t *testing.T) {
	out, _, code := run(t, nil, "db", "tune", "--memory", "16GB", "--wal-minimal")
	if code != 0 || !strings.Contains(out, "wal_level") || !strings.Contains(out, "= minimal") || !strings.Contains(out, "max_wal_senders") {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
}
