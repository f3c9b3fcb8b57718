package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/pgtest"
)

// TestLoadRecordsOverOneMiB: a record longer than 1 MiB loads, as with
// COPY (it used to be refused: "record longer than 1048576 bytes"), from a
// file with several parsers and from stdin; --max-record-bytes lowers the
// bound, and a record over it is rejected with a reason naming the flag.
func TestLoadRecordsOverOneMiB(t *testing.T) {
	db := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": db}
	if _, stderr, code := run(t, env, "table", "create", "docs", "--columns", "time timestamptz not null, device int not null, body text",
		"--interval", "1 day", "--accept-past", "30 days"); code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(-48 * time.Hour)
	big := strings.Repeat("x", 3<<20)
	var b strings.Builder
	for i, body := range []string{"small", big, "small again"} {
		fmt.Fprintf(&b, "%s\t%d\t%s\n", day.Add(time.Duration(i)*time.Second).Format(time.RFC3339), i, body)
	}
	in := filepath.Join(t.TempDir(), "in.tsv")
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	pool := pgtest.PoolFor(t, db)
	check := func(what string, rows, longest int64) {
		t.Helper()
		var n, l int64
		if err := pool.QueryRow(context.Background(), `SELECT count(*), coalesce(max(length(body)), 0) FROM docs`).Scan(&n, &l); err != nil {
			t.Fatal(err)
		}
		if n != rows || l != longest {
			t.Fatalf("%s: %d rows, longest body %d; want %d rows, longest %d", what, n, l, rows, longest)
		}
		if _, err := pool.Exec(context.Background(), `TRUNCATE docs`); err != nil {
			t.Fatal(err)
		}
	}
	if _, stderr, code := run(t, env, "load", "docs", in, "--format", "text", "--parsers", "2"); code != 0 {
		t.Fatalf("file: exit %d\n%s", code, stderr)
	}
	check("file", 3, int64(len(big)))
	if _, stderr, code := runIn(t, env, b.String(), "load", "docs", "-", "--format", "text"); code != 0 {
		t.Fatalf("stdin: exit %d\n%s", code, stderr)
	}
	check("stdin", 3, int64(len(big)))

	_, stderr, code := run(t, env, "load", "docs", in, "--format", "text", "--max-record-bytes", "1MiB")
	if code != 3 || !strings.Contains(stderr, "1 row rejected") {
		t.Fatalf("--max-record-bytes 1MiB: exit %d\n%s", code, stderr)
	}
	check("--max-record-bytes 1MiB", 2, int64(len("small again")))
	rejects, err := os.ReadFile(in + ".rejects.csv")
	if err != nil || !strings.Contains(string(rejects), "record longer than 1048576 bytes (--max-record-bytes)") {
		t.Fatalf("rejects file: %v\n%.300s", err, rejects)
	}
	if _, stderr, code := run(t, env, "load", "docs", in, "--format", "text", "--max-record-bytes", "2GiB"); code != 2 || !strings.Contains(stderr, "--max-record-bytes") {
		t.Fatalf("--max-record-bytes 2GiB: exit %d\n%s", code, stderr)
	}
}
