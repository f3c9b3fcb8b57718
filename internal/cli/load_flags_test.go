package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLoadGeneratorFlagsNeedGenerate: a generator flag with file input is
// a usage error naming it (it used to be ignored silently).
func TestLoadGeneratorFlagsNeedGenerate(t *testing.T) {
	env, db := loadTable(t)
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(-48 * time.Hour)
	in := filepath.Join(t.TempDir(), "in.tsv")
	if err := os.WriteFile(in, []byte(textRows(day, 0, 3)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flag := range [][]string{{"--batches", "5"}, {"--seed", "7"}, {"--devices", "10"}, {"--rows", "5"}, {"--start", "2024-01-01"}, {"--width", "3"}} {
		_, stderr, code := run(t, env, append([]string{"load", "m", in, "--format", "text"}, flag...)...)
		if code != 2 || !strings.Contains(stderr, flag[0]) || !strings.Contains(stderr, "--generate") {
			t.Errorf("load FILE %s: exit %d\n%s", strings.Join(flag, " "), code, stderr)
		}
	}
	if n, _ := countM(t, db); n != 0 {
		t.Fatalf("%d rows loaded by refused commands", n)
	}
}

// TestLoadColumnsErrorsNameColumns: a bad --columns value is called a
// column name (it used to be a "table name"), an empty entry is named,
// and a qualified name is refused, not cut to its last part.
func TestLoadColumnsErrorsNameColumns(t *testing.T) {
	env, _ := loadTable(t)
	in := filepath.Join(t.TempDir(), "in.tsv")
	if err := os.WriteFile(in, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for cols, want := range map[string]string{
		"time,,v":          `--columns "time,,v": column name is empty`,
		`time,"device,v`:   `column name "\"device" has an unterminated quote`,
		"time,m.device,v":  `column name "m.device" has 2 parts`,
		"time, device ,v ": "", // spaces around names are fine
	} {
		_, stderr, code := run(t, env, "load", "m", in, "--format", "text", "--columns", cols)
		if want == "" {
			if code != 0 {
				t.Errorf("--columns %q: exit %d\n%s", cols, code, stderr)
			}
			continue
		}
		if code != 2 || !strings.Contains(stderr, want) || strings.Contains(stderr, "table name") {
			t.Errorf("--columns %q: exit %d, want 2 and %q\n%s", cols, code, want, stderr)
		}
	}
}

// TestLoadSummarySingular: one of a thing is not "1 partitions".
func TestLoadSummarySingular(t *testing.T) {
	env, _ := loadTable(t)
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(-48 * time.Hour)
	in := filepath.Join(t.TempDir(), "in.tsv")
	if err := os.WriteFile(in, []byte(textRows(day, 0, 3)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := run(t, env, "load", "m", in, "--format", "text", "--workers", "1")
	if code != 0 || !strings.Contains(stderr, "1 worker, 1 batch (0 skipped), 1 partition written (1 created)") {
		t.Fatalf("load: exit %d\n%s", code, stderr)
	}
}
