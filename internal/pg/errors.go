package pg

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// Retryable reports whether an operation that failed with err may be
// retried on a new connection without changing its meaning, provided the
// operation was a whole transaction that did not commit: lost connections,
// server shutdowns and restarts, serialization failures and deadlocks.
// Data errors (bad values, constraint violations) are permanent.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "40001", "40P01": // serialization_failure, deadlock_detected
			return true
		case "57P01", "57P02", "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
			return true
		case "53300": // too_many_connections
			return true
		}
		switch pgErr.Code[:2] {
		case "08": // connection exceptions
			return true
		}
		return false
	}
	if pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var connErr *pgconn.ConnectError
	return errors.As(err, &connErr)
}

// DataError reports whether err is the server refusing the data itself
// (SQLSTATE class 22 data exception or 23 integrity constraint violation),
// i.e. some rows of a batch are bad and the rest may be good.
func DataError(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	c := pgErr.Code[:2]
	return c == "22" || c == "23"
}

// SQLState returns the SQLSTATE of err, or "".
func SQLState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// connectError is a failed connection: when the server answered (a wrong
// password, a missing database), its message alone, without the earlier
// attempts pgx also lists (with sslmode=prefer, "tls error: server refused
// TLS connection" always comes first on a server without TLS). It unwraps
// to the full error.
type connectError struct {
	target string
	err    error
}

func (e *connectError) Error() string {
	var pgErr *pgconn.PgError
	if errors.As(e.err, &pgErr) {
		return "connecting to " + e.target + ": " + pgErr.Error()
	}
	return "connecting to " + e.target + ": " + e.err.Error()
}

func (e *connectError) Unwrap() error { return e.err }
