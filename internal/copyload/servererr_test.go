package copyload

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestExplainServerErrors: a full disk, an out-of-memory and a lost
// connection are named, with the server's detail and hint and what to do
// (the SQLSTATE and hint used to be dropped).
func TestExplainServerErrors(t *testing.T) {
	disk := &pgconn.PgError{Severity: "ERROR", Code: "53100", Message: `could not extend file "base/5/16384": No space left on device`,
		Hint: "Check free disk space."}
	oom := &pgconn.PgError{Severity: "ERROR", Code: "53200", Message: "out of shared memory", Hint: "You might need to increase max_locks_per_transaction."}
	for _, c := range []struct {
		err  error
		want []string
	}{
		{disk, []string{"disk is full", "No space left", "hint: Check free disk space.", "SQLSTATE 53100", "Free space", "--load-id"}},
		{oom, []string{"out of memory", "hint: You might need to increase max_locks_per_transaction.", "SQLSTATE 53200", "--workers"}},
		{io.ErrUnexpectedEOF, []string{"connection to the server was lost", "its log"}},
	} {
		err := (&Loader{}).batchErr(&batch{seq: 4, lines: []int64{10, 20}}, c.err)
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q lacks %q", c.err, err, w)
			}
		}
		if !errors.Is(err, c.err) {
			t.Errorf("%v is not wrapped", c.err)
		}
	}
	plain := &pgconn.PgError{Code: "23505", Message: "duplicate"}
	if err := explain(plain); err != plain {
		t.Errorf("a data error was rewritten: %v", err)
	}
}
