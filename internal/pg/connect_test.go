package pg_test

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestWrongPasswordSaysOnlyThat: with sslmode=prefer against a server
// without TLS, the refused TLS attempt is noise before the real reason.
func TestWrongPasswordSaysOnlyThat(t *testing.T) {
	st, err := pgtest.Cluster(t).Status()
	if err != nil {
		t.Fatal(err)
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword("postgres", "wrong"), Host: "127.0.0.1:" + strconv.Itoa(st.Info.Port), Path: "/postgres"}
	for name, open := range map[string]func() error{
		"Connect": func() error { _, err := pg.Connect(context.Background(), u.String()); return err },
		"NewPool": func() error { _, err := pg.NewPool(context.Background(), u.String(), 1); return err },
	} {
		err := open()
		var pgErr *pgconn.PgError
		if err == nil || !strings.Contains(err.Error(), "password authentication failed") || strings.Contains(err.Error(), "tls") ||
			!errors.As(err, &pgErr) || strings.Contains(err.Error(), "wrong") {
			t.Errorf("%s with a wrong password: %v", name, err)
		}
	}
}
