// Package pg holds what every pgts command needs to talk to PostgreSQL:
// choosing the connection (flag, DATABASE_URL, libpq variables, or the
// embedded cluster), quoting identifiers, and classifying errors as
// retryable or permanent.
//
// Glossary:
//
//	source   where a connection string came from (see Source)
//	redacted a connection string with its password replaced by "xxxxx"
package pg

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Source says where a connection setting came from, in precedence order.
type Source int

const (
	// SourceNone means nothing was configured: the embedded cluster is used.
	SourceNone Source = iota
	// SourceFlag is the --db flag.
	SourceFlag
	// SourceDatabaseURL is the DATABASE_URL environment variable.
	SourceDatabaseURL
	// SourceLibpqEnv is the libpq environment (PGHOST, PGPORT, PGDATABASE,
	// PGUSER, PGSERVICE), together with PGPASSWORD, PGSSLMODE and ~/.pgpass.
	SourceLibpqEnv
	// SourceEmbedded is pgts' own private cluster.
	SourceEmbedded
)

func (s Source) String() string {
	switch s {
	case SourceFlag:
		return "--db flag"
	case SourceDatabaseURL:
		return "DATABASE_URL"
	case SourceLibpqEnv:
		return "libpq environment (PG* variables)"
	case SourceEmbedded:
		return "embedded cluster"
	default:
		return "none"
	}
}

// libpqSelectors are the variables whose presence means the user has chosen
// a server through the libpq environment. PGPASSWORD, PGSSLMODE and the like
// only qualify a choice, so they do not count on their own.
var libpqSelectors = []string{"PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGSERVICE"}

// Choice is the outcome of Resolve: a connection string and where it came
// from. ConnString is empty for SourceNone (and for SourceLibpqEnv, where
// pgx reads the environment itself).
type Choice struct {
	Source     Source
	ConnString string
}

// Resolve applies pgts' precedence: flag > DATABASE_URL > libpq variables >
// none (the caller then starts the embedded cluster). getenv is injected so
// the package never reads the process environment itself.
func Resolve(flag string, getenv func(string) string) (Choice, error) {
	if flag != "" {
		if err := CheckConnString(flag); err != nil {
			return Choice{}, fmt.Errorf("--db: %w", err)
		}
		return Choice{Source: SourceFlag, ConnString: flag}, nil
	}
	if u := getenv("DATABASE_URL"); u != "" {
		if err := CheckConnString(u); err != nil {
			return Choice{}, fmt.Errorf("DATABASE_URL: %w", err)
		}
		return Choice{Source: SourceDatabaseURL, ConnString: u}, nil
	}
	for _, k := range libpqSelectors {
		if getenv(k) != "" {
			return Choice{Source: SourceLibpqEnv}, nil
		}
	}
	return Choice{Source: SourceNone}, nil
}

// UsageError marks an error caused by what the user typed (a bad flag
// value, a malformed URL); commands exit with status 2 for it.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// IsUsage reports whether err is (or wraps) a UsageError.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

// CheckConnString validates a URL or key=value connection string without
// connecting. The returned error never contains the password.
func CheckConnString(s string) error {
	if strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") {
		if _, err := url.Parse(s); err != nil {
			return &UsageError{fmt.Errorf("malformed connection URL %q", Redact(s))}
		}
	} else if strings.Contains(s, "://") {
		return &UsageError{fmt.Errorf("connection URL %q: scheme must be postgres:// or postgresql://", Redact(s))}
	} else if !strings.Contains(s, "=") {
		return &UsageError{fmt.Errorf("connection string %q is neither a postgres:// URL nor key=value pairs", Redact(s))}
	}
	if _, err := pgx.ParseConfig(s); err != nil {
		return &UsageError{fmt.Errorf("invalid connection string %q: %s", Redact(s), redactErr(err, s))}
	}
	return nil
}

// redactErr returns err's text with the password of conn removed, for errors
// pgx builds around the raw string.
func redactErr(err error, conn string) string {
	msg := err.Error()
	if pw := password(conn); pw != "" {
		msg = strings.ReplaceAll(msg, pw, "xxxxx")
	}
	return msg
}

// Redact returns s with any password replaced by "xxxxx", for logs.
func Redact(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	if i := strings.Index(s, "://"); i >= 0 {
		// An unparsable URL: blank whatever stands between user: and @.
		rest := s[i+3:]
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			if colon := strings.IndexByte(rest[:at], ':'); colon >= 0 {
				return s[:i+3] + rest[:colon+1] + "xxxxx" + rest[at:]
			}
		}
		return s
	}
	if pw := password(s); pw != "" {
		return strings.ReplaceAll(s, pw, "xxxxx")
	}
	return s
}

// password extracts a password from a URL or key=value string, best effort.
func password(s string) string {
	if u, err := url.Parse(s); err == nil && u.Scheme != "" {
		if pw, ok := u.User.Password(); ok {
			return pw
		}
		return u.Query().Get("password")
	}
	for _, f := range strings.Fields(s) {
		if v, ok := strings.CutPrefix(f, "password="); ok {
			return strings.Trim(v, "'")
		}
	}
	return ""
}

// Describe renders a parsed config for the log: user@host:port/db, never
// the password.
func Describe(cfg *pgx.ConnConfig) string {
	return fmt.Sprintf("%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}
