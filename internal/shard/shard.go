// Package shard spreads series tables over several PostgreSQL servers
// with PostgreSQL's own parts: declarative hash partitioning on a
// coordinator and postgres_fdw foreign tables, each pointing at a series
// table (range-partitioned by time, managed by package partition) on the
// shard server that holds it.
//
//	coordinator                        shard a                 shard b
//	m  (PARTITION BY HASH (device))
//	├── m_p0  FOREIGN ──postgres_fdw──> m_p0 (series table)
//	├── m_p1  FOREIGN ──────────────────────────────────────> m_p1
//	├── m_p2  FOREIGN ──────────────> m_p2
//	└── m_p3  FOREIGN ──────────────────────────────────────> m_p3
//	                                   └── m_p0_20240101 ...   (time partitions, local)
//
// Glossary:
//
//	coordinator  the database users query; it holds the parent table, the
//	             foreign tables and the placement of partitions (pgts.shard,
//	             pgts.sharded_table, pgts.shard_placement)
//	shard        a server (database) holding some of the partitions, each a
//	             series table; its pgts.shard_member says what it holds
//	partition    one of the N hash partitions (modulus N) of a sharded table;
//	             it lives whole on one shard, so a rebalance moves whole
//	             partitions
//	placement    partition → shard, set when the table is created
//	             (partition p on the p mod S-th shard by name), changed
//	             by Move
//
// The address and credentials of a shard live where postgres_fdw keeps
// them: the foreign server's options and the current user's user mapping.
// pgts never prints or logs the password (List shows host, port, database
// and user).
package shard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/pg"
)

// DefaultFetchSize is the postgres_fdw fetch_size of a shard's server:
// rows per round trip when a query reads raw rows from a shard (the
// default, 100, makes a full scan a round trip per 100 rows).
const DefaultFetchSize = 10000

// Shard is a shard server as recorded on the coordinator.
type Shard struct {
	Name     string // pgts' name, e.g. "a"
	Server   string // the postgres_fdw server, "pgts_shard_" + Name
	Host     string
	Port     string
	Database string
	User     string
	// connString includes the password; see ConnString.
	connString string
}

// ConnString returns a key=value connection string for connecting to the
// shard directly (the loader does), password included: never log it.
func (s Shard) ConnString() string { return s.connString }

// Address renders the shard without its password: user@host:port/db.
func (s Shard) Address() string {
	return fmt.Sprintf("%s@%s:%s/%s", s.User, s.Host, s.Port, s.Database)
}

// Coordinator manages shards and sharded tables from the coordinator's
// database. Its methods are safe for concurrent use (they share the pool).
type Coordinator struct {
	pool *pgxpool.Pool
	log  *slog.Logger
}

// New returns a Coordinator over the coordinator database's pool.
func New(pool *pgxpool.Pool, log *slog.Logger) *Coordinator {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Coordinator{pool: pool, log: log}
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)

// CheckName refuses shard names other than a lower-case letter followed
// by up to 39 lower-case letters, digits or underscores.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return &pg.UsageError{Err: fmt.Errorf("shard name %q: a lower-case letter, then up to 39 lower-case letters, digits or underscores", name)}
	}
	return nil
}

// ServerName is the postgres_fdw server of shard name.
func ServerName(name string) string { return "pgts_shard_" + name }

// target is a parsed shard URL.
type target struct {
	host, port, dbname, user, password, sslmode string
}

