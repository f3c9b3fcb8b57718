package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/pgtest"
)

// runIn is run with stdin.
func runIn(t *testing.T, env map[string]string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] },
		IsTerminal: func() bool { return false }}
	root := NewRoot(e)
	root.SetArgs(args)
	ctx := context.Background()
	err := root.ExecuteContext(ctx)
	code = ExitCode(ctx, err)
	if err != nil {
		errb.WriteString("pgts: " + err.Error() + "\n")
	}
	return out.String(), errb.String(), code
}

// loadTable makes a one-day series table m accepting the last 30 days.
func loadTable(t *testing.T) (env map[string]string, db string) {
	t.Helper()
	db = pgtest.DB(t)
	env = map[string]string{"DATABASE_URL": db}
	if _, stderr, code := run(t, env, "table", "create", "m", "--columns", "time timestamptz not null, device int not null, v float8",
		"--interval", "1 day", "--accept-past", "30 days"); code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	return env, db
}

// textRows renders n rows starting at day: time, device, value.
func textRows(day time.Time, from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "%s\t%d\t%d.5\n", day.Add(time.Duration(i)*time.Second).Format("2006-01-02 15:04:05Z07:00"), i%7, i)
	}
	return b.String()
}

func countM(t *testing.T, db string) (n, distinct int64) {
	t.Helper()
	pool := pgtest.PoolFor(t, db)
	if err := pool.QueryRow(context.Background(), `SELECT count(*), count(DISTINCT (time, device)) FROM m`).Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	return n, distinct
}

// TestResumeRefusesOtherStdin: a reused --load-id on a stream with other
// rows is refused, naming the first differing batch and its lines, and
// loads nothing (it used to skip the second day as "already loaded").
func TestResumeRefusesOtherStdin(t *testing.T) {
	env, db := loadTable(t)
	day1 := time.Now().UTC().Truncate(24 * time.Hour).Add(-48 * time.Hour)
	args := []string{"load", "m", "-", "--format", "text", "--load-id", "s", "--batch-size", "10", "--workers", "2"}
	if _, stderr, code := runIn(t, env, textRows(day1, 0, 30), args...); code != 0 {
		t.Fatalf("first load: %d %s", code, stderr)
	}
	_, stderr, code := runIn(t, env, textRows(day1.Add(24*time.Hour), 0, 30), args...)
	if code != 1 || !strings.Contains(stderr, "batch 1 ") || !strings.Contains(stderr, "stdin lines 1-10") {
		t.Fatalf("second day under the same load ID: exit %d\n%s", code, stderr)
	}
	if n, _ := countM(t, db); n != 30 {
		t.Fatalf("%d rows stored, want the first day's 30", n)
	}
	// The same rows again resume (nothing to do).
	if _, stderr, code := runIn(t, env, textRows(day1, 0, 30), args...); code != 0 || !strings.Contains(stderr, "already loaded 30") {
		t.Fatalf("same stdin again: exit %d\n%s", code, stderr)
	}
}

