package copyload

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgts/pgts/internal/pg"
)

// ServerError is a failure of the server's resources or of the
// connection to it, named for the user with the server's own DETAIL and
// HINT and what to do. It wraps the original error.
type ServerError struct {
	What   string // "the server's disk is full", ...
	Advice string // what to do
	Err    error
}

func (e *ServerError) Error() string {
	var b strings.Builder
	b.WriteString(e.What)
	b.WriteString(": ")
	var pgErr *pgconn.PgError
	if errors.As(e.Err, &pgErr) {
		b.WriteString(pgErr.Message)
		if pgErr.Detail != "" {
			b.WriteString("; detail: " + pgErr.Detail)
		}
		if pgErr.Hint != "" {
			b.WriteString("; hint: " + pgErr.Hint)
		}
		b.WriteString(" (SQLSTATE " + pgErr.Code + ")")
	} else {
		b.WriteString(e.Err.Error())
	}
	if e.Advice != "" {
		b.WriteString(". " + e.Advice)
	}
	return b.String()
}

func (e *ServerError) Unwrap() error { return e.Err }

const resumeAdvice = "; with --load-id, rerunning the same command resumes where this run stopped"

// explain names err when it is a resource or connection failure (disk
// full 53100, out of memory 53200, too many connections, a shutdown, a
// lost connection); other errors come back as they are.
func explain(err error) error {
	if err == nil {
		return nil
	}
	var se *ServerError
	if errors.As(err, &se) {
		return err
	}
	switch code := pg.SQLState(err); {
	case code == "53100":
		return &ServerError{What: "the server's disk is full", Err: err,
			Advice: "Free space where the server keeps its data and WAL (or grow the volume)" + resumeAdvice}
	case code == "53200":
		return &ServerError{What: "the server ran out of memory", Err: err,
			Advice: "Lower --workers or --batch-size, or give the server more memory (or max_locks_per_transaction, when the hint names it)" + resumeAdvice}
	case code == "53300":
		return &ServerError{What: "the server has no connection slot left", Err: err,
			Advice: "Lower --workers or raise the server's max_connections" + resumeAdvice}
	case code == "57P01" || code == "57P02" || code == "57P03":
		return &ServerError{What: "the server shut down or is restarting", Err: err,
			Advice: "Start it again (its log says why it stopped)" + resumeAdvice}
	case strings.HasPrefix(code, "08") || (code == "" && pg.Retryable(err)):
		return &ServerError{What: "the connection to the server was lost", Err: err,
			Advice: "The server may have crashed or been stopped (its log says why: a full disk or the out-of-memory killer are common)" + resumeAdvice}
	}
	return err
}

// retryReason is a short name of a transient failure for the retry log.
func retryReason(err error) string {
	switch code := pg.SQLState(err); {
	case code == "40001":
		return "serialization failure"
	case code == "40P01":
		return "deadlock"
	case code == "53300":
		return "too many connections"
	case code == "57P01" || code == "57P02" || code == "57P03":
		return "server shutdown or restart"
	case errors.Is(err, errUnknownOutcome):
		return "connection lost during COMMIT"
	case strings.HasPrefix(code, "08") || code == "":
		return "connection lost"
	default:
		return "SQLSTATE " + code
	}
}
