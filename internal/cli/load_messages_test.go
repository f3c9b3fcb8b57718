package cli

import (
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
)

// The loader's messages for a generator load that cannot start: the
// generator is named once, no empty summary precedes the error, and
// --columns, which a generator cannot honour, is refused instead of
// silently ignored.
func TestGenerateLoadMessages(t *testing.T) {
	db := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": db}
	if _, stderr, code := run(t, env, "table", "create", "few", "--columns", "time timestamptz not null, device int not null",
		"--interval", "1 day"); code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	_, stderr, code := run(t, env, "load", "few", "--generate", "conditions", "--batches", "1")
	if code == 0 {
		t.Fatalf("loading conditions into a table without its columns succeeded:\n%s", stderr)
	}
	if strings.Contains(stderr, "generator generator") {
		t.Errorf("the generator is named twice:\n%s", stderr)
	}
	if !strings.Contains(stderr, "generator conditions writes column") {
		t.Errorf("the error does not name the generator and the column:\n%s", stderr)
	}
	if strings.Contains(stderr, "route ,") || strings.Contains(stderr, "read 0 =") {
		t.Errorf("an empty summary precedes the configuration error:\n%s", stderr)
	}

	_, stderr, code = run(t, env, "load", "few", "--generate", "conditions", "--batches", "1", "--columns", "time,device")
	if code != 2 || !strings.Contains(stderr, "--columns") {
		t.Errorf("--columns with --generate: exit %d, want 2 and a word on --columns:\n%s", code, stderr)
	}
}
