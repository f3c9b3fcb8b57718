// Package copyload loads rows into PostgreSQL with COPY: rows are parsed
// and encoded client-side (binary COPY, or text COPY for column types the
// encoder does not know), routed to the leaf time partition of a series
// table, grouped into batches, and sent by N worker connections that pull
// batches from one bounded queue, each batch one transaction.
//
//	source ──rows──> router ──batches──> queue (bounded) ──> worker 1 ─COPY─> leaf partition
//	 (files, gen)     │ time → partition                 └─> worker N ─COPY─>
//	                  └─> rejects (parse errors, outside the window)
//
// Glossary:
//
//	batch     up to BatchRows rows (and BatchBytes bytes) for one partition,
//	          numbered in input order; one transaction
//	ledger    pgts.load_batch: with a load ID, each batch's row is committed
//	          in the batch's own transaction, so a rerun skips exactly the
//	          batches that committed (exactly-once across crashes)
//	digest    SHA-256 of a batch as sent (table and encoded rows), kept in
//	          its ledger row: a rerun refuses input whose batch differs
//	reject    a row set aside with its source, line, column and reason
//	split     a batch the server refuses for bad data is sent again through
//	          a staging table that sets the refused rows aside (isolate,
//	          conflict.go); the rest commits
package copyload

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/copyenc"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// Column is one column of the target table.
type Column struct {
	Name    string
	Type    copyenc.TypeInfo
	NotNull bool
	Codec   copyenc.Codec // TextPassthrough when the type has no binary codec
}

// Target is the table a load writes into.
type Target struct {
	Schema, Name string
	Columns      []Column         // all insertable columns, in table order
	Series       *partition.Table // nil for a plain table
	binaryOK     bool             // every column has a binary codec
	zones        *copyenc.Zones   // how dates and times are read (nil: UTC); see UseZones
	unknownTypes []string         // types without a codec
}

// Qualified returns the quoted schema.name.
func (t *Target) Qualified() string { return pg.QuoteQualified(t.Schema, t.Name) }

func (t *Target) String() string { return t.Schema + "." + t.Name }

// BinaryOK reports whether every column can be sent in binary; when not,
// UnknownTypes lists the types that forced text COPY.
func (t *Target) BinaryOK() bool         { return t.binaryOK }
func (t *Target) UnknownTypes() []string { return t.unknownTypes }

// ColumnIndex returns the index of the named column, or -1.
func (t *Target) ColumnIndex(name string) int {
	for i, c := range t.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// LookupTarget reads the table's columns and, when it is a series table,
// its partitioning. name may be schema-qualified.
func LookupTarget(ctx context.Context, db catalog.DB, m *partition.Manager, name string) (*Target, error) {
	series, err := m.Table(ctx, name)
	var nst *partition.NotSeriesTableError
	switch {
	case err == nil:
	case errors.As(err, &nst):
		series = nil
	default:
		return nil, err
	}
	schema, rel, err := pg.SplitQualified(name)
	if err != nil {
		return nil, err
	}
	if series != nil {
		schema, rel = series.Schema, series.Name
	}
	q := pg.QuoteIdent(rel)
	if schema != "" {
		q = pg.QuoteQualified(schema, rel)
	}
	rows, err := db.Query(ctx, `SELECT n.nspname::text, c.relname::text, a.attname::text, format_type(a.atttypid, a.atttypmod),
			a.atttypid::int8, t.typelem::int8, coalesce(format_type(t.typelem, NULL), ''), a.attnotnull
		FROM pg_attribute a
		JOIN pg_class c ON c.oid = a.attrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_type t ON t.oid = a.atttypid
		WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
		ORDER BY a.attnum`, q)
	if err != nil {
		return nil, fmt.Errorf("reading the columns of %s: %w", name, err)
	}
	defer rows.Close()
	t := &Target{Series: series, binaryOK: true}
	for rows.Next() {
		var c Column
		var oid, elem int64
		if err := rows.Scan(&t.Schema, &t.Name, &c.Name, &c.Type.Name, &oid, &elem, &c.Type.ElemName, &c.NotNull); err != nil {
			return nil, err
		}
		c.Type.OID, c.Type.ElemOID = uint32(oid), uint32(elem)
		if codec, ok := copyenc.Lookup(c.Type); ok {
			c.Codec = codec
		} else {
			t.binaryOK = false
			t.unknownTypes = append(t.unknownTypes, c.Type.Name)
			c.Codec = copyenc.TextPassthrough()
		}
		t.Columns = append(t.Columns, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(t.Columns) == 0 {
		return nil, fmt.Errorf("table %q does not exist (or has no columns)", name)
	}
	return t, nil
}

// columnList renders a quoted column list.
func columnList(cols []Column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = pg.QuoteIdent(c.Name)
	}
	return strings.Join(names, ", ")
}
