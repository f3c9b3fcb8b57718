// Package sqlfn holds the SQL helpers pgts installs in the pgts schema of
// every database it manages, for people who query series tables with SQL:
// the forms of TimescaleDB's time_bucket, gap filling (pgts.buckets,
// pgts.locf, pgts.known, pgts.interpolate) and the first/last aggregates.
// They are plain SQL and PL/pgSQL (no extension), so pg_dump restores them
// and managed PostgreSQL runs them; docs/sql.md documents each one beside
// the TimescaleDB function it replaces.
//
// Glossary:
//
//	bucket        the interval [start, start + width) of the grid through
//	              the origin that holds a time; time_bucket returns start
//	origin        a point of the grid: Monday 2000-01-03 00:00 for widths
//	              without months, the month of 2000-01-01 for months
//	offset        shifts the grid: time_bucket(w, t - offset) + offset
//	known point   a (bucket, value) whose value is not NULL, which locf
//	              carries forward and interpolate draws lines between
//
// Install returns one idempotent script (CREATE OR REPLACE, IF NOT
// EXISTS); the catalog runs it as one of its migrations. A change to the
// helpers appends a new catalog migration running Install again, so that
// databases that already have them get the change.
package sqlfn

import (
	"embed"
	"fmt"
	"strings"
)

//go:embed time_bucket.sql bin.sql time_bucket_api.sql gapfill.sql
var files embed.FS

// order is the order in which the files run: each SQL function body is
// checked at creation, so what a body calls comes first.
var order = []string{"time_bucket.sql", "bin.sql", "time_bucket_api.sql", "gapfill.sql"}

// Install is the script that creates or replaces every helper in the
// pgts schema (which must exist). It runs in one transaction.
func Install() string {
	var b strings.Builder
	for _, name := range order {
		data, err := files.ReadFile(name)
		if err != nil {
			panic(fmt.Sprintf("sqlfn: embedded %s: %v", name, err)) // the embed directive names it
		}
		b.Write(data)
		b.WriteString("\n")
	}
	b.WriteString(firstLastSQL())
	return b.String()
}