func parseTarget(raw string) (target, error) {
	if err := pg.CheckConnString(raw); err != nil {
		return target{}, err
	}
	cfg, err := pgx.ParseConfig(raw)
	if err != nil {
		return target{}, &pg.UsageError{Err: fmt.Errorf("shard URL %q: invalid", pg.Redact(raw))}
	}
	// Without sslmode (or with prefer or allow) pgx falls back from TLS to
	// plain on the same host: that is one host still.
	for _, fb := range cfg.Fallbacks {
		if fb.Host != cfg.Host || fb.Port != cfg.Port {
			return target{}, &pg.UsageError{Err: fmt.Errorf("shard URL %q names several hosts; give one", pg.Redact(raw))}
		}
	}
	t := target{host: cfg.Host, port: strconv.Itoa(int(cfg.Port)), dbname: cfg.Database, user: cfg.User, password: cfg.Password}
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" {
		t.sslmode = u.Query().Get("sslmode")
	} else {
		for _, f := range strings.Fields(raw) {
			if v, ok := strings.CutPrefix(f, "sslmode="); ok {
				t.sslmode = strings.Trim(v, "'")
			}
		}
	}
	if t.dbname == "" {
		return target{}, &pg.UsageError{Err: fmt.Errorf("shard URL %q names no database", pg.Redact(raw))}
	}
	return t, nil
}

// passwordRefused reports an authentication that failed for want of the
// right password.
func passwordRefused(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "28P01" { // invalid_password
		return true
	}
	return strings.Contains(err.Error(), "password authentication failed") || strings.Contains(err.Error(), "no password")
}

// kv quotes a libpq key=value value.
func kv(k, v string) string {
	return k + "='" + strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), `'`, `\'`) + "'"
}

func (t target) connString() string {
	parts := []string{kv("host", t.host), kv("port", t.port), kv("dbname", t.dbname), kv("user", t.user)}
	if t.password != "" {
		parts = append(parts, kv("password", t.password))
	}
	if t.sslmode != "" {
		parts = append(parts, kv("sslmode", t.sslmode))
	}
	return strings.Join(parts, " ")
}

// Add records shard name at rawURL: it connects to the shard (which must
// answer), installs pgts' catalog there, and creates (or updates) the
// postgres_fdw server and the current user's user mapping on the
// coordinator, then checks the coordinator's server reaches the shard
// through them. Adding a shard again with the same name updates its
// address and credentials. Errors never contain the password.
func (c *Coordinator) Add(ctx context.Context, name, rawURL string) (Shard, error) {
	if err := CheckName(name); err != nil {
		return Shard{}, err
	}
	t, err := parseTarget(rawURL)
	if err != nil {
		return Shard{}, err
	}
	direct, err := pg.Connect(ctx, t.connString())
	if err != nil && t.password == "" && passwordRefused(err) {
		return Shard{}, &pg.UsageError{Err: fmt.Errorf("shard %q asks for a password and the URL gives no password: give the URL with it, "+
			"postgresql://%s:PASSWORD@%s/%s (for a cluster started by pgts db start, pgts db url --tcp prints that URL, "+
			"password included; run it with that cluster's --data-dir): %w", name, t.user, net.JoinHostPort(t.host, t.port), t.dbname, err)}
	}
	if err != nil {
		return Shard{}, fmt.Errorf("shard %q is not reachable: %w", name, redactErr(err, t.password))
	}
	err = catalog.Migrate(ctx, direct)
	direct.Close(context.WithoutCancel(ctx)) //nolint:errcheck // done with it
	if err != nil {
		return Shard{}, fmt.Errorf("installing the pgts catalog on shard %q: %w", name, redactErr(err, t.password))
	}
	if err := catalog.Migrate(ctx, c.pool); err != nil {
		return Shard{}, err
	}
	srv := ServerName(name)
	opts := [][2]string{{"host", t.host}, {"port", t.port}, {"dbname", t.dbname},
		{"async_capable", "true"}, {"fetch_size", strconv.Itoa(DefaultFetchSize)}}
	if t.sslmode != "" {
		opts = append(opts, [2]string{"sslmode", t.sslmode})
	}
	umOpts := [][2]string{{"user", t.user}}
	if t.password != "" {
		umOpts = append(umOpts, [2]string{"password", t.password})
	}
	err = pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext('pgts.shard'))`, catalog.LockKey); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS postgres_fdw`); err != nil {
			return fmt.Errorf("installing postgres_fdw on the coordinator: %w", err)
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_foreign_server WHERE srvname = $1)`, srv).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			if _, err := tx.Exec(ctx, "CREATE SERVER "+pg.QuoteIdent(srv)+" FOREIGN DATA WRAPPER postgres_fdw OPTIONS ("+optionList(opts)+")"); err != nil {
				return fmt.Errorf("creating the foreign server of shard %q: %w", name, err)
			}
		} else {
			var have []string
			if err := tx.QueryRow(ctx, `SELECT coalesce(srvoptions, '{}') FROM pg_foreign_server WHERE srvname = $1`, srv).Scan(&have); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, "ALTER SERVER "+pg.QuoteIdent(srv)+" OPTIONS ("+alterList(opts, have)+")"); err != nil {
				return fmt.Errorf("updating the foreign server of shard %q: %w", name, err)
			}
		}
		if _, err := tx.Exec(ctx, "DROP USER MAPPING IF EXISTS FOR CURRENT_USER SERVER "+pg.QuoteIdent(srv)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "CREATE USER MAPPING FOR CURRENT_USER SERVER "+pg.QuoteIdent(srv)+" OPTIONS ("+optionList(umOpts)+")"); err != nil {
			return fmt.Errorf("creating the user mapping of shard %q: %w", name, redactErr(err, t.password))
		}
		if _, err := tx.Exec(ctx, `INSERT INTO pgts.shard (name, server_name) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, srv); err != nil {
			return err
		}
		return probe(ctx, tx, name, srv)
	})
	if err != nil {
		return Shard{}, redactErr(err, t.password)
	}
	c.log.Info("shard added", "shard", name, "server", srv, "address", fmt.Sprintf("%s@%s:%s/%s", t.user, t.host, t.port, t.dbname))
	return Shard{Name: name, Server: srv, Host: t.host, Port: t.port, Database: t.dbname, User: t.user, connString: t.connString()}, nil
}

