package pg

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolvePrecedence(t *testing.T) {
	full := map[string]string{"DATABASE_URL": "postgres://u@h/db", "PGHOST": "h2"}
	for _, tc := range []struct {
		name string
		flag string
		env  map[string]string
		want Source
	}{
		{"flag wins", "postgres://x@y/z", full, SourceFlag},
		{"key=value flag", "host=y dbname=z", full, SourceFlag},
		{"DATABASE_URL next", "", full, SourceDatabaseURL},
		{"libpq env", "", map[string]string{"PGHOST": "h2"}, SourceLibpqEnv},
		{"PGSERVICE counts", "", map[string]string{"PGSERVICE": "svc"}, SourceLibpqEnv},
		{"PGPASSWORD alone does not", "", map[string]string{"PGPASSWORD": "pw", "PGSSLMODE": "require"}, SourceNone},
		{"nothing", "", nil, SourceNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Resolve(tc.flag, env(tc.env))
			if err != nil || c.Source != tc.want {
				t.Fatalf("Resolve = %+v, %v; want %v", c, err, tc.want)
			}
		})
	}
}

func TestBadConnStrings(t *testing.T) {
	for _, s := range []string{"mysql://u@h/db", "justaword", "postgres://u:secret@h:notaport/db", "host=h port=x password=secret"} {
		_, err := Resolve(s, env(nil))
		if err == nil || !IsUsage(err) {
			t.Errorf("Resolve(%q) = %v, want a usage error", s, err)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("error leaks the password: %v", err)
		}
	}
	_, err := Resolve("", env(map[string]string{"DATABASE_URL": "nope"}))
	if err == nil || !strings.HasPrefix(err.Error(), "DATABASE_URL") {
		t.Errorf("bad DATABASE_URL: %v", err)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@h/db":          "postgres://u:xxxxx@h/db",
		"postgres://u@h/db?password=secret": "postgres://u@h/db?password=xxxxx",
		"host=h password=secret dbname=d":   "host=h password=xxxxx dbname=d",
		"postgres://u@h/db":                 "postgres://u@h/db",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestQuoting(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:                `"plain"`,
		`we"ird`:               `"we""ird"`,
		`x"; drop table y; --`: `"x""; drop table y; --"`,
		`ünï cödé`:             `"ünï cödé"`,
	} {
		if got := QuoteIdent(in); got != want {
			t.Errorf("QuoteIdent(%q) = %s, want %s", in, got, want)
		}
	}
	if got := QuoteLiteral(`it's \x`); got != `E'it''s \\x'` {
		t.Errorf("QuoteLiteral = %s", got)
	}
	if got := QuoteQualified("s", "t"); got != `"s"."t"` {
		t.Errorf("QuoteQualified = %s", got)
	}
}

func TestCheckIdent(t *testing.T) {
	if err := CheckIdent("table", "select"); err != nil {
		t.Errorf("reserved word refused: %v", err)
	}
	for _, bad := range []string{"", strings.Repeat("x", 64), "a\x00b", "tab\there", string([]byte{0xff})} {
		if err := CheckIdent("table", bad); err == nil {
			t.Errorf("CheckIdent(%q) accepted", bad)
		}
	}
	if err := CheckIdent("table", strings.Repeat("é", 31)); err != nil { // 62 bytes
		t.Errorf("62-byte name refused: %v", err)
	}
}

func TestSplitQualified(t *testing.T) {
	for _, tc := range []struct{ in, schema, name string }{
		{"conditions", "", "conditions"},
		{"Conditions", "", "conditions"},
		{`"Conditions"`, "", "Conditions"},
		{"public.t", "public", "t"},
		{`"my.schema"."t""x"`, "my.schema", `t"x`},
		{`s."a b"`, "s", "a b"},
	} {
		s, n, err := SplitQualified(tc.in)
		if err != nil || s != tc.schema || n != tc.name {
			t.Errorf("SplitQualified(%q) = %q, %q, %v", tc.in, s, n, err)
		}
	}
	for _, bad := range []string{"", "a.", ".a", "a.b.c", `"open`, `a"b`, `"a"b`} {
		if _, _, err := SplitQualified(bad); err == nil {
			t.Errorf("SplitQualified(%q) accepted", bad)
		}
	}
}

func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "40001"}, true},
		{&pgconn.PgError{Code: "57P01"}, true},
		{&pgconn.PgError{Code: "08006"}, true},
		{&pgconn.PgError{Code: "23505"}, false},
		{&pgconn.PgError{Code: "22P02"}, false},
		{fmt.Errorf("copy: %w", io.ErrUnexpectedEOF), true},
		{errors.New("something else"), false},
		{nil, false},
	} {
		if got := Retryable(tc.err); got != tc.want {
			t.Errorf("Retryable(%v) = %v", tc.err, got)
		}
	}
	if !DataError(&pgconn.PgError{Code: "23505"}) || DataError(&pgconn.PgError{Code: "40001"}) {
		t.Error("DataError classes")
	}
}
