package shard

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/pgtest"
)

// TestAddPlainURLs: the URL a user types, without sslmode, is accepted
// (it used to be refused: "names several hosts; give one", pgx's TLS
// fallback taken for a second host); without a password, for a server
// that asks for one, the error says what to give and where a pgts
// cluster's password is found.
func TestAddPlainURLs(t *testing.T) {
	ctx := context.Background()
	c := New(pgtest.Pool(t), testLog(t))
	u, err := url.Parse(pgtest.Servers(t, 1)[0])
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Del("sslmode")
	u.RawQuery = q.Encode()
	if _, err := c.Add(ctx, "plain", u.String()); err != nil {
		t.Fatalf("shard add %s: %v", pg.Redact(u.String()), err)
	}
	u.User = url.User(u.User.Username())
	_, err = c.Add(ctx, "nopw", u.String())
	if err == nil || !strings.Contains(err.Error(), "gives no password") || !strings.Contains(err.Error(), "pgts db url --tcp") {
		t.Fatalf("shard add without a password: %v; want what to give", err)
	}
}