// probe reads the shard's catalog version through postgres_fdw, inside
// tx (the probe's foreign table goes away with it): the coordinator's
// server must reach the shard with the options and mapping just made.
func probe(ctx context.Context, tx pgx.Tx, name, srv string) error {
	ft := pg.QuoteQualified(catalog.Schema, "shard_probe_"+name)
	if _, err := tx.Exec(ctx, "CREATE FOREIGN TABLE "+ft+" (version integer) SERVER "+pg.QuoteIdent(srv)+
		" OPTIONS (schema_name 'pgts', table_name 'schema_version')"); err != nil {
		return err
	}
	var v int
	if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+ft).Scan(&v); err != nil {
		return fmt.Errorf("the coordinator's server cannot reach shard %q through postgres_fdw (the address must be one the coordinator's server can reach): %w", name, err)
	}
	_, err := tx.Exec(ctx, "DROP FOREIGN TABLE "+ft)
	return err
}

// optionList renders OPTIONS (name 'value', ...).
func optionList(opts [][2]string) string {
	parts := make([]string, len(opts))
	for i, o := range opts {
		parts[i] = pg.QuoteIdent(o[0]) + " " + pg.QuoteLiteral(o[1])
	}
	return strings.Join(parts, ", ")
}

// alterList renders ALTER SERVER options: SET for those present, ADD for
// the others.
func alterList(opts [][2]string, have []string) string {
	present := map[string]bool{}
	for _, h := range have {
		k, _, _ := strings.Cut(h, "=")
		present[k] = true
	}
	parts := make([]string, len(opts))
	for i, o := range opts {
		verb := "ADD "
		if present[o[0]] {
			verb = "SET "
		}
		parts[i] = verb + pg.QuoteIdent(o[0]) + " " + pg.QuoteLiteral(o[1])
	}
	return strings.Join(parts, ", ")
}

// redactErr removes password from an error's text.
func redactErr(err error, password string) error {
	if err == nil || password == "" || !strings.Contains(err.Error(), password) {
		return err
	}
	return redacted{msg: strings.ReplaceAll(err.Error(), password, "xxxxx"), err: err}
}

type redacted struct {
	msg string
	err error
}

