package shard

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzParseTarget: a shard URL (or key=value string) built around a
// password either parses or is refused, and the password never shows in
// the error nor in the address.
func FuzzParseTarget(f *testing.F) {
	f.Add("u", "127.0.0.1", "5432", "db", "sslmode=require", false)
	f.Add("u", "h1,h2", "", "db", "", false)
	f.Add("u", "h", "notaport", "db", "", true)
	f.Add("u", "h", "5", "", "x=y", true)
	f.Add("", "/tmp/sock", "", "d'b", "connect_timeout=2", true)
	f.Fuzz(func(t *testing.T, user, host, port, db, extra string, keyValue bool) {
		const pw = "Pw0rd-Secret"
		for _, s := range []string{user, host, port, db, extra} {
			if strings.Contains(s, pw) {
				return // the password would show as something else
			}
		}
		var raw string
		if keyValue {
			raw = strings.Join([]string{kv("user", user), kv("host", host), kv("port", port), kv("dbname", db), kv("password", pw), extra}, " ")
		} else {
			u := url.URL{Scheme: "postgresql", User: url.UserPassword(user, pw), Host: host, Path: "/" + db, RawQuery: extra}
			if port != "" {
				u.Host += ":" + port
			}
			raw = u.String()
		}
		tg, err := parseTarget(raw)
		if err != nil {
			if strings.Contains(err.Error(), pw) {
				t.Fatalf("error shows the password: %v", err)
			}
			return
		}
		s := Shard{Host: tg.host, Port: tg.port, Database: tg.dbname, User: tg.user}
		if strings.Contains(s.Address(), pw) {
			t.Fatalf("address shows the password: %s", s.Address())
		}
		if tg.dbname == "" {
			t.Fatalf("%q parsed without a database", raw)
		}
	})
}

func BenchmarkParseTarget(b *testing.B) {
	raw := "postgresql://pgts:secret@10.0.0.11:5432/metrics?sslmode=require"
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parseTarget(raw); err != nil {
			b.Fatal(err)
		}
	}
}