// TestResumeRenamedFile: a file's load resumes under another path (a copy,
// ./name, a touch) as long as the rows are the same; it used to be refused
// by path, size and modification time.
func TestResumeRenamedFile(t *testing.T) {
	env, db := loadTable(t)
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(-48 * time.Hour)
	dir := t.TempDir()
	part := filepath.Join(dir, "part.tsv")
	whole := filepath.Join(dir, "whole.tsv")
	if err := os.WriteFile(part, []byte(textRows(day, 0, 20)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(whole, []byte(textRows(day, 0, 45)), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--format", "text", "--load-id", "f", "--batch-size", "10", "--workers", "1"}
	if _, stderr, code := run(t, env, append([]string{"load", "m", part}, args...)...); code != 0 {
		t.Fatalf("first load: %d %s", code, stderr)
	}
	// The whole file under another name: the first 20 rows are the same.
	_, stderr, code := run(t, env, append([]string{"load", "m", whole}, args...)...)
	if code != 0 || !strings.Contains(stderr, "loaded 25 + rejected 0 + already loaded 20") {
		t.Fatalf("resume under another name: exit %d\n%s", code, stderr)
	}
	now := time.Now()
	if err := os.Chtimes(whole, now, now); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, env, append([]string{"load", "m", whole}, args...)...); code != 0 || !strings.Contains(stderr, "already loaded 45") {
		t.Fatalf("after touch: exit %d\n%s", code, stderr)
	}
	if n, d := countM(t, db); n != 45 || d != 45 {
		t.Fatalf("%d rows (%d distinct), want 45", n, d)
	}
	// Another batch size changes batch boundaries: refused, saying why.
	_, stderr, code = run(t, env, "load", "m", whole, "--format", "text", "--load-id", "f", "--batch-size", "7")
	if code != 1 || !strings.Contains(stderr, "batch_rows=10") || !strings.Contains(stderr, "batch_rows=7") {
		t.Fatalf("other batch size: exit %d\n%s", code, stderr)
	}
}

// TestLoadExitStatusRejects: a load that completes with rejects exits 3
// (it used to exit 0 even when every row was rejected), 0 with
// --rejects-exit-zero; a clean load exits 0.
func TestLoadExitStatusRejects(t *testing.T) {
	env, _ := loadTable(t)
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(-48 * time.Hour)
	in := filepath.Join(t.TempDir(), "in.tsv")
	if err := os.WriteFile(in, []byte(textRows(day, 0, 3)+"not a time\t1\t1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, env, "load", "m", in, "--format", "text"); code != 3 || !strings.Contains(stderr, "1 row rejected") {
		t.Fatalf("load with a reject: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := run(t, env, "load", "m", in, "--format", "text", "--rejects-exit-zero"); code != 0 {
		t.Fatalf("--rejects-exit-zero: exit %d\n%s", code, stderr)
	}
	if err := os.WriteFile(in, []byte(textRows(day, 10, 3)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, env, "load", "m", in, "--format", "text"); code != 0 {
		t.Fatalf("clean load: exit %d\n%s", code, stderr)
	}
}

// TestLoadAnalyzesAndReplacesRejects: after a load the partitions written
// have statistics (table show used to say 0 rows until autovacuum), and
// a run replaces the rejects file of an earlier run (a clean run used to
// leave the old one in place).
func TestLoadAnalyzesAndReplacesRejects(t *testing.T) {
	env, db := loadTable(t)
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(-48 * time.Hour)
	in := filepath.Join(t.TempDir(), "in.tsv")
	if err := os.WriteFile(in, []byte(textRows(day, 0, 50)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in+".rejects.csv", []byte("stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, env, "load", "m", in, "--format", "text"); code != 0 {
		t.Fatalf("load: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(in + ".rejects.csv"); !os.IsNotExist(err) {
		t.Fatalf("the earlier run's rejects file is still there: %v", err)
	}
	pool := pgtest.PoolFor(t, db)
	var tuples float64
	if err := pool.QueryRow(context.Background(), `SELECT sum(c.reltuples) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'm'::regclass AND c.reltuples > 0`).Scan(&tuples); err != nil {
		t.Fatal(err)
	}
	if tuples != 50 {
		t.Fatalf("the partitions' statistics count %v rows, want 50", tuples)
	}
}

// TestLoadBOMHeader: a CSV with a UTF-8 byte-order mark and a header
// loads (the mark used to make the first column "\ufefftime", aborting
// the load); UTF-16 input is refused with a reason.
func TestLoadBOMHeader(t *testing.T) {
	env, db := loadTable(t)
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(-48 * time.Hour)
	in := filepath.Join(t.TempDir(), "in.csv")
	data := "\ufefftime,device,v\n" + day.Format("2006-01-02 15:04:05Z07:00") + ",1,2.5\n"
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, env, "load", "m", in, "--header"); code != 0 {
		t.Fatalf("load: exit %d\n%s", code, stderr)
	}
	if n, _ := countM(t, db); n != 1 {
		t.Fatalf("%d rows stored", n)
	}
	if err := os.WriteFile(in, []byte("\xff\xfet\x00i\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, env, "load", "m", in, "--header"); code != 1 || !strings.Contains(stderr, "UTF-16") {
		t.Fatalf("UTF-16: exit %d\n%s", code, stderr)
	}
}

// TestLoadBulk: with --bulk, the two missing days of history are loaded
// as standalone tables and attached, and today's rows (a partition that
// ends after now - --bulk-margin) go the live way; a negative margin is a
// usage error.
func TestLoadBulk(t *testing.T) {
	env, db := loadTable(t)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	in := filepath.Join(t.TempDir(), "in.tsv")
	rows := textRows(today.Add(-72*time.Hour), 0, 100) + textRows(today.Add(-48*time.Hour), 0, 100) + textRows(today, 0, 10)
	if err := os.WriteFile(in, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, env, "load", "m", in, "--format", "text", "--bulk", "--bulk-margin", "-1h"); code != 2 || !strings.Contains(stderr, "--bulk-margin") {
		t.Fatalf("negative margin: exit %d\n%s", code, stderr)
	}
	_, stderr, code := run(t, env, "load", "m", in, "--format", "text", "--bulk")
	if code != 0 || !strings.Contains(stderr, "bulk path: 2 partitions attached") || !strings.Contains(stderr, "loaded 210 rows") {
		t.Fatalf("load --bulk: exit %d\n%s", code, stderr)
	}
	if n, distinct := countM(t, db); n != 210 || distinct != 210 {
		t.Fatalf("%d rows (%d distinct), want 210", n, distinct)
	}
}

// TestLoadRejectsAsWritten: the rejects file of a file holds each refused
// record as it is in the file (record_form "input"), with one parser or
// several; a gzip file and stdin, which cannot be read again, hold the
// fields re-serialised (record_form "csv").
func TestLoadRejectsAsWritten(t *testing.T) {
	env, _ := loadTable(t)
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(-48 * time.Hour)
	good := day.Format("2006-01-02T15:04:05Z") + `,1,"2.50"`
	bad := day.Format("2006-01-02 15:04:05+00") + `, 2x ,"1e3"` // device: not an integer
	lateDay := day.AddDate(1, 0, 0).Format("2006-01-02")
	late := `"` + lateDay + `",3,1.50` // outside the window
	data := good + "\r\n" + bad + "\r\n" + late + "\r\n"
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(data))
	zw.Close()
	if err := os.WriteFile(in+".gz", gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rejects := func(t *testing.T, text string) map[string][2]string {
		t.Helper()
		recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
		if err != nil || len(recs) != 3 || len(recs[0]) != 6 || recs[0][5] != "record_form" {
			t.Fatalf("rejects file (%v):\n%s", err, text)
		}
		m := map[string][2]string{}
		for _, r := range recs[1:] {
			m[r[1]] = [2]string{r[4], r[5]}
		}
		return m
	}
	for _, parsers := range []string{"1", "3"} {
		if _, stderr, code := run(t, env, "load", "m", in, "--parsers", parsers, "--rejects-exit-zero"); code != 0 {
			t.Fatalf("--parsers %s: exit %d\n%s", parsers, code, stderr)
		}
		b, err := os.ReadFile(in + ".rejects.csv")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := rejects(t, string(b)), map[string][2]string{"2": {bad, "input"}, "3": {late, "input"}}; !maps.Equal(got, want) {
			t.Errorf("--parsers %s: rejects %q, want %q", parsers, got, want)
		}
	}
	if _, stderr, code := run(t, env, "load", "m", in+".gz", "--rejects-exit-zero"); code != 0 {
		t.Fatalf("gzip: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(in + ".gz.rejects.csv")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{"2": {day.Format("2006-01-02 15:04:05+00") + ", 2x ,1e3", "csv"}, "3": {lateDay + ",3,1.50", "csv"}}
	if got := rejects(t, string(b)); !maps.Equal(got, want) {
		t.Errorf("gzip: rejects %q, want %q", got, want)
	}
	_, stderr, code := runIn(t, env, data, "load", "m", "-", "--rejects-exit-zero")
	if code != 0 {
		t.Fatalf("stdin: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "source,line,column,reason,record,record_form") || !strings.Contains(stderr, ",csv\n") || strings.Contains(stderr, ",input\n") {
		t.Fatalf("stdin's rejects:\n%s", stderr)
	}
}