func (r redacted) Error() string { return r.msg }

// Unwrap keeps errors.Is/As working (SQLSTATE, usage errors); the wrapped
// error's text may hold the password, so print Error(), never the chain.
func (r redacted) Unwrap() error { return r.err }

// List returns the shards, by name, with their addresses read from the
// foreign servers and the current user's user mappings.
func (c *Coordinator) List(ctx context.Context) ([]Shard, error) {
	var present bool
	if err := c.pool.QueryRow(ctx, `SELECT to_regclass('pgts.shard') IS NOT NULL`).Scan(&present); err != nil {
		return nil, err
	}
	if !present {
		return nil, nil
	}
	rows, err := c.pool.Query(ctx, `SELECT s.name, s.server_name, coalesce(fs.srvoptions, '{}'), coalesce(um.umoptions, '{}')
		FROM pgts.shard s
		LEFT JOIN pg_foreign_server fs ON fs.srvname = s.server_name
		LEFT JOIN pg_user_mappings um ON um.srvid = fs.oid AND um.umuser IN (0, (SELECT oid FROM pg_roles WHERE rolname = current_user))
		ORDER BY s.name, um.umuser DESC`)
	if err != nil {
		return nil, fmt.Errorf("reading the shards: %w", err)
	}
	defer rows.Close()
	var out []Shard
	for rows.Next() {
		var s Shard
		var so, uo []string
		if err := rows.Scan(&s.Name, &s.Server, &so, &uo); err != nil {
			return nil, err
		}
		if len(out) > 0 && out[len(out)-1].Name == s.Name {
			continue // the user's own mapping came first
		}
		t := target{}
		for _, o := range so {
			k, v, _ := strings.Cut(o, "=")
			switch k {
			case "host":
				t.host = v
			case "port":
				t.port = v
			case "dbname":
				t.dbname = v
			case "sslmode":
				t.sslmode = v
			}
		}
		for _, o := range uo {
			k, v, _ := strings.Cut(o, "=")
			switch k {
			case "user":
				t.user = v
			case "password":
				t.password = v
			}
		}
		s.Host, s.Port, s.Database, s.User, s.connString = t.host, t.port, t.dbname, t.user, t.connString()
		out = append(out, s)
	}
	return out, rows.Err()
}

// ErrInUse is returned when removing a shard that holds partitions.
var ErrInUse = errors.New("the shard holds partitions")

// Remove drops shard name's user mapping and foreign server and its
// catalog row. A shard that holds partitions of a sharded table is
// refused (the shard's own data and catalog are left alone).
func (c *Coordinator) Remove(ctx context.Context, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := catalog.Migrate(ctx, c.pool); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext('pgts.shard'))`, catalog.LockKey); err != nil {
			return err
		}
		var srv string
		if err := tx.QueryRow(ctx, `SELECT server_name FROM pgts.shard WHERE name = $1`, name).Scan(&srv); errors.Is(err, pgx.ErrNoRows) {
			return &pg.UsageError{Err: fmt.Errorf("no shard %q (pgts shard list)", name)}
		} else if err != nil {
			return err
		}
		var tables []string
		rows, err := tx.Query(ctx, `SELECT DISTINCT table_schema || '.' || table_name FROM pgts.shard_placement WHERE shard = $1`, name)
		if err != nil {
			return err
		}
		tables, err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if len(tables) > 0 {
			sort.Strings(tables)
			return fmt.Errorf("removing shard %q: %w of %s", name, ErrInUse, strings.Join(tables, ", "))
		}
		for _, stmt := range []string{
			"DROP USER MAPPING IF EXISTS FOR CURRENT_USER SERVER " + pg.QuoteIdent(srv),
			"DROP SERVER IF EXISTS " + pg.QuoteIdent(srv),
		} {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("removing shard %q: %w", name, err)
			}
		}
		_, err = tx.Exec(ctx, `DELETE FROM pgts.shard WHERE name = $1`, name)
		return err
	})
}
