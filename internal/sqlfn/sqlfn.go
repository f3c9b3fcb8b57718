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
// EXISTS) that ends with pgts.sqlfn_version(), which returns Version. The
// catalog runs it as one of its migrations, and again whenever a
// database's installed version is lower than this build's (catalog.Migrate),
// so a change to the helpers reaches databases that already have them:
// whoever changes the SQL bumps Version (TestVersionCoversSQL insists).
// pg_dump keeps pgts.sqlfn_version() with the helpers it describes.
package sqlfn

import (
	"embed"
	"fmt"
	"strings"
)

//go:embed time_bucket.sql bin.sql time_bucket_api.sql gapfill.sql latest.sql
var files embed.FS

// order is the order in which the files run: each SQL function body is
// checked at creation, so what a body calls comes first.
var order = []string{"time_bucket.sql", "bin.sql", "time_bucket_api.sql", "gapfill.sql", "latest.sql"}

// Version numbers the helpers' SQL. Bump it with any change to the script
// Install returns (and record the script's new digest in
// TestVersionCoversSQL): databases with a lower version get the new script
// at their next catalog.Migrate. Version 1 is the first numbered one;
// databases without pgts.sqlfn_version() have the helpers of catalog
// migration 7 and count as version 0. Version 2: the transition
// functions of pgts.locf and pgts.known are PL/pgSQL (LANGUAGE sql ones
// start an executor per row).
const Version = 2

// InstalledVersionQuery returns the version of the helpers installed in a
// database: 0 when pgts.sqlfn_version() is missing (helpers older than
// the numbering, or none). It reads the catalog rather than calling the
// function, so it runs whether or not the function exists.
const InstalledVersionQuery = `SELECT coalesce((SELECT substring(prosrc FROM '[0-9]+')::integer FROM pg_proc
	WHERE oid = to_regprocedure('pgts.sqlfn_version()')), 0)`

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
	fmt.Fprintf(&b, `
CREATE OR REPLACE FUNCTION pgts.sqlfn_version() RETURNS integer
	LANGUAGE sql IMMUTABLE PARALLEL SAFE AS 'SELECT %d';
COMMENT ON FUNCTION pgts.sqlfn_version() IS 'Version of the SQL helpers installed in the pgts schema (time_bucket, buckets, locf, known, interpolate, first, last): pgts reinstalls them when its own are newer.';
`, Version)
	return b.String()
}
