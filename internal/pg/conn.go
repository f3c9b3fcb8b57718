package pg

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// sessionParams are set on every pgts connection: times are exchanged in
// UTC and ISO spelling so that text bounds and values parse the same way
// whatever the server's defaults are.
var sessionParams = map[string]string{
	"TimeZone":      "UTC",
	"DateStyle":     "ISO, YMD",
	"IntervalStyle": "postgres",
}

// ParseConfig parses a connection string (empty means the libpq
// environment only) and applies pgts' session settings.
func ParseConfig(connString string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		return nil, &UsageError{fmt.Errorf("invalid connection string %q: %s", Redact(connString), redactErr(err, connString))}
	}
	applySession(cfg)
	return cfg, nil
}

func applySession(cfg *pgx.ConnConfig) {
	for k, v := range sessionParams {
		cfg.RuntimeParams[k] = v
	}
	if cfg.RuntimeParams["application_name"] == "" {
		cfg.RuntimeParams["application_name"] = "pgts"
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 15 * time.Second
	}
}

// Connect opens one connection with pgts' session settings.
func Connect(ctx context.Context, connString string) (*pgx.Conn, error) {
	cfg, err := ParseConfig(connString)
	if err != nil {
		return nil, err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, &connectError{target: Describe(cfg), err: err}
	}
	return conn, nil
}

// NewPool opens a pool of at most maxConns connections with pgts' session
// settings.
func NewPool(ctx context.Context, connString string, maxConns int32) (*pgxpool.Pool, error) {
	pcfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, &UsageError{fmt.Errorf("invalid connection string %q: %s", Redact(connString), redactErr(err, connString))}
	}
	applySession(pcfg.ConnConfig)
	if maxConns > 0 {
		pcfg.MaxConns = maxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, &connectError{target: Describe(pcfg.ConnConfig), err: err}
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, &connectError{target: Describe(pcfg.ConnConfig), err: err}
	}
	return pool, nil
}

// ExecOne runs one statement over the extended protocol, which cannot carry
// a second statement: use it for SQL that includes text from a user (a
// column list), so that "...; DROP TABLE x" is an error, not a command.
func ExecOne(ctx context.Context, conn *pgx.Conn, sql string) error {
	_, err := conn.PgConn().ExecParams(ctx, sql, nil, nil, nil, nil).Close()
	return err
}
